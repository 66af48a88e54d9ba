"""0.5x and 0.85x bandwidth against every family's reference bands: each figure of
reference/<system>.yaml made 0.5x (0.85x) worse, a rate multiplied by the factor and a time
divided by it, judged as ReFrame judges it (``Reference.accepts``). 0.5x must fail every
figure; 0.85x every figure whose band is tighter than 15 % (a wider band is the finding the
cell names)."""

from __future__ import annotations

from fabrictest.references import direction
from fabrictest.references.loading import load_all
from fabrictest.references.model import Reference

from .axes import ROOT
from .cell import Cell, failed, na, passed  # noqa: F401

FACTORS = {"bw_0_5": 0.5, "bw_0_85": 0.85}


def _worse(ref: Reference, name: str, factor: float) -> float:
    lower_better = direction.lower_is_better(ref.unit or "", name)
    return ref.value / factor if lower_better else ref.value * factor


def _catches(ref: Reference, name: str, factor: float) -> bool:
    """The band is tight enough that a drop to ``factor`` must leave it."""
    lower_better = direction.lower_is_better(ref.unit or "", name)
    side = ref.upper if lower_better else ref.lower
    if side is None:
        return False
    edge = ref.value * (1 + side)
    return (ref.value / factor > edge) if lower_better else (ref.value * factor < edge)


def figures(family: str) -> list[tuple[str, str, Reference]]:
    """(system, dotted key, Reference) of every figure the reference files hold for it."""
    out = []
    for system, ref_file in sorted(load_all(ROOT / "reference").items()):
        cref = ref_file.classes.get(family)
        if cref is None:
            continue
        for keys, values in sorted(cref.entries.items()):
            for var, ref in sorted(values.items()):
                out.append((system, ".".join([*keys, var]), ref))
    return out


def cells(family: str) -> dict[str, Cell]:
    figs = figures(family)
    if not figs:
        reason = ("no reference figure in reference/*.yaml: its figures are informational or "
                  "judged by its own rule, not against a band")
        return {f: na(reason) for f in FACTORS}
    out = {}
    for fault, factor in FACTORS.items():
        judged = [(s, k, r) for s, k, r in figs if _catches(r, k.rsplit(".", 1)[-1], factor)]
        wide = [(s, k, r) for s, k, r in figs if (s, k, r) not in judged]
        admitted = [f"{s}:{k}" for s, k, r in judged
                    if r.accepts(_worse(r, k.rsplit(".", 1)[-1], factor))]
        note = (f"; {len(wide)} of {len(figs)} figures have a band wider than "
                f"{round((1 - factor) * 100)} % (e.g. {wide[0][0]}:{wide[0][1]} "
                f"[{_band(wide[0][2])}]) and pass it" if wide else "")
        if admitted:
            out[fault] = passed(f"{admitted[0]} accepted at {factor}x{note}")
        elif not judged and factor == FACTORS["bw_0_5"]:
            out[fault] = passed(f"every band admits {factor}x ({len(figs)} figures, e.g. "
                                f"{wide[0][0]}:{wide[0][1]} [{_band(wide[0][2])}])")
        elif not judged:
            out[fault] = na(f"every band is wider than {round((1 - factor) * 100)} % "
                            f"({len(figs)} figures, e.g. {wide[0][0]}:{wide[0][1]} "
                            f"[{_band(wide[0][2])}]): {factor}x is inside them (a finding)")
        else:
            s, k, r = judged[0]
            v = _worse(r, k.rsplit(".", 1)[-1], factor)
            out[fault] = failed(f"{len(judged)} of {len(figs)} figures fail at {factor}x, e.g. "
                                f"{s}:{k} {v:.4g} {r.unit} outside [{_band(r)}] of "
                                f"{r.value:g}{note}", k)
    return out


def _band(ref: Reference) -> str:
    lo = "-" if ref.lower is None else f"{ref.lower * 100:+.0f} %"
    hi = "-" if ref.upper is None else f"{ref.upper * 100:+.0f} %"
    return f"{lo}, {hi}"

"""0.5x and 0.85x bandwidth against every family's reference bands: each figure of
reference/<system>.yaml made 0.5x (0.85x) worse (a rate multiplied by the factor, a time
divided by it) and judged by ReFrame's own ``assert_reference``, as the family's performance
stage judges it. A case fails when one of its figures leaves its band: at 0.5x some figure of
the family must fail (a family whose every band admits 0.5x PASSes it: a gap), at 0.85x every
figure whose band is tighter than 15 % must (the figures with wider bands are the finding the
cell names; a family with no tighter band is n/a, saying so). A ratio of two figures of
the run (x, ratio: a growth, an impact factor, device over host) is left as it was: a uniformly
slower link moves both. A family whose figures a slower link does not move (UNMOVED) is n/a,
naming the rows that fail the fault in the same acceptance run; build.py confirms they do,
else the cell is a PASS (the gap), as it is for a family of ratios only not in UNMOVED."""

from __future__ import annotations

import reframe.utility.sanity as sn
from reframe.core.exceptions import SanityError

from fabrictest.references import direction
from fabrictest.references.loading import load_all
from fabrictest.references.model import Reference

from .axes import ROOT
from .cell import FAIL, Cell, failed, na, passed

FACTORS = {"bw_0_5": 0.5, "bw_0_85": 0.85}
#: families whose figures a slower link does not move (the model above would be false for
#: them) and why: their cells are n/a, naming the rows of CAUGHT_BY, which fail the fault in the
#: same acceptance run; confirmed() turns a cell back into the gap (PASS) unless they all do
UNMOVED: dict[str, str] = {
    "AllToManyTest": (
        "its references' runs send 32-256 byte messages (-b 32, 1 unit to one per node, on "
        "8 nodes at most): on Cori a receiver takes 512 x 144 bytes an iteration, 74 KB, under "
        "10 us of an 8 GB/s link in 24-41 ms an iteration; its times are latency and the "
        "posting of requests, which a slower link leaves as they were (reference/vcluster.yaml: "
        "unaffected by a 50 Mbit/s link, a quarter of the rate)"),
    "AllToManyScalingTest": (
        "its figures are growths (x) of AllToManyTest's own times, the time per iteration at "
        "32 iterations over that at 2 (within a run, across runs): a slower link leaves them as "
        "it leaves those times (AllToManyTest's row)"),
    "GpuExchangeTest": (
        "its judged figure is dd_over_hh (ratio), the exchange with device buffers over the "
        "same exchange with host buffers on the same links (the Crusher GPU notes' rule; the "
        "host and device figures are informational): a uniformly slower link slows both and "
        "leaves it as it was; a slower device path, the rule's case, is what it fails"),
}
CAUGHT_BY: dict[str, tuple[str, ...]] = {"bw_0_5": ("fabric-health", "acceptance"),
                                         "bw_0_85": ("acceptance",)}
EPS = 1e-9  # 0.85 - 1 is -0.15000000000000002 in binary: a band's -0.15 is no tighter
#: units of a figure that is one figure of the run over another over the same links (a growth,
#: an impact factor, device over host): a uniformly slower link leaves it as it was
RATIO_UNITS = {"x", "ratio"}


def _ratio(ref: Reference) -> bool:
    return (ref.unit or "").strip().lower() in RATIO_UNITS


def _lower_better(ref: Reference, key: str) -> bool:
    return direction.lower_is_better(ref.unit or "", key.rsplit(".", 1)[-1])


def _worse(ref: Reference, key: str, factor: float) -> float:
    return ref.value / factor if _lower_better(ref, key) else ref.value * factor


def _tight(ref: Reference, key: str, factor: float) -> bool:
    """The band, read from its numbers, is narrower than the drop: a rate's lower bound above
    factor - 1, a time's upper bound below 1 / factor - 1 (a band of exactly the drop is not
    narrower: its edge accepts the figure)."""
    if _lower_better(ref, key):
        return ref.upper is not None and ref.upper < 1 / factor - 1 - EPS
    return ref.lower is not None and ref.lower > factor - 1 + EPS


def _reframe_accepts(ref: Reference, value: float) -> bool:
    try:
        return bool(sn.evaluate(sn.assert_reference(value, ref.value, ref.lower, ref.upper)))
    except SanityError:
        return False


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


def _band(ref: Reference) -> str:
    lo = "-" if ref.lower is None else f"{ref.lower * 100:+.0f} %"
    hi = "-" if ref.upper is None else f"{ref.upper * 100:+.0f} %"
    return f"{lo}, {hi}"


def _cell(figs, factor: float, ratios: int) -> Cell:
    pct = round((1 - factor) * 100)
    judged = [(s, k, r) for s, k, r in figs if _tight(r, k, factor)]
    wide = [(s, k, r) for s, k, r in figs if not _tight(r, k, factor)]
    note = (f"; {len(wide)} of {len(figs)} figures have a band of {pct} % or wider (e.g. "
            f"{wide[0][0]}:{wide[0][1]} [{_band(wide[0][2])}]) and pass it" if wide else "")
    if ratios:
        note += f"; {ratios} ratios ({', '.join(sorted(RATIO_UNITS))}) left as they were"
    admitted = [f"{s}:{k}" for s, k, r in judged if _reframe_accepts(r, _worse(r, k, factor))]
    if admitted:
        return passed(f"ReFrame accepts {admitted[0]} at {factor}x inside its band{note}")
    if not judged and factor == FACTORS["bw_0_5"]:
        return passed(f"every band admits {factor}x ({len(figs)} figures, e.g. "
                      f"{wide[0][0]}:{wide[0][1]} [{_band(wide[0][2])}])")
    if not judged:
        return na(f"every band is {pct} % or wider ({len(figs)} figures, e.g. {wide[0][0]}:"
                  f"{wide[0][1]} [{_band(wide[0][2])}]): {factor}x is inside them (a finding)")
    s, k, r = judged[0]
    return failed(f"ReFrame fails {len(judged)} of {len(figs)} figures at {factor}x, e.g. "
                  f"{s}:{k} {_worse(r, k, factor):.4g} {r.unit} outside [{_band(r)}] of "
                  f"{r.value:g}{note}", k)


def unmoved(family: str) -> dict[str, Cell]:
    """The cells of a family of UNMOVED: n/a, naming the rows that catch the fault."""
    return {fault: na(f"{UNMOVED[family]}; a link at {FACTORS[fault]}x fails the acceptance run "
                      f"that holds it: the row{'s' if len(rows) > 1 else ''} {' and '.join(rows)} "
                      f"FAIL it")
            for fault, rows in CAUGHT_BY.items()}


def confirmed(family: str, fault: str, cell: Cell, catchers: dict[str, Cell]) -> Cell:
    """``cell`` as it is when every row UNMOVED names for ``fault`` FAILs it (``catchers``:
    row -> that row's cell of ``fault``); else the gap it stands for, a PASS saying which row
    does not fail it."""
    rows = CAUGHT_BY[fault] if family in UNMOVED else ()
    short = [r for r in rows if catchers.get(r) is None or catchers[r].outcome != FAIL]
    if not short:
        return cell
    said = catchers.get(short[0])
    return passed(f"no figure of {family} moves at {FACTORS[fault]}x and {short[0]}, which "
                  f"was to fail it, says {said.outcome if said else 'nothing'}: "
                  f"{said.text if said else 'no such row'}")


def cells(family: str) -> dict[str, Cell]:
    if family in UNMOVED:
        return unmoved(family)
    figs = figures(family)
    if not figs:
        return {f: na("no reference figure in reference/*.yaml: its figures are "
                      "informational or judged by its own rule, not against a band")
                for f in FACTORS}
    moved = [(s, k, r) for s, k, r in figs if not _ratio(r)]
    if not moved:  # a gap until UNMOVED names the rows that catch the fault
        s, k, r = figs[0]
        return {fault: passed(f"every figure is a ratio ({len(figs)}, e.g. {s}:{k} in {r.unit}),"
                              f" which a link at {factor}x leaves as it was")
                for fault, factor in FACTORS.items()}
    return {fault: _cell(moved, factor, len(figs) - len(moved))
            for fault, factor in FACTORS.items()}

"""Regression comparison: two result sets (or one against its references), per test,
scenario, node and figure, flagging what moved beyond tolerance.

Direction comes from the unit: times (us, ms, s, ns) are better lower, everything else
(Gbps, MB/s, GB/s, msg/s) better higher. Several values for one key (reruns, several
sessions with the same tag) are reduced to their median.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from .results import PerfRecord

LOWER_IS_BETTER = {"us", "usec", "ms", "s", "sec", "ns", "seconds"}
NEUTRAL = {"rounds", "nodes", "count", ""}  # neither better nor worse: "changed"


def lower_is_better(unit: str) -> bool:
    return unit.strip().lower() in LOWER_IS_BETTER


@dataclass
class CompareRow:
    test: str
    scenario: str
    sysenv: str
    nodes: str
    pvar: str
    unit: str
    base: float | None
    target: float | None
    change: float | None  # (target - base) / base
    status: str  # ok | REGRESSED | improved | changed | new | missing | failed
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _key(r: PerfRecord, by_node: bool) -> tuple:
    return (r.test, r.sysenv, r.pvar) + ((r.nodes_expr,) if by_node else ())


def _reduce(records: Iterable[PerfRecord], by_node: bool) -> dict[tuple, list[PerfRecord]]:
    out: dict[tuple, list[PerfRecord]] = defaultdict(list)
    for r in records:
        out[_key(r, by_node)].append(r)
    return out


def _median(rs: Sequence[PerfRecord]) -> float | None:
    vals = [r.value for r in rs if r.value is not None]
    return statistics.median(vals) if vals else None


def _status(base: float, target: float, unit: str, tol: float) -> tuple[float, str]:
    change = (target - base) / base if base else 0.0
    if unit.strip().lower() in NEUTRAL:
        return change, ("changed" if abs(change) > tol else "ok")
    worse = change > tol if lower_is_better(unit) else change < -tol
    better = change < -tol if lower_is_better(unit) else change > tol
    return change, ("REGRESSED" if worse else "improved" if better else "ok")


def compare(
    base: Sequence[PerfRecord],
    target: Sequence[PerfRecord],
    tolerance: float = 0.10,
) -> list[CompareRow]:
    """Rows for every (test, system, figure[, nodes]) in either set.

    Records are matched with their nodes when both sides ran on the same nodes, otherwise
    without (an allocation may land elsewhere after an upgrade).
    """
    b_node, t_node = _reduce(base, True), _reduce(target, True)
    b_any, t_any = _reduce(base, False), _reduce(target, False)
    rows: list[CompareRow] = []
    used_b: set[tuple] = set()
    for key, trs in sorted(t_node.items()):
        brs = b_node.get(key)
        if brs is not None:
            used_b.add(key)
        else:
            brs = b_any.get(key[:-1])
            if brs is not None:
                used_b.update(k for k in b_node if k[:-1] == key[:-1])
        rows.append(_row(brs, trs, tolerance))
    for key, brs in sorted(b_node.items()):
        if key not in used_b and key[:-1] not in t_any:
            rows.append(_row(brs, None, tolerance))
    return rows


def _row(brs, trs, tol) -> CompareRow:
    ref = (trs or brs)[0]
    b = _median(brs) if brs else None
    t = _median(trs) if trs else None
    nodes = ref.nodes_expr
    if brs and trs and brs[0].nodes_expr != trs[0].nodes_expr:
        nodes = f"{brs[0].nodes_expr} -> {trs[0].nodes_expr}"
    row = CompareRow(ref.test, ref.scenario, ref.sysenv, nodes, ref.pvar, ref.unit, b, t,
                     None, "ok")
    if brs is None:
        row.status, row.note = "new", "not in the base"
    elif trs is None:
        row.status, row.note = "missing", "not in the target"
    elif t is None:
        row.status, row.note = "failed", "no value in the target"
    elif b is None:
        row.status, row.note = "new", "no value in the base"
    else:
        row.change, row.status = _status(b, t, ref.unit, tol)
        if any(r.result == "fail" for r in trs) and row.status == "ok":
            row.note = "test failed"
    return row


def against_references(records: Sequence[PerfRecord], tolerance: float | None = None):
    """Each figure against its reference: outside the reference's own band (or, when
    `tolerance` is given, beyond that fraction in the bad direction) is REGRESSED."""
    rows: list[CompareRow] = []
    for _key, rs in sorted(_reduce(records, True).items()):
        r = rs[0]
        v = _median(rs)
        row = CompareRow(r.test, r.scenario, r.sysenv, r.nodes_expr, r.pvar, r.unit, r.ref, v,
                         None, "ok")
        if r.ref is None:
            row.status, row.note = "new", "no reference"
        elif v is None:
            row.status, row.note = "failed", "no value"
        else:
            row.change = (v - r.ref) / r.ref if r.ref else None
            if tolerance is not None:
                _c, row.status = _status(r.ref, v, r.unit, tolerance)
            else:
                lo, hi = r.band()
                if (lo is not None and v < lo) or (hi is not None and v > hi):
                    low_bad = not lower_is_better(r.unit)
                    bad = (v < lo) if (low_bad and lo is not None) else (
                        hi is not None and v > hi)
                    row.status = "REGRESSED" if bad else "improved"
                    row.note = f"outside [{_f(lo)}, {_f(hi)}]"
        rows.append(row)
    return rows


def _f(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def compared(rows: Sequence[CompareRow]) -> int:
    """Figures that had a value on both sides (or a value and a reference)."""
    return sum(r.base is not None and r.target is not None for r in rows)


def verdict(rows: Sequence[CompareRow], unreadable: int, tolerance: float | None,
            allow_missing: bool = False) -> tuple[str, int]:
    """The closing line and the exit status: 0 figures compared and none regressed, 1 a
    figure regressed, has no value in the target or (unless `allow_missing`) is missing from
    it, 2 nothing could be compared."""
    n = compared(rows)
    count = {s: sum(r.status == s for r in rows) for s in
             ("REGRESSED", "failed", "new", "missing")}
    tol = "the references' bands" if tolerance is None else f"{100 * tolerance:g}%"
    parts = [f"compared {n} figures: {count['REGRESSED']} regressed beyond {tol}"]
    if count["failed"]:
        parts.append(f"{count['failed']} without a value in the target")
    if count["missing"]:
        parts.append(f"{count['missing']} missing from the target"
                     + (" (allowed)" if allow_missing else ""))
    other = [f"{count['new']} not in the base" if count["new"] else "",
             f"could not read {unreadable}"]
    line = ", ".join(parts) + "; " + ", ".join(o for o in other if o)
    failing = ("REGRESSED", "failed") + (() if allow_missing else ("missing",))
    bad = [f"{r.test} {r.pvar}" for r in rows if r.status in failing]
    if bad:
        shown = ", ".join(bad[:20]) + (f" and {len(bad) - 20} more" if len(bad) > 20 else "")
        line += ": " + shown
    if n == 0:
        return line, 2
    return line, (1 if bad else 0)


def render_table(rows: Sequence[CompareRow], base_label: str, target_label: str) -> str:
    head = ["test", "scenario", "system", "nodes", "figure", "unit", base_label, target_label,
            "change", "status"]
    body = []
    for r in rows:
        ch = "-" if r.change is None else f"{100 * r.change:+.1f}%"
        body.append([r.test, r.scenario or "-", r.sysenv, r.nodes or "-", r.pvar, r.unit,
                     _f(r.base), _f(r.target), ch, r.status + (f" ({r.note})" if r.note else "")])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=False)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(head, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for b in body:
        lines.append("  ".join(str(x).ljust(w) for x, w in zip(b, widths, strict=True)).rstrip())
    return "\n".join(lines) + "\n"

"""Regression comparison: two result sets (or one against its references), per test,
scenario, node and figure, flagging what moved beyond tolerance and beyond the noise.

Which way is worse comes from the unit, and from the figure's name where the unit does not
say (:mod:`.direction`). Each side may hold several sessions (all the sessions with one
`--session-extras` tag, say): a figure's value on a side is the median of its sessions, its
noise the robust spread of those sessions (:mod:`.stats`), and with enough sessions on both
sides a change only counts when it is beyond both the tolerance and the noise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from . import stats
from .direction import HIGHER, LOWER, better
from .results import PerfRecord

#: a change must exceed this many times the sessions' combined spread to be beyond the noise
NOISE_FACTOR = 3.0


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
    #: ok | REGRESSED | improved | changed | noise | new | missing | failed; against references:
    #: ok | REGRESSED | improved | failed | unreferenced (the figure has no reference)
    status: str
    note: str = ""
    n_base: int = 0  # sessions with a value on each side
    n_target: int = 0
    noise_base: float | None = None  # relative robust spread of each side's sessions
    noise_target: float | None = None
    #: whether the change is beyond both sides' noise; None: too few sessions to tell
    beyond_noise: bool | None = None
    #: whether the target's test case failed (ReFrame's verdict on the whole test, which a
    #: figure of it may pass on its own: a figure without a reference, say)
    test_failed: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def _key(r: PerfRecord, by_node: bool) -> tuple:
    return (r.test, r.sysenv, r.pvar) + ((r.nodes_expr,) if by_node else ())


def _reduce(records: Iterable[PerfRecord], by_node: bool) -> dict[tuple, list[PerfRecord]]:
    out: dict[tuple, list[PerfRecord]] = defaultdict(list)
    for r in records:
        out[_key(r, by_node)].append(r)
    return out


def per_session(rs: Sequence[PerfRecord]) -> list[float]:
    """One value per session (the median of a session's reruns), in session order."""
    by: dict[str, list[float]] = defaultdict(list)
    for r in rs:
        if r.value is not None:
            by[r.session].append(r.value)
    return [stats.spread(v).median for v in by.values()]


def _test_failed(rs: Sequence[PerfRecord] | None) -> bool:
    return any(r.test_result == "fail" for r in rs or ())


def _side(rs: Sequence[PerfRecord] | None) -> stats.Spread | None:
    vals = per_session(rs) if rs else []
    return stats.spread(vals) if vals else None


def _status(base: float, target: float, unit: str, pvar: str, tol: float
            ) -> tuple[float, str]:
    change = (target - base) / abs(base) if base else 0.0
    direction = better(unit, pvar)
    if direction is None:
        return change, ("changed" if abs(change) > tol else "ok")
    worse = change > tol if direction == LOWER else change < -tol
    improved = change < -tol if direction == LOWER else change > tol
    return change, ("REGRESSED" if worse else "improved" if improved else "ok")


def compare(
    base: Sequence[PerfRecord],
    target: Sequence[PerfRecord],
    tolerance: float = 0.10,
    noise_factor: float = NOISE_FACTOR,
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
        rows.append(_row(brs, trs, tolerance, noise_factor))
    for key, brs in sorted(b_node.items()):
        if key not in used_b and key[:-1] not in t_any:
            rows.append(_row(brs, None, tolerance, noise_factor))
    return rows


def _row(brs, trs, tol: float, noise_factor: float) -> CompareRow:
    ref = (trs or brs)[0]
    b, t = _side(brs), _side(trs)
    nodes = ref.nodes_expr
    if brs and trs and brs[0].nodes_expr != trs[0].nodes_expr:
        nodes = f"{brs[0].nodes_expr} -> {trs[0].nodes_expr}"
    row = CompareRow(ref.test, ref.scenario, ref.sysenv, nodes, ref.pvar, ref.unit,
                     b and b.median, t and t.median, None, "ok",
                     n_base=b.n if b else 0, n_target=t.n if t else 0,
                     noise_base=b and b.sigma, noise_target=t and t.sigma,
                     test_failed=_test_failed(trs))
    if brs is None:
        row.status, row.note = "new", "not in the base"
    elif trs is None:
        row.status, row.note = "missing", "not in the target"
    elif t is None:
        row.status, row.note = "failed", "no value in the target"
    elif b is None:
        row.status, row.note = "new", "no value in the base"
    else:
        row.change, row.status = _status(b.median, t.median, ref.unit, ref.pvar, tol)
        row.beyond_noise = stats.beyond_noise(b, t, noise_factor)
        if row.status in ("REGRESSED", "improved", "changed") and row.beyond_noise is False:
            row.note = f"{row.status.lower()} by {100 * row.change:+.1f}%, within the noise"
            row.status = "noise"
        elif row.status == "ok" and row.beyond_noise:
            row.note = "beyond the noise, within the tolerance"
        if any(r.result == "fail" for r in trs) and row.status == "ok":
            row.note = (row.note + "; " if row.note else "") + "test failed"
    return row


def against_references(records: Sequence[PerfRecord], tolerance: float | None = None):
    """Each figure against its reference: outside the reference's own band (or, when
    `tolerance` is given, beyond that fraction in the bad direction) is REGRESSED."""
    rows: list[CompareRow] = []
    for _key, rs in sorted(_reduce(records, True).items()):
        r = rs[0]
        t = _side(rs)
        row = CompareRow(r.test, r.scenario, r.sysenv, r.nodes_expr, r.pvar, r.unit, r.ref,
                         t and t.median, None, "ok", n_target=t.n if t else 0,
                         noise_target=t and t.sigma, test_failed=_test_failed(rs))
        v = row.target
        if r.ref is None:
            # not judged; where the test failed (ReFrame's missing-reference policy), the run
            # did not meet its references, which the verdict must not pass
            row.status = "unreferenced"
            row.note = "no reference, the test failed" if row.test_failed else "no reference"
        elif v is None:
            row.status, row.note = "failed", "no value"
        else:
            row.change = (v - r.ref) / abs(r.ref) if r.ref else None
            if tolerance is not None:
                _c, row.status = _status(r.ref, v, r.unit, r.pvar, tolerance)
            else:
                lo, hi = r.band()
                below, above = lo is not None and v < lo, hi is not None and v > hi
                if below or above:
                    direction = better(r.unit, r.pvar)
                    if direction is None:
                        row.status = "REGRESSED"  # a band with no better side: both fail
                    else:
                        bad = below if direction == HIGHER else above
                        row.status = "REGRESSED" if bad else "improved"
                    row.note = f"outside [{_f(lo)}, {_f(hi)}]"
        rows.append(row)
    return rows


def _f(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def noise_text(sigma: float | None, n: int) -> str:
    if sigma is None:
        return f"? ({n})" if n else "-"
    return f"±{100 * sigma:.1f}% ({n})"


def compared(rows: Sequence[CompareRow]) -> int:
    """Figures that had a value on both sides (or a value and a reference)."""
    return sum(r.base is not None and r.target is not None for r in rows)


def _failing(row: CompareRow, allow_missing: bool) -> bool:
    if row.status == "unreferenced":
        return row.test_failed
    return row.status in ("REGRESSED", "failed") or (row.status == "missing"
                                                      and not allow_missing)


def verdict(rows: Sequence[CompareRow], unreadable: int, tolerance: float | None,
            allow_missing: bool = False, against_references: bool = False
            ) -> tuple[str, int]:
    """The closing line and the exit status: 0 figures compared and none regressed, 1 a
    figure regressed, has no value in the target, (unless `allow_missing`) is missing from
    it, or (against references) has no reference and its test failed, 2 nothing could be
    compared."""
    n = compared(rows)
    count = {s: sum(r.status == s for r in rows) for s in
             ("REGRESSED", "failed", "new", "missing", "unreferenced")}
    tol = "the references' bands" if tolerance is None else f"{100 * tolerance:g}%"
    parts = [f"compared {n} figures: {count['REGRESSED']} regressed beyond {tol}"]
    if count["failed"]:
        parts.append(f"{count['failed']} without a value"
                     + ("" if against_references else " in the target"))
    if count["unreferenced"]:
        in_failed = sum(r.status == "unreferenced" and r.test_failed for r in rows)
        parts.append(f"{count['unreferenced']} without a reference"
                     + (f" ({in_failed} of them in failed tests)" if in_failed else ""))
    if count["missing"]:
        parts.append(f"{count['missing']} missing from the target"
                     + (" (allowed)" if allow_missing else ""))
    noise = sum(r.status == "noise" for r in rows)
    unknown = sum(r.beyond_noise is None and r.n_base > 0 and r.change is not None
                  for r in rows)
    other = [f"{noise} moved within the noise" if noise else "",
             f"noise unknown for {unknown} (fewer than {stats.MIN_SESSIONS} sessions on a side)"
             if unknown else "",
             f"{count['new']} not in the base" if count["new"] else "",
             f"could not read {unreadable}"]
    line = ", ".join(parts) + "; " + ", ".join(o for o in other if o)
    bad = [f"{r.test} {r.pvar}" for r in rows if _failing(r, allow_missing)]
    if bad:
        shown = ", ".join(bad[:20]) + (f" and {len(bad) - 20} more" if len(bad) > 20 else "")
        line += ": " + shown
    if n == 0:
        return line, 2
    return line, (1 if bad else 0)


def render_table(rows: Sequence[CompareRow], base_label: str, target_label: str) -> str:
    """The rows as a text table; with several sessions on a side, each side's noise (its
    sessions' relative spread, and how many sessions) and whether the change is beyond it."""
    with_noise = any(r.n_base > 1 or r.n_target > 1 for r in rows)
    head = ["test", "scenario", "system", "nodes", "figure", "unit", base_label, target_label,
            "change"]
    if with_noise:
        head += ["noise base (n)", "noise target (n)", "beyond noise"]
    head.append("status")
    body = []
    for r in rows:
        ch = "-" if r.change is None else f"{100 * r.change:+.1f}%"
        line = [r.test, r.scenario or "-", r.sysenv, r.nodes or "-", r.pvar, r.unit,
                _f(r.base), _f(r.target), ch]
        if with_noise:
            beyond = {True: "yes", False: "no", None: "?"}[r.beyond_noise]
            line += [noise_text(r.noise_base, r.n_base), noise_text(r.noise_target, r.n_target),
                     beyond if r.change is not None else "-"]
        line.append(r.status + (f" ({r.note})" if r.note else ""))
        body.append(line)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=False)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(head, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for b in body:
        lines.append("  ".join(str(x).ljust(w) for x, w in zip(b, widths, strict=True)).rstrip())
    return "\n".join(lines) + "\n"

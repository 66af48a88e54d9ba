"""Regression comparison: two result sets (or one against its references), per test,
scenario, node and figure.

No regression without evidence: a figure is REGRESSED only when it moved in the bad
direction by more than the tolerance *and* that move is beyond the measured noise (3 or more
sessions on each side, :mod:`fabrictest.report.records.stats`), leaves the figure outside its reference band, or
happened in a test that passed in the base and failed in the target (the suite's verdict). A move
with the noise unknown (fewer than 3 sessions on a side) and within the band is "changed by X %
(noise unknown)": neutral, and the verdict says how many there are and what would judge them.
Counts (unit `count`) follow the count rule (:mod:`fabrictest.report.records.counts`) instead of a relative change.

Which way is worse comes from the unit, and from the figure's name where the unit does not
say (:mod:`fabrictest.report.records.direction`). A figure is compared in one unit: the target's newest (values in
another unit of the same dimension are converted, :mod:`fabrictest.report.records.units`; units of different
dimensions for one figure are refused). Each side may hold several sessions (all the sessions
with one `--session-extras` tag, say): a figure's value on a side is the median of its
sessions.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from fabrictest.report.records import counts, stats, units
from fabrictest.report.records.direction import HIGHER, LOWER, better
from fabrictest.report.records.results import PerfRecord
from fabrictest.report.records.units import fmt as _f

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
    #: ok | REGRESSED | improved | changed (beyond the tolerance, without evidence either
    #: way, or a figure with no better direction) | noise (within the measured noise) | new |
    #: missing | failed; against references: ok | REGRESSED | improved | failed |
    #: unreferenced (the figure has no reference)
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
    #: whether the target is outside its reference band in the bad direction (None: no band)
    outside_band: bool | None = None
    #: the figure needs no reference (its test's informational_perf_vars)
    informational: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def _key(r: PerfRecord, by_node: bool) -> tuple:
    return (r.test, r.sysenv, r.pvar) + ((r.nodes_expr,) if by_node else ())


def _reduce(records: Iterable[PerfRecord], by_node: bool) -> dict[tuple, list[PerfRecord]]:
    out: dict[tuple, list[PerfRecord]] = defaultdict(list)
    for r in records:
        out[_key(r, by_node)].append(r)
    return out


def newest(rs: Sequence[PerfRecord]) -> PerfRecord:
    """The most recent record (by completion time; else the last read)."""
    return max(enumerate(rs), key=lambda ir: (ir[1].time is not None, ir[1].time or 0.0,
                                              ir[0]))[1]


def unit_of(*sides: Sequence[PerfRecord] | None) -> str:
    """The unit a figure is compared in: the newest record's of the last side that has one;
    UnitError when the records give it in units of different dimensions."""
    recs = [r for rs in sides if rs for r in rs]
    last = next((rs for rs in reversed(sides) if rs), None)
    if not recs or last is None:
        return ""
    want = newest(last).unit
    units.common([*(r.unit for r in recs), want], f"{recs[0].test} {recs[0].pvar}")
    return want


def per_session(rs: Sequence[PerfRecord], unit: str | None = None,
                reduce=None) -> list[float]:
    """One value per session (the median of a session's reruns, or `reduce` of them), in
    session order; in `unit` when given (else each record's own)."""
    by: dict[str, list[float]] = defaultdict(list)
    for r in rs:
        if r.value is not None:
            by[r.session].append(r.value if unit is None else units.convert(r.value, r.unit,
                                                                              unit))
    return [(reduce or (lambda v: stats.spread(v).median))(v) for v in by.values()]


def _test_failed(rs: Sequence[PerfRecord] | None) -> bool:
    return any(r.test_result == "fail" for r in rs or ())


def _side(rs: Sequence[PerfRecord] | None, unit: str | None = None) -> stats.Spread | None:
    vals = per_session(rs, unit) if rs else []
    return stats.spread(vals) if vals else None


def _informational(rs: Sequence[PerfRecord] | None) -> bool:
    return any(r.informational for r in rs or ())


def _status(base: float, target: float, unit: str, pvar: str, tol: float
            ) -> tuple[float, str]:
    """The change and the status by the tolerance alone (REGRESSED, improved, changed, ok)."""
    if base:
        change = (target - base) / abs(base)
    else:  # from 0: no relative change; any other value is a change without bound
        change = 0.0 if target == base else math.copysign(math.inf, target)
    direction = better(unit, pvar)
    if direction is None:
        return change, ("changed" if abs(change) > tol else "ok")
    worse = change > tol if direction == LOWER else change < -tol
    improved = change < -tol if direction == LOWER else change > tol
    return change, ("REGRESSED" if worse else "improved" if improved else "ok")


def band_of(rs: Sequence[PerfRecord], unit: str) -> tuple[float | None, float | None]:
    """The newest record's reference band, in `unit` ((None, None): no reference)."""
    r = newest(rs)
    lo, hi = r.band()
    return units.convert(lo, r.unit, unit), units.convert(hi, r.unit, unit)


def outside_band(value: float, lo: float | None, hi: float | None, unit: str, pvar: str
                 ) -> bool | None:
    """Whether `value` is outside [lo, hi] on the bad side (both sides for a figure with no
    better direction); None when there is no band."""
    if lo is None and hi is None:
        return None
    below, above = lo is not None and value < lo, hi is not None and value > hi
    direction = better(unit, pvar)
    if direction == HIGHER:
        return below
    if direction == LOWER:
        return above
    return below or above


def compare(
    base: Sequence[PerfRecord],
    target: Sequence[PerfRecord],
    tolerance: float = 0.10,
    noise_factor: float = NOISE_FACTOR,
) -> list[CompareRow]:
    """Rows for every (test, system, figure[, nodes]) in either set.

    Records are matched with their nodes when both sides ran on the same nodes, otherwise
    without (an allocation may land elsewhere after an upgrade). UnitError when a figure is
    given in units of different dimensions.
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
    unit = unit_of(brs, trs)
    b, t = _side(brs, unit), _side(trs, unit)
    nodes = ref.nodes_expr
    if brs and trs and brs[0].nodes_expr != trs[0].nodes_expr:
        nodes = f"{brs[0].nodes_expr} -> {trs[0].nodes_expr}"
    row = CompareRow(ref.test, ref.scenario, ref.sysenv, nodes, ref.pvar, unit,
                     b and b.median, t and t.median, None, "ok",
                     n_base=b.n if b else 0, n_target=t.n if t else 0,
                     noise_base=b and b.sigma, noise_target=t and t.sigma,
                     test_failed=_test_failed(trs),
                     informational=_informational(trs or brs))
    if brs is None:
        row.status, row.note = "new", "not in the base"
    elif trs is None:
        row.status, row.note = "missing", "not in the target"
    elif t is None:
        row.status, row.note = "failed", "no value in the target"
    elif b is None:
        row.status, row.note = "new", "no value in the base"
    elif counts.is_count(unit):
        _count_row(row, brs, trs, unit)
    else:
        _judge(row, b, t, band_of(trs, unit), tol, noise_factor)
        if row.test_failed and not _test_failed(brs) and row.status == "changed" and (
                _status(b.median, t.median, row.unit, row.pvar, tol)[1] == "REGRESSED"):
            # the suite's own verdict is the evidence: its test passed in the base and failed
            # in the target, and this figure moved the bad way beyond the tolerance
            row.status = "REGRESSED"
            row.note = (f"{100 * row.change:+.1f}%; its test passed in the base and failed "
                        "in the target")
        elif row.test_failed and row.status in ("ok", "changed", "noise"):
            row.note = (row.note + "; " if row.note else "") + "test failed"
    if row.informational and row.status not in ("new", "missing", "failed"):
        row.note = (row.note + "; " if row.note else "") + "informational"
    return row


def _judge(row: CompareRow, b: stats.Spread, t: stats.Spread, band, tol: float,
           noise_factor: float) -> None:
    row.change, by_tolerance = _status(b.median, t.median, row.unit, row.pvar, tol)
    row.beyond_noise = stats.beyond_noise(b, t, noise_factor)
    row.outside_band = outside_band(t.median, *band, row.unit, row.pvar)
    pct = f"{100 * row.change:+.1f}%"
    evidence = row.beyond_noise is True or row.outside_band is True
    if by_tolerance == "REGRESSED":
        if evidence:
            why = ["beyond the noise"] if row.beyond_noise else []
            if row.outside_band:
                why.append(f"outside its reference band [{_f(band[0])}, {_f(band[1])}]")
            row.status, row.note = "REGRESSED", "; ".join(why)
        elif row.beyond_noise is False:
            row.status, row.note = "noise", f"regressed by {pct}, within the noise"
        else:
            row.status, row.note = "changed", f"changed by {pct} (noise unknown)"
    elif by_tolerance in ("improved", "changed"):
        if row.beyond_noise:
            row.status = by_tolerance
            row.note = "beyond the noise"
        elif row.beyond_noise is False:
            row.status = "noise"
            row.note = f"{by_tolerance} by {pct}, within the noise"
        else:
            row.status, row.note = "changed", f"changed by {pct} (noise unknown)"
    elif row.beyond_noise:
        row.note = "beyond the noise, within the tolerance"
    if row.status != "REGRESSED" and row.outside_band:
        row.note = (row.note + "; " if row.note else "") + (
            f"outside its reference band [{_f(band[0])}, {_f(band[1])}] by less than the "
            "tolerance")


def _count_row(row: CompareRow, brs, trs, unit: str) -> None:
    """Counts: the target's worst session against the base's worst by the count rule."""
    healthy = per_session(brs, unit, max)
    worst = max(per_session(trs, unit, max))
    row.target = worst
    base = max(healthy)
    row.base = base
    row.change = (worst - base) / base if base else None
    bad, words = counts.past_limit(healthy, worst)
    if bad:
        row.status, row.note = "REGRESSED", words
    elif worst != base:
        row.note = f"within the count rule: {words}"


def against_references(records: Sequence[PerfRecord], tolerance: float | None = None):
    """Each figure against its reference: outside the reference's own band (or, when
    `tolerance` is given, beyond that fraction in the bad direction) is REGRESSED."""
    rows: list[CompareRow] = []
    for _key, rs in sorted(_reduce(records, True).items()):
        r = newest(rs)
        unit = unit_of(rs)
        t = _side(rs, unit)
        ref = units.convert(r.ref, r.unit, unit)
        row = CompareRow(r.test, r.scenario, r.sysenv, r.nodes_expr, r.pvar, unit, ref,
                         t and t.median, None, "ok", n_target=t.n if t else 0,
                         noise_target=t and t.sigma, test_failed=_test_failed(rs),
                         informational=_informational(rs))
        v = row.target
        if r.ref is None:
            # not judged; where the test failed (ReFrame's missing-reference policy), the run
            # did not meet its references, which the verdict must not pass
            row.status = "unreferenced"
            row.note = "no reference, the test failed" if row.test_failed else "no reference"
            if row.informational:
                row.note += "; informational"
        elif v is None:
            row.status, row.note = "failed", "no value"
        else:
            row.change = (v - ref) / abs(ref) if ref else None
            if tolerance is not None:
                _c, row.status = _status(ref, v, unit, r.pvar, tolerance)
            else:
                lo, hi = band_of(rs, unit)
                below, above = lo is not None and v < lo, hi is not None and v > hi
                if below or above:
                    direction = better(unit, r.pvar)
                    if direction is None:
                        row.status = "REGRESSED"  # a band with no better side: both fail
                    else:
                        bad = below if direction == HIGHER else above
                        row.status = "REGRESSED" if bad else "improved"
                    row.outside_band = row.status == "REGRESSED"
                    row.note = f"outside [{_f(lo)}, {_f(hi)}]"
        rows.append(row)
    return rows

"""Stage 2's figures judged by the page itself, against the band recorded with the run (pure).

A run report keeps, for each performance variable, the value, the reference, its lower and
upper bounds, the unit and ReFrame's result (``perfvalues``): the band the run was judged
against, whatever the references file says today. The page counts each figure inside or
outside that band itself and does not take ReFrame's word for it:

* a reference no run can have been judged against (negative, a bound that is not finite, a
  band that does not hold its reference, a lower bound below zero) is refused
  (:func:`refuse_bands`, ResultsError: exit 2);
* a figure outside its band that ReFrame passed (its own result, or its test case's), or one
  inside that ReFrame failed, is a disagreement (:func:`disagreements`): NOT ACCEPTED, naming
  the figure;
* a band none of whose edges is within the strict bounds a reference keeps to without a
  ``loose:`` reason (a congestion figure's +9,900 %) judges nothing (:func:`judges`): such a
  figure is shown, and fails outside its band, but is not counted as "within its band".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fabrictest.references.model import STRICT_LOWER, STRICT_UPPER
from fabrictest.report.acceptance.verdict import Finding
from fabrictest.report.records.results import PerfRecord, ResultsError
from fabrictest.report.records.units import fmt

#: a figure on its band's edge, up to rounding, is inside it (ReFrame compares the same floats)
EDGE_TOLERANCE = 1e-9


def _bad_band(r: PerfRecord) -> str | None:
    """Why a recorded reference is impossible, or None."""
    if r.ref is None:
        return None
    if r.ref < 0:
        return f"reference {r.ref:g} is negative"
    for side, b in (("lower", r.lower), ("upper", r.upper)):
        if b is not None and not math.isfinite(b):
            return f"its {side} bound {b} is not a finite number"
    if r.lower is not None and r.upper is not None and r.lower > r.upper:
        return f"its band is inverted (lower {r.lower:+g} above upper {r.upper:+g})"
    if r.lower is not None and r.lower > 0:
        return f"its lower bound {r.lower:+g} lies above the reference"
    if r.upper is not None and r.upper < 0:
        return f"its upper bound {r.upper:+g} lies below the reference"
    if r.lower is not None and r.lower < -1:
        return f"its lower bound {r.lower:+g} lies below zero"
    return None


def refuse_bands(records: Sequence[PerfRecord]) -> None:
    """ResultsError (one line naming the figure) for the first impossible recorded reference."""
    for r in records:
        why = _bad_band(r)
        if why:
            raise ResultsError(f"{r.source}: {r.test} {r.pvar}: {why}: an impossible "
                               "reference, refused (the run cannot have been judged against it)")


def outside(r: PerfRecord) -> bool | None:
    """The page's own judgement: the figure lies outside the band recorded with it (None: no
    value or no reference to judge it by)."""
    if r.value is None or not r.ref:
        return None
    lo, hi = r.band()
    slack = EDGE_TOLERANCE * abs(r.ref)
    return (lo is not None and r.value < lo - slack) or (hi is not None and r.value > hi + slack)


def judges(lower: float | None, upper: float | None) -> bool:
    """A band judges when one of its edges is within the strict bounds (a loose one, +9,900 %,
    catches nothing a user cares about)."""
    return (lower is not None and lower >= STRICT_LOWER) or (
        upper is not None and upper <= STRICT_UPPER)


def _band_text(r: PerfRecord) -> str:
    lo, hi = r.band()
    return (f"[{fmt(lo) if lo is not None else '-inf'}, {fmt(hi) if hi is not None else '+inf'}]"
            f" {r.unit}".rstrip())


def disagreements(records: Sequence[PerfRecord]) -> list[Finding]:
    """A finding for each figure the page judges otherwise than ReFrame did (the figure's own
    result, or for a figure outside its band also its test case's)."""
    out = []
    for r in records:
        out_of_band = outside(r)
        if out_of_band is None:
            continue
        where = f"{r.test} {r.pvar}"
        value = f"{fmt(r.value)} {r.unit}".rstrip()
        if out_of_band and "pass" in (r.result, r.test_result):
            said = "the figure's own result" if r.result == "pass" else "its test case's result"
            out.append(Finding(2, "test", where, f"{where} = {value} is outside its recorded "
                               f"band {_band_text(r)}, yet {said} is pass: ReFrame's word and "
                               "the page's count disagree"))
        elif not out_of_band and r.result == "fail":
            out.append(Finding(2, "test", where, f"{where} = {value} is inside its recorded "
                               f"band {_band_text(r)}, yet the figure's own result is fail: "
                               "ReFrame's word and the page's count disagree"))
    return out

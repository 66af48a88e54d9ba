"""Units of the figures the reports read: which dimension a unit measures, and conversion
within one dimension.

Every stored figure keeps its unit (a run report's perfvalues, a perflog's `_unit` column),
and a figure may change unit between sessions (a test that reported MB/s now reports GB/s,
a site's own build prints Gbps). The reports compare values only in one unit: a value is
converted within its dimension (a data rate in bits or bytes per second, decimal or binary
prefixes; a time), and two units of different dimensions (a rate and a time, a count and a
ratio) for one figure are refused in one line: they are not the same figure.

Units the table does not know (``x``, ``%``, ``count``, ``msg/s``...) are their own
dimension: equal strings compare, others are refused.
"""

from __future__ import annotations

import math

from fabrictest.parsers.physical import PREFIX as _PREFIX
from fabrictest.parsers.physical import RATE_UNIT as _RATE
from fabrictest.parsers.physical import TIME_UNIT as _TIME

DATA_RATE, TIME = "data rate", "time"


class UnitError(ValueError):
    """Two units of different dimensions given for one figure."""


def dimension(unit: str | None) -> tuple[str, float]:
    """(dimension, factor to the dimension's base unit: bytes per second, seconds) of
    `unit`; a unit the table does not know is its own dimension with factor 1."""
    u = (unit or "").strip()
    if u in _TIME:
        return TIME, _TIME[u]
    m = _RATE.match(u)
    if m and (m.group("p") in _PREFIX):
        scale = _PREFIX[m.group("p")]
        return DATA_RATE, scale if m.group("byte") else scale / 8
    return f"unit {u!r}" if u else "no unit", 1.0


def same_dimension(a: str | None, b: str | None) -> bool:
    return dimension(a)[0] == dimension(b)[0]


def factor(src: str | None, dst: str | None) -> float:
    """What a value in `src` is multiplied by to be in `dst`; UnitError across dimensions."""
    (da, fa), (db, fb) = dimension(src), dimension(dst)
    if da != db:
        raise UnitError(f"{src or 'no unit'} and {dst or 'no unit'} are not one dimension "
                        f"({kind(src)} and {kind(dst)})")
    return fa / fb


def convert(value: float | None, src: str | None, dst: str | None) -> float | None:
    """`value` in `src` expressed in `dst` (None stays None)."""
    if value is None or (src or "").strip() == (dst or "").strip():
        return value
    return value * factor(src, dst)


def kind(unit: str | None) -> str:
    """`a data rate`, `a time`, or the unit itself, for messages."""
    dim = dimension(unit)[0]
    return {DATA_RATE: "a data rate", TIME: "a time"}.get(dim, dim)


def common(units, what: str = "") -> str:
    """The unit a figure is shown in: the last of `units` (the newest record's); UnitError in
    one line when they are not all one dimension (`what` names the figure)."""
    given = [(u or "").strip() for u in units]
    if not given:
        return ""
    seen = list(dict.fromkeys(given))
    dims = {dimension(u)[0] for u in seen}
    if len(dims) > 1:
        shown = ", ".join(f"{u or 'no unit'} ({kind(u)})" for u in seen)
        raise UnitError(f"{what + ': ' if what else ''}given in {shown}: not one figure "
                        "(units of different dimensions are never compared)")
    return given[-1]


def fmt(value: float | None, digits: int = 4) -> str:
    """A figure as people read it: 4 significant digits, no float noise
    (3.2349999999999995e-07 -> 3.235e-07)."""
    if value is None:
        return "-"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.{digits}g}"


def fmt_unit(value: float | None, unit: str | None, digits: int = 4) -> str:
    return f"{fmt(value, digits)} {unit}".rstrip() if unit else fmt(value, digits)

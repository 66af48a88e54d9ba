"""Which way is better for a figure: by its unit, and by its name where the unit does not say.

Times are better lower and rates higher, whatever their name. A unit that only says "a
number" (`x`, `%`, `ratio`, none) takes the direction from the figure's name: a growth, an
overhead, a loss, a latency or an impact factor (loaded against isolated: a slowdown) is
better lower (the all-to-many `end_to_end_growth` in `x`),
a bandwidth, a rate or an efficiency higher. Counts such as `rounds` have no better
direction: a change is only "changed".
"""

from __future__ import annotations

import re

HIGHER, LOWER = "higher", "lower"

TIME_UNITS = {"ns", "us", "usec", "µs", "ms", "msec", "s", "sec", "secs", "seconds", "min"}
_RATE_UNIT = re.compile(r"(/s|/sec|ps|iops|flops|flop/s)$", re.I)  # MB/s, Gbps, msg/s, IOPS
NEUTRAL_UNITS = {"rounds", "nodes", "count", "ranks", "pairs", "iterations"}
#: units that are just numbers: the name decides
AMBIGUOUS_UNITS = {"", "x", "%", "ratio", "fraction", "factor", "1"}

_LOWER_NAME = re.compile(
    r"growth|overhead|loss|miss|drop|error|retr|jitter|lat(ency)?\b|lat_|latency|time|"
    r"(^|_)t_|wait|delay|slowdown|impact", re.I)
_HIGHER_NAME = re.compile(
    r"bw|bandwidth|rate|gbps|mbps|throughput|speedup|efficiency|ratio|level|msgs?_per", re.I)


def better(unit: str, name: str = "") -> str | None:
    """'higher', 'lower' or None (no better direction) for a figure `name` in `unit`."""
    u = (unit or "").strip()
    if u.lower() in TIME_UNITS:
        return LOWER
    if u.lower() in NEUTRAL_UNITS:
        return None
    if u.lower() not in AMBIGUOUS_UNITS:
        if _RATE_UNIT.search(u) or u.lower().endswith("b/s"):
            return HIGHER
        return None if not name else _by_name(name)
    return _by_name(name)


def _by_name(name: str) -> str | None:
    if _LOWER_NAME.search(name):
        return LOWER
    if _HIGHER_NAME.search(name):
        return HIGHER
    return None


def is_time(unit: str) -> bool:
    """A time unit (latency panels of the plots)."""
    return (unit or "").strip().lower() in TIME_UNITS


def lower_is_better(unit: str, name: str = "") -> bool:
    return better(unit, name) == LOWER

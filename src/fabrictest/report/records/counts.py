"""The count rule: figures in unit `count` (retransmissions, CNPs, pause frames per node and
test, docs/counters.md) are near 0 on a healthy fabric, where a median, a relative change
and a relative spread mean nothing (0 -> 1 is "+inf %").

A count is judged against the worst healthy count, never below ``COUNT_MIN``: past
(1 + ``COUNT_MARGIN``) times it, it fails. `calibrate` writes that as the reference; `compare`
and `history` apply the same rule with the base's (or the earlier sessions') worst count.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

COUNT_UNIT = "count"
#: the floor: a healthy link shaped by a queue drops a few segments under load (0-18 TCP
#: retransmissions per node and test on the vcluster at load 7-9, 0-1 on a quiet machine), so
#: a quiet calibration must not make them alarms
COUNT_MIN = 25
COUNT_MARGIN = 3.0


def is_count(unit: str | None) -> bool:
    return (unit or "").strip() == COUNT_UNIT


def healthy_worst(values: Iterable[float]) -> float:
    """The reference of a count: the worst healthy value, at least COUNT_MIN."""
    worst = max(values, default=0.0)
    return float(max(math.ceil(worst), COUNT_MIN))


def limit(values: Iterable[float]) -> float:
    """The largest count that passes, after healthy `values`."""
    return healthy_worst(values) * (1 + COUNT_MARGIN)


def past_limit(healthy: Iterable[float], value: float) -> tuple[bool, str]:
    """Whether `value` fails the count rule after `healthy` values, and the words for it."""
    healthy = list(healthy)
    worst = max(healthy, default=0.0)
    top = limit(healthy)
    words = (f"{value:g} against at most {top:g} (the count rule: {1 + COUNT_MARGIN:g} x the "
             f"worst healthy count {worst:g}, at least {COUNT_MIN})")
    return value > top, words

"""Robust statistics of repeated sessions: the median and the spread around it.

The spread is the median absolute deviation scaled to a normal distribution's standard
deviation (1.4826 x MAD), relative to the median: one bad run among several moves neither.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from fabrictest.robust import MAD_TO_SIGMA

#: sessions needed on a side before its noise can be told (and before calibrating)
MIN_SESSIONS = 3


@dataclass(frozen=True)
class Spread:
    n: int
    median: float
    #: robust standard deviation relative to the median (None when n < MIN_SESSIONS or the
    #: median is 0)
    sigma: float | None
    low: float
    high: float

    @property
    def known(self) -> bool:
        return self.sigma is not None


def spread(values: Sequence[float]) -> Spread:
    vals = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not vals:
        raise ValueError("no values")
    med = statistics.median(vals)
    sigma = None
    if len(vals) >= MIN_SESSIONS and med != 0:
        mad = statistics.median(abs(v - med) for v in vals)
        sigma = MAD_TO_SIGMA * mad / abs(med)
    return Spread(len(vals), med, sigma, min(vals), max(vals))


def beyond_noise(base: Spread, target: Spread, factor: float) -> bool | None:
    """Whether target moved from base by more than the noise of both sides: every target
    session outside the range of the base sessions, and the medians apart by more than
    `factor` times their combined relative spread. None when either side has too few
    sessions to tell."""
    if not (base.known and target.known) or base.median == 0:
        return None
    separated = target.high < base.low or target.low > base.high
    change = abs(target.median - base.median) / abs(base.median)
    return separated and change > factor * math.hypot(base.sigma, target.sigma)

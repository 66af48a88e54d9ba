"""A sustained drop over a figure's latest sessions, before a change point can hold it.

A change point needs a rank test at 98 % between two segments; a drop in the latest 2-5
sessions of a 20-session history reaches that only when it is several times the noise, so a
5 % drop at 2 % noise was missed in 56 of 100 figures. This is the one-sided test the
question asks ("is the level of the latest sessions worse than the level before them?"),
tuned to a stated false-alarm rate:

* the window is the latest ``k`` sessions, ``k`` = 2..``WINDOW_MAX``; the baseline is the
  level before it (back to the change point before the window, outliers left out), at least
  ``MIN_BASE`` sessions;
* the window's **worst session is left out** and the rest averaged: a single spike can never
  make the window worse on its own, so a lone bad session is never a sustained drop;
* z = (baseline median - that mean) / (noise x sqrt(1 / (k - 1) + pi / 2 / m)), in the bad
  direction, m the baseline's sessions, the noise the series' robust noise
  (:func:`.changepoints.noise`);
* a drop is named when the largest z over the windows passes ``Z_NAMED`` and its size is at
  least ``NAMED_SHARE`` of the tolerance. ``Z_NAMED`` is the 99.5th percentile of that
  largest z over healthy normal series of 20 sessions (bench/bench_history_oc.py
  --calibrate): 0.5 false alarms per 100 healthy runs on normal noise, leaving the other half
  of the 1-in-100 budget to heavier recorded tails and to the level rule.

Pure: numbers in, a verdict out.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass

#: the longest window of latest sessions tested: past it the drop is a level PELT places
WINDOW_MAX = 5
#: fewest baseline sessions: the baseline median's own error stays under half the noise
MIN_BASE = 8
#: the largest z over the windows on healthy normal noise passes this in 0.5 of 100 runs
#: (bench/bench_history_oc.py --calibrate, 20,000 series of 20 sessions)
Z_NAMED = 2.8
#: a drop shown beyond the noise is named when it is at least this share of the tolerance:
#: the estimate of 1-4 sessions has its own error, and a drop of the tolerance must be caught
#: more often than half the time
NAMED_SHARE = 2 / 3
#: the window the documented target is stated for: a drop caught within 3 runs
TARGET_RUNS = 3


@dataclass
class Shift:
    runs: int  # k: the latest sessions on the lower level
    drop: float  # their level (worst left out) / the baseline - 1, signed
    z: float  # in the bad direction, noise units of the difference
    base: float  # the baseline's median


def _se(noise: float, k: int, m: int) -> float:
    return noise * math.sqrt(1 / (k - 1) + math.pi / 2 / m)


def latest_shift(values: Sequence[float], higher_is_better: bool, noise: float,
                 cuts: Sequence[int] = (), outliers: Collection[int] = ()) -> Shift | None:
    """The most significant window of latest sessions worse than the level before it (None
    when no window has a baseline of MIN_BASE sessions). `cuts`: the change points' first
    indices; `noise`: relative."""
    n = len(values)
    sign = 1.0 if higher_is_better else -1.0
    best: Shift | None = None
    for k in range(2, min(WINDOW_MAX, n - MIN_BASE) + 1):
        start = n - k
        lo = max((c for c in cuts if c < start), default=0)
        base = [v for i, v in enumerate(values[lo:start], lo) if i not in outliers]
        if len(base) < MIN_BASE:
            continue
        level = statistics.median(base)
        if level == 0:
            continue
        window = sorted(sign * v for v in values[start:])  # worst first
        mean = sign * statistics.fmean(window[1:])
        drop = (mean - level) / abs(level)
        z = -sign * drop / max(_se(noise, k, len(base)), 1e-12)
        if best is None or z > best.z:
            best = Shift(k, drop, z, level)
    return best


def named(s: Shift | None, tolerance: float) -> bool:
    return s is not None and s.z > Z_NAMED and abs(s.drop) >= NAMED_SHARE * tolerance


#: the expected largest of k standard normal values (k = 2..5): leaving a window's worst
#: session out lifts the mean of the rest by that / (k - 1) noise units
_LARGEST_OF = {2: 0.564, 3: 0.846, 4: 1.029, 5: 1.163}


def smallest_seen(noise: float, tolerance: float, runs: int = TARGET_RUNS,
                  base: int = 20 - TARGET_RUNS) -> float:
    """The drop a figure of this noise has named, at the median, once `runs` sessions are on
    it (the mean of the runs - 1 best at Z_NAMED standard errors, plus the lift of leaving the
    worst out), never below the share of the tolerance that is named at all. On normal noise
    it is within a run of what bench/bench_history_oc.py measures (docs/regressions.md)."""
    lift = _LARGEST_OF[runs] / (runs - 1) * noise
    return max(Z_NAMED * _se(noise, runs, base) + lift, NAMED_SHARE * tolerance)


def end_level_holds(values: Sequence[float], cut: int, noise: float,
                    cuts: Sequence[int] = (), outliers: Collection[int] = ()) -> bool:
    """Whether a change point at `cut` whose new level is the series' latest 2-WINDOW_MAX
    sessions still stands with the most extreme of them (the way it stepped) left out: a
    spike and one healthy session after it are no level, however the rank test ranked them.
    True for a level longer than that, or without a baseline of MIN_BASE sessions."""
    n = len(values)
    k = n - cut
    if not 2 <= k <= WINDOW_MAX:
        return True
    lo = max((c for c in cuts if c < cut), default=0)
    base = [v for i, v in enumerate(values[lo:cut], lo) if i not in outliers]
    if len(base) < MIN_BASE:
        return True
    level = statistics.median(base)
    if level == 0:
        return True
    window = list(values[cut:])
    down = statistics.fmean(window) < level
    window.sort(reverse=not down)  # the most extreme first
    drop = (statistics.fmean(window[1:]) - level) / abs(level)
    return abs(drop) / max(_se(noise, k, len(base)), 1e-12) > Z_NAMED

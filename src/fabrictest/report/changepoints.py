"""Change points in one figure's series over sessions: where its level stepped, by how much,
and how sure that is.

The method, in order (each step says why):

1. the series is made relative to its median, so that the penalty and the noise read the same
   for 0.19 Gbps and 20,000 MB/s;
2. its noise is told robustly from the differences of neighbouring sessions (1.4826 x MAD of
   the differences / sqrt 2): a step moves one difference and a lone outlier two, so neither
   inflates it; a figure whose values repeat (printed with few digits) has at least half its
   resolution as noise;
3. an interior session far (``SPIKE`` x noise) from the sessions on both its sides, in the same
   direction, is a lone outlier: it is reported, and left out of the segmentation;
4. PELT (ruptures, least-squares cost on the series in units of its noise, segments of at
   least ``MIN_SEGMENT`` sessions) with a BIC-like penalty ``PENALTY x log(n)``: a split must
   explain more than that much of the variance to be kept;
5. each candidate is then tested against the data: a two-sided Mann-Whitney rank test
   between the sessions before and after it (up to the neighbouring change points). Its
   confidence is 1 - p; below ``CONFIDENCE`` it is dropped and the neighbours re-tested. A
   rank test needs no normal noise and is not moved by one wild value.

Pure: numbers in, change points out; no files, no ReFrame.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: fewest sessions in a segment: one session off its neighbours is an outlier, not a level
MIN_SEGMENT = 2
#: fewest sessions in a series before change points are looked for: with 5 on each side of
#: a step the rank test can reach 99% confidence (2 of 252 orderings), with 4 only 97%
MIN_SESSIONS = 10
#: PELT's penalty per change point, times log(n), in units of the noise's variance
PENALTY = 6.0
#: a change point must be at least this sure (1 - the rank test's p-value): 2 sessions on a
#: new level at the end of 15 or more confirm it (1 - 2/105), 3 in a shorter series
CONFIDENCE = 0.98
#: a lone session this many noise units away from both its sides is an outlier
SPIKE = 5.0
#: the noise is never taken below this fraction of the median (a series of equal values)
NOISE_FLOOR = 1e-4
MAD_TO_SIGMA = 1.4826


@dataclass
class ChangePoint:
    index: int  # the first session of the new level (0-based)
    before: float  # median level before (up to the previous change point)
    after: float  # median level after (up to the next change point)
    confidence: float  # 1 - p of the rank test

    @property
    def step(self) -> float:
        """(after - before) / before; infinite, with its sign, from a level of 0 (a loss rate
        that was 0 and is no more)."""
        if self.before:
            return (self.after - self.before) / abs(self.before)
        return math.copysign(math.inf, self.after) if self.after else 0.0


@dataclass
class Segmentation:
    n: int
    noise: float  # relative robust noise of the series
    points: list[ChangePoint] = field(default_factory=list)
    outliers: list[int] = field(default_factory=list)


def noise(values: Sequence[float]) -> float:
    """Relative noise of a series from neighbouring differences (robust to steps and to one
    outlier), never below NOISE_FLOOR, nor below half the figure's resolution when its values
    repeat (a figure printed with two digits, 0.08 and 0.09 GB/s, flickers by one digit:
    that is its noise, not a step)."""
    med = statistics.median(values)
    if med == 0 or len(values) < 3:
        return NOISE_FLOOR
    rel = np.asarray(values, float) / abs(med)
    diffs = np.diff(rel)
    mad = float(np.median(np.abs(diffs - np.median(diffs))))
    sigma = max(MAD_TO_SIGMA * mad / math.sqrt(2), NOISE_FLOOR)
    levels = np.unique(rel)
    if 1 < len(levels) < len(rel):  # repeated values: a quantised figure
        sigma = max(sigma, float(np.min(np.diff(levels))) / 2)
    return sigma


def spikes(rel: np.ndarray, sigma: float) -> list[int]:
    """Interior sessions far from the sessions on both sides, in the same direction."""
    out = []
    for i in range(1, len(rel) - 1):
        left = float(np.median(rel[max(0, i - 2):i]))
        right = float(np.median(rel[i + 1:i + 3]))
        dl, dr = rel[i] - left, rel[i] - right
        if min(abs(dl), abs(dr)) > SPIKE * sigma and dl * dr > 0:
            out.append(i)
    return out


def _rank_confidence(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import mannwhitneyu

    if len(a) < 1 or len(b) < 1:
        return 0.0
    if len(set(a) | set(b)) == 1:
        return 0.0
    p = mannwhitneyu(a, b, alternative="two-sided").pvalue
    return float(1.0 - p) if math.isfinite(p) else 0.0


def segment(values: Sequence[float], *, penalty: float = PENALTY,
            confidence: float = CONFIDENCE) -> Segmentation:
    """Change points of `values` (in session order); needs MIN_SESSIONS finite values."""
    vals = [float(v) for v in values]
    if any(not math.isfinite(v) for v in vals):
        raise ValueError("not a finite number in the series")
    n = len(vals)
    if n < MIN_SESSIONS:
        raise ValueError(f"{n} sessions, {MIN_SESSIONS} needed")
    sigma = noise(vals)
    med = statistics.median(vals)
    rel = np.asarray(vals) / abs(med) if med else np.asarray(vals)
    outliers = spikes(rel, sigma)
    keep = [i for i in range(n) if i not in set(outliers)]
    sig = rel[keep] / sigma  # in noise units
    import ruptures

    algo = ruptures.Pelt(model="l2", min_size=MIN_SEGMENT, jump=1).fit(sig.reshape(-1, 1))
    ends = algo.predict(pen=penalty * math.log(len(keep)))[:-1]  # the last is len(keep)
    cuts = [keep[e] for e in ends]  # in the original indices: first session of a new level
    kept_vals = {i: vals[i] for i in keep}

    def side(lo: int, hi: int) -> list[float]:
        return [kept_vals[i] for i in range(lo, hi) if i in kept_vals]

    # drop the least sure candidate until every one is sure enough
    while True:
        bounds = [0, *cuts, n]
        confs = [_rank_confidence(side(bounds[k], bounds[k + 1]),
                                  side(bounds[k + 1], bounds[k + 2])) for k in range(len(cuts))]
        weak = [k for k, c in enumerate(confs) if c < confidence]
        if not weak:
            break
        cuts.pop(min(weak, key=lambda k: confs[k]))
    bounds = [0, *cuts, n]
    points = [ChangePoint(cuts[k], statistics.median(side(bounds[k], bounds[k + 1])),
                          statistics.median(side(bounds[k + 1], bounds[k + 2])), confs[k])
              for k in range(len(cuts))]
    return Segmentation(n, sigma, points, outliers)

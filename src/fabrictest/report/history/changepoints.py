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
4. PELT (:func:`pelt`: ruptures' least-squares PELT, computed with cumulative sums, on the
   series in units of its noise, segments of at least ``MIN_SEGMENT`` sessions) with a
   BIC-like penalty ``PENALTY x log(n)``: a split must explain more than that much of the
   variance to be kept;
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

from fabrictest.report.records.words import counted
from fabrictest.robust import MAD_TO_SIGMA

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
    """Interior sessions far from the sessions on both sides, in the same direction (each
    side: the median of up to two neighbours)."""
    n = len(rel)
    if n < 3:
        return []
    idx = np.arange(1, n - 1)
    left = np.where(idx >= 2, (rel[np.maximum(idx - 2, 0)] + rel[idx - 1]) / 2, rel[idx - 1])
    right = np.where(idx + 2 <= n - 1, (rel[idx + 1] + rel[np.minimum(idx + 2, n - 1)]) / 2,
                     rel[idx + 1])
    dl, dr = rel[idx] - left, rel[idx] - right
    far = (np.minimum(np.abs(dl), np.abs(dr)) > SPIKE * sigma) & (dl * dr > 0)
    return [int(i) for i in idx[far]]


def pelt(signal: np.ndarray, penalty: float, min_size: int = MIN_SEGMENT) -> list[int]:
    """The optimal segmentation of `signal` under a least-squares cost and a penalty per
    change point (PELT: Killick, Fearnhead and Eckley, JASA 2012), as ruptures'
    ``Pelt(model="l2", min_size, jump=1)`` computes it (tests/report check they agree). Each
    segment's cost comes from cumulative sums (O(1)) and each step's candidates are judged at
    once in preallocated numpy buffers: ruptures' own recomputes a segment's variance for
    every candidate and copies the partitions, which took 16 minutes for 10,000 sessions.
    Without a change point no candidate is ever pruned, so a step is still O(n): 0.15 s for
    10,000 sessions (bench/bench_history_scale.py). Returns the first index of each new
    segment."""
    x = np.asarray(signal, float)
    n = len(x)
    if n < 2 * min_size:
        return []
    x = x - x.mean()  # the cost is shift-invariant; centred sums keep their precision
    s1 = np.concatenate(([0.0], np.cumsum(x)))
    s2 = np.concatenate(([0.0], np.cumsum(x * x)))
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    last = np.zeros(n + 1, dtype=np.int64)
    # the candidates (last change points still admissible): position, s1, s2, best + penalty
    cand = np.empty((4, n + 1))
    m = 0
    u_buf, v_buf, keep_buf = np.empty(n + 1), np.empty(n + 1), np.empty(n + 1, dtype=bool)
    for end in range(min_size, n + 1):
        t = end - min_size
        if t == 0 or t >= min_size:  # a partition of [0, t) exists
            cand[:, m] = (t, s1[t], s2[t], best[t] + penalty)
            m += 1
        u, v, keep = u_buf[:m], v_buf[:m], keep_buf[:m]
        np.subtract(s1[end], cand[1, :m], out=u)  # the segment's sum
        np.multiply(u, u, out=u)
        np.subtract(end, cand[0, :m], out=v)  # its length
        np.divide(u, v, out=u)
        np.subtract(s2[end], cand[2, :m], out=v)
        np.subtract(v, u, out=v)  # its cost: sum of squares about its mean
        np.add(v, cand[3, :m], out=v)
        k = int(v.argmin())
        best[end] = float(v[k])
        last[end] = int(cand[0, k])
        np.less_equal(v, best[end] + penalty, out=keep)  # PELT's pruning
        kept = int(np.count_nonzero(keep))
        if kept < m:
            cand[:, :kept] = cand[:, :m][:, keep]
            m = kept
    cuts, end = [], n
    while end > 0:
        end = int(last[end])
        if end > 0:
            cuts.append(end)
    return sorted(cuts)


def _rank_confidence(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import mannwhitneyu

    if len(a) < 1 or len(b) < 1:
        return 0.0
    if len(set(a) | set(b)) == 1:
        return 0.0
    p = mannwhitneyu(a, b, alternative="two-sided").pvalue
    return float(1.0 - p) if math.isfinite(p) else 0.0


class _Ranks:
    """Rank-test confidences between neighbouring segments, each computed once."""

    def __init__(self, values: np.ndarray):
        self.values = values
        self.cache: dict[tuple[int, int, int], float] = {}

    def confidence(self, lo: int, mid: int, hi: int) -> float:
        key = (lo, mid, hi)
        if key not in self.cache:
            self.cache[key] = _rank_confidence(self.values[lo:mid], self.values[mid:hi])
        return self.cache[key]


def segment(values: Sequence[float], *, penalty: float = PENALTY,
            confidence: float = CONFIDENCE) -> Segmentation:
    """Change points of `values` (in session order); needs MIN_SESSIONS finite values."""
    vals = np.asarray([float(v) for v in values], float)
    if not np.all(np.isfinite(vals)):
        raise ValueError("not a finite number in the series")
    n = len(vals)
    if n < MIN_SESSIONS:
        raise ValueError(f"{counted(n, 'session')}, {MIN_SESSIONS} needed")
    sigma = noise(vals)
    med = float(np.median(vals))
    rel = vals / abs(med) if med else vals
    outliers = spikes(rel, sigma)
    keep = np.ones(n, dtype=bool)
    keep[outliers] = False
    kept_at = np.flatnonzero(keep)  # original index of each kept session
    kept = vals[keep]  # the segments' values, outliers left out
    ends = pelt(rel[keep] / sigma, penalty * math.log(len(kept)))  # in noise units
    cuts = list(ends)  # positions in `kept`: first session of a new level
    ranks = _Ranks(kept)
    # drop the least sure candidate until every one is sure enough (a drop changes only its
    # neighbours' confidences: the others come from the cache)
    while True:
        bounds = [0, *cuts, len(kept)]
        confs = [ranks.confidence(bounds[k], bounds[k + 1], bounds[k + 2])
                 for k in range(len(cuts))]
        weak = [k for k, c in enumerate(confs) if c < confidence]
        if not weak:
            break
        cuts.pop(min(weak, key=lambda k: confs[k]))
    bounds = [0, *cuts, len(kept)]
    points = [ChangePoint(int(kept_at[cuts[k]]),
                          float(np.median(kept[bounds[k]:bounds[k + 1]])),
                          float(np.median(kept[bounds[k + 1]:bounds[k + 2]])), confs[k])
              for k in range(len(cuts))]
    return Segmentation(n, sigma, points, outliers)

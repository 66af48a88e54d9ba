"""Two tests of a group of runs above the rest, for upper.py, where no single run or pair
of directions stands far enough above the median's level on its own.

Both hold the group's mean against the other runs' at the spread *within* the two groups,
so the slow majority's runs give the spread, not the mix of both levels: the fastest pair
measured both ways (`top_pair`, 4 nodes), and the best split of the sorted runs into a
minority above and the rest (`split_level`, 8 to 600 runs: 16 nodes, half at 0.7x).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .params import VerdictParams
from .student import t_isf

#: a healthy cluster's sweep finds its fastest pair above the rest by chance this rarely
#: (each look), and measures it again this rarely
TOP_PAIR_ALPHA = 0.001
TOP_PAIR_AGAIN_ALPHA = 0.05
#: runs besides the fastest pair's its test needs (a spread of their own to stand on)
TOP_PAIR_MIN_REST = 6


@dataclass
class TopPair:
    runs: np.ndarray  # the pair's runs (mask)
    gap: float  # log gap a run needs to count as the level above: half the difference
    center: float  # the pair's mean (log)
    firm: bool  # above at TOP_PAIR_ALPHA (else in doubt: measure it again)


def top_pair(y: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int,
             params: VerdictParams) -> TopPair | None:
    """The pair whose mean stands above every other run's, or None.

    The pair is the fastest of those measured both ways (both directions of a healthy pair
    sit at the healthy level); its mean is held against the other runs' by Student's t
    (equal variances) with the spread pooled within the two groups, Bonferroni over the pairs it was
    chosen from, at TOP_PAIR_ALPHA: the slow majority's runs give the spread, not the mix of
    both levels. The difference must be half the cut too (a practical one). Above only at
    TOP_PAIR_AGAIN_ALPHA it is in doubt: that pair is measured again (the core), each time
    adding two runs to its mean (4 nodes, half at 0.7x, sigma 0.1: t 3.0-3.5 on one pair's
    two runs, 5.3 needed; 6 runs make it 6.9 on average)."""
    a, b = np.minimum(src, dst), np.maximum(src, dst)
    keys, pair_of = np.unique(a * n + b, return_inverse=True)
    fwd = src < dst
    kf = np.bincount(pair_of[fwd], minlength=keys.size)
    kb = np.bincount(pair_of[~fwd], minlength=keys.size)
    both = (kf > 0) & (kb > 0)
    if both.sum() < 2:
        return None
    mean = np.bincount(pair_of, weights=y, minlength=keys.size) / np.maximum(kf + kb, 1)
    top = int(np.argmax(np.where(both, mean, -np.inf)))
    in_top = pair_of == top
    ya, yb = y[in_top], y[~in_top]
    if yb.size < TOP_PAIR_MIN_REST:
        return None
    d = float(ya.mean() - yb.mean())
    cut = -math.log(1.0 - params.min_drop)
    if d <= cut / 2:
        return None
    df = y.size - 2
    ss = float(((ya - ya.mean()) ** 2).sum() + ((yb - yb.mean()) ** 2).sum())
    s = max(math.sqrt(ss / df), params.sigma_floor)
    t = d / (s * math.sqrt(1.0 / ya.size + 1.0 / yb.size))
    m = int(both.sum())
    if t > t_isf(TOP_PAIR_ALPHA / m, df):
        return TopPair(in_top, d / 2, float(ya.mean()), firm=True)
    if t > t_isf(TOP_PAIR_AGAIN_ALPHA / m, df):
        return TopPair(in_top, d / 2, float(ya.mean()), firm=False)
    return None


#: a healthy cluster's runs split into a level above by chance this rarely (each look), and
#: ask for one more screening matching this rarely
SPLIT_ALPHA = 0.001
SPLIT_MORE_ALPHA = 0.1
#: the split's critical values are drawn by Monte Carlo up to this many runs (beyond, the
#: median and the tail's excess see a level above: 1,024 nodes, half at 0.7x)
SPLIT_MAX_RUNS = 600
SPLIT_DRAWS = 20000


def _split_t(ys: np.ndarray) -> np.ndarray:
    """Per row of sorted runs and per split, the two-sample t between the runs above it and
    those below at the spread within the two groups (the upper group 2 runs up to half)."""
    n = ys.shape[-1]
    c1 = np.cumsum(ys, axis=-1)
    c2 = np.cumsum(ys * ys, axis=-1)
    k = np.arange(n - n // 2, n - 1)  # lower group sizes: upper 2 .. n // 2 runs
    n_lo, n_hi = k.astype(float), (n - k).astype(float)
    s_lo = c1[..., k - 1]
    s_hi = c1[..., -1:] - s_lo
    ss = c2[..., -1:] - s_lo ** 2 / n_lo - s_hi ** 2 / n_hi
    s = np.sqrt(np.maximum(ss, 1e-300) / (n - 2))
    return (s_hi / n_hi - s_lo / n_lo) / (s * np.sqrt(1.0 / n_lo + 1.0 / n_hi))


@functools.lru_cache(maxsize=512)
def _split_critical(n: int) -> tuple[float, float]:
    """The split's t that one healthy sweep's look in 1 / SPLIT_ALPHA (1 / SPLIT_MORE_ALPHA)
    exceeds: n normal runs of one level, drawn once per run count (the t is free of level
    and spread; 0.03 s at 16 runs, 0.44 s at 600, once per run count a process sees)."""
    rng = np.random.default_rng(n)
    t = np.empty(SPLIT_DRAWS)
    for i in range(0, SPLIT_DRAWS, 2000):  # in blocks: 20,000 x 600 runs at once is 96 MB
        t[i:i + 2000] = _split_t(np.sort(rng.standard_normal((2000, n)), axis=1)).max(axis=1)
    return (float(np.quantile(t, 1.0 - SPLIT_ALPHA)),
            float(np.quantile(t, 1.0 - SPLIT_MORE_ALPHA)))


@dataclass
class Split:
    runs: np.ndarray  # the runs above the split (mask)
    gap: float  # log gap a run needs to count as the level above: half the difference
    center: float  # the upper group's mean (log)
    firm: bool  # beyond SPLIT_ALPHA (else beyond SPLIT_MORE_ALPHA: one more matching)


def split_level(y: np.ndarray, c0: float, params: VerdictParams) -> Split | None:
    """The runs split into a minority well above the rest, or None.

    The largest two-sample t over the splits of the sorted runs (the upper group 2 runs to
    half of them), at the spread within the two groups, against what normal runs of one
    level reach at SPLIT_ALPHA, drawn by Monte Carlo for this many runs: the slow majority's
    runs give the spread, not the mix of both levels (16 nodes, half at 0.7x, sigma 0.1:
    the median between both levels and every other test within its noise). Beyond
    SPLIT_MORE_ALPHA only, it asks for one more screening matching. The upper group's mean
    must stand above `c0` by half the cut too (a practical difference)."""
    n = y.size
    if n < 8 or n > SPLIT_MAX_RUNS:
        return None
    order = np.argsort(y, kind="stable")
    t = _split_t(y[order])
    best = int(np.argmax(t))
    firm_t, more_t = _split_critical(n)
    if t[best] <= more_t:
        return None
    k_lo = n - n // 2 + best  # runs below the split
    hi_mean = float(y[order[k_lo:]].mean())
    lo_mean = float(y[order[:k_lo]].mean())
    cut = -math.log(1.0 - params.min_drop)
    if hi_mean - c0 <= cut / 2:
        return None
    runs = np.zeros(n, dtype=bool)
    runs[order[k_lo:]] = True
    return Split(runs, (hi_mean - lo_mean) / 2, hi_mean, firm=bool(t[best] > firm_t))

"""The level above the median's: the cluster's healthy level when a slow share of the nodes
holds the median (level.py weighs the rest).

A slow side only pulls runs down, so runs above the median's level by more than its noise
are the healthy level's, a node cannot beat its healthy link. They are found three ways:
one run far above (held in doubt, that pair measured again), both directions of a pair
above, or many runs a little above (more above 2 spreads than one level's noise puts
there: half the cluster at 0.7x). The spread they are held against is a pair's two
directions' where it is the lower (both share their level unless one node is slow one way
only): the spread pooled around the median mixes both levels (0.27 for a true 0.1 with
half the cluster at 0.7x).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..robust import MAD_TO_SIGMA
from .params import VerdictParams
from .upper_groups import split_level, top_pair

_NORMAL = NormalDist()


@dataclass
class UpperMode:
    """A level above the one most runs sit at, reached by a group of nodes with each other.

    A slow side only pulls runs down, so runs well above the cluster's median are evidence of
    the healthy level and not noise when they come from several pairs: with half the cluster
    slow, the median is the slow nodes' figure and the healthy half's runs with each other
    are the only healthy ones (8 of 16 nodes at 0.3x: `suspects: none` against the median)."""

    center: float  # log level of the runs among the nodes that reach it
    below: float  # log level most runs sit at (the median's)
    runs: int  # runs the upper level stands on
    pairs: int  # distinct node pairs among them
    nodes: list[int]  # nodes with a side that reaches it
    threshold: float  # log gap a run needed to count as above the median's level
    #: a tail above the level too heavy for noise but too light to stand on (in doubt)
    suggested: bool = False
    #: found from many runs a little above (the tail's excess), not from runs far above
    wide: bool = False
    #: suggested beyond what one healthy sweep in 100 (tail) or 1,000 (asymmetry) shows: the
    #: sweep ends `undecidable` on it; otherwise it only asks for more screening
    firm: bool = True
    #: the fastest pair above the rest but in doubt (top_pair): measure it again
    again: bool = False


def upper_bound(sigma: float, runs: int, params: VerdictParams) -> float:
    """The spread at its upper bound (2 standard errors of a MAD-based sigma, 1.17 sigma /
    sqrt(n)), floored: a small cluster's lucky low spread names nobody."""
    return max(sigma, params.sigma_floor) * (1.0 + 2.33 / math.sqrt(max(runs, 1)))


def pair_spread(y: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int,
                params: VerdictParams) -> float | None:
    """The spread of one run from the two directions of each pair, at its upper bound, or None
    with too few pairs. Both directions of a pair share their level unless one node is slow
    one way only, so their difference is noise whatever share of the cluster is slow: the
    pooled spread is not (with half the cluster at 0.7x it mixes both levels, 0.27 for a
    true 0.1, and hid the healthy level within it)."""
    a, b = np.minimum(src, dst), np.maximum(src, dst)
    keys, pair_of = np.unique(a * n + b, return_inverse=True)
    fwd = src < dst
    sf = np.bincount(pair_of[fwd], weights=y[fwd], minlength=keys.size)
    kf = np.bincount(pair_of[fwd], minlength=keys.size)
    sb = np.bincount(pair_of[~fwd], weights=y[~fwd], minlength=keys.size)
    kb = np.bincount(pair_of[~fwd], minlength=keys.size)
    both = (kf > 0) & (kb > 0)
    if both.sum() < MIN_SPREAD_PAIRS:
        return None
    d = sf[both] / kf[both] - sb[both] / kb[both]
    # each direction's mean of kf (kb) runs: var(d) = sigma^2 (1/kf + 1/kb)
    scale = np.sqrt(1.0 / kf[both] + 1.0 / kb[both])
    sigma = MAD_TO_SIGMA * float(np.median(np.abs(d) / scale))
    return upper_bound(sigma, int(both.sum()), params)


#: pairs measured both ways a spread from their differences stands on
MIN_SPREAD_PAIRS = 6
#: a sweep of a healthy cluster finds an upper level by chance this rarely (each test)
UPPER_ALPHA = 0.001


def _tail_excess(y: np.ndarray, c0: float, sigma: float) -> tuple[np.ndarray, float]:
    """The runs above `c0` by more than 2 spreads when there are far more of them than one
    level's noise puts there (a binomial test at UPPER_ALPHA), else none. A slow side only
    pulls runs down, so an excess above is a level of its own: with half the cluster at 0.7x
    its healthy runs sit 3.6 spreads above the slow ones, no single run far enough above the
    median to stand out, but a fifth of all runs above its 2 spreads, where noise puts 2 %."""
    t = 2.0 * sigma
    above = y > c0 + t
    m = int(above.sum())
    nn = y.size
    p0 = _NORMAL.cdf(-2.0)
    # a practical excess too: on 200,000 runs a 0.1 % shift is significant
    if m < 2 or m < EXCESS * nn * p0:
        return np.zeros(y.size, dtype=bool), 1.0
    p = _binom_sf(m, nn, p0)
    return (above if p < UPPER_ALPHA else np.zeros(y.size, dtype=bool)), p


#: an upper tail at least this many times what one level's noise puts above 2 spreads
EXCESS = 3.0


def _binom_sf(m: int, n: int, p: float) -> float:
    """P(Binomial(n, p) >= m), summed in logs (n up to a few hundred thousand runs)."""
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lp
             + (n - j) * lq for j in range(m, min(n, m + 400) + 1)]
    top = max(terms)
    return math.exp(top) * sum(math.exp(t - top) for t in terms)


def upper_mode(y: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int, c0: float,
               sigma: float, params: VerdictParams,
               point_sigma: float | None = None, pair_again: bool = True
               ) -> UpperMode | None:
    """The level a group of nodes reaches with each other well above `c0`, or None.

    A run counts as above when it is over `c0` by more than the cut (`min_drop`) and by more
    than the largest of the runs' noise (the z that one run in a hundred sweeps exceeds,
    Bonferroni over the runs): on a healthy cluster no run is. A side reaches the upper level
    when its best run is within half that gap of it; the level is the median of the runs
    between sides that reach it, until it settles. With `pair_again` false (the fastest pair
    measured again as often as the sweep does), a top pair still in doubt is noise."""
    if y.size < 2:
        return None
    again: UpperMode | None = None  # the fastest pair in doubt: measured again (core)
    z_hi = -_NORMAL.inv_cdf(0.01 / y.size)
    cut = -math.log(1.0 - params.min_drop)
    gap = max(cut, z_hi * sigma)
    high = y > c0 + gap
    # both directions of one pair above: noise puts both there with the square of one run's
    # chance, so a pair's lower run needs only the z that one pair in a hundred sweeps
    # exceeds (4 nodes, half at 0.7x: 1.43x above the median, under the one-run gap of 1.7x)
    lo_pair, pair_of = _pair_lows(y, src, dst, n)
    if lo_pair.size:
        z_pair = -_NORMAL.inv_cdf(math.sqrt(0.01 / lo_pair.size))
        gap_pair = max(cut, z_pair * sigma)
        both = lo_pair > c0 + gap_pair
        if both.any():
            gap = min(gap, gap_pair)
            high |= both[pair_of]
    if high.sum() < 2:
        # the fastest pair's mean against the other runs', a two-sample t test at the
        # spread within the two groups (4 nodes, half at 0.7x, sigma 0.1: the spread's upper
        # bound from 6 pairs' differences, twice the true one, held the pair within noise)
        top = top_pair(y, src, dst, n, params)
        if top is not None and top.firm:
            high |= top.runs
            gap = min(gap, top.gap)
        elif top is not None and pair_again:
            nodes = sorted({int(src[top.runs][0]), int(dst[top.runs][0])})
            again = UpperMode(center=top.center, below=c0, runs=int(top.runs.sum()), pairs=1,
                              nodes=nodes, threshold=top.gap, again=True)
    split = split_level(y, c0, params) if high.sum() < 2 else None
    if split is not None and split.firm:
        high |= split.runs
        gap = min(gap, split.gap)
    # many runs a little above, where no one run is far enough: a level of their own
    excess, p_excess = _tail_excess(y, c0, sigma)
    if high.sum() >= 2:  # runs far above already: the level is theirs, as before
        excess[:] = False
    excess &= ~high
    if excess.any():
        gap = min(gap, max(2.0 * sigma, cut / 2))
        high |= excess
    if high.sum() <= 1 and point_sigma is not None:
        # one run above by the z one healthy sweep in twenty reaches, at the spread's point
        # estimate: not enough to stand on, enough to measure that pair again (the core's
        # repeat); measured again, every run of that direction above at the z one healthy
        # sweep in a hundred reaches for two runs
        sig = max(point_sigma, params.sigma_floor)
        trig = y > c0 + max(cut, -_NORMAL.inv_cdf(0.05 / y.size) * sig)
        key = src * n + dst
        uk, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        lo = np.full(uk.size, np.inf)
        np.minimum.at(lo, inv, y)
        rep = (cnt >= 2) & (lo > c0 + max(cut, -_NORMAL.inv_cdf(
            math.sqrt(0.01 / y.size)) * sig))
        if rep.any():
            high = rep[inv]
            gap = max(cut, -_NORMAL.inv_cdf(math.sqrt(0.01 / y.size)) * sig)
        elif trig.sum() == 1 and not high.any():
            high = trig
    if high.sum() == 1:  # one run far above: noise, or the one healthy pair? (in doubt)
        j = int(np.flatnonzero(high)[0])
        if ((src == src[j]) & (dst == dst[j])).sum() > 1:
            high[:] = False  # measured again and not above again: that run was noise (a
            # split or a suggestion may still stand on the rest)
        else:
            return UpperMode(center=float(y[j]), below=c0, runs=1, pairs=1,
                             nodes=sorted({int(src[j]), int(dst[j])}), threshold=gap)

    def in_doubt() -> UpperMode | None:
        """No level above to stand on: a suggestion of one (the tail, the asymmetry, the
        split: more screening), or the top pair in doubt (measured again)."""
        sug = _suggested(y, src, dst, c0, sigma, p_excess, params)
        if sug is None and split is not None:  # in doubt: one more screening matching
            nodes = np.unique(np.concatenate([src[split.runs], dst[split.runs]])).tolist()
            sug = UpperMode(center=split.center, below=c0, runs=int(split.runs.sum()),
                            pairs=0, nodes=nodes, threshold=split.gap, suggested=True,
                            firm=False)
        return again if again is not None and (sug is None or not sug.firm) else sug

    if high.sum() < 2:
        return in_doubt()
    n2 = 2 * n
    ds, dr = 2 * src, 2 * dst + 1
    best = np.full(n2, -np.inf)
    np.maximum.at(best, ds, y)
    np.maximum.at(best, dr, y)
    c = float(np.median(y[high]))
    sup = high
    for _ in range(8):
        reach = best >= c - gap / 2
        sup = reach[ds] & reach[dr]
        if not sup.any():
            return in_doubt()
        c_new = float(np.median(y[sup]))
        if c_new == c:
            break
        c = c_new
    rest = float(np.median(y[~sup])) if (~sup).any() else c0
    # the upper level stands clear of the median's by the gap, or (a level of many runs a
    # little above) of the other runs' level by the cut: a practical difference
    if c - c0 <= gap and not (excess.any() and c - rest > cut):
        return in_doubt()
    a, b = np.minimum(src[sup], dst[sup]), np.maximum(src[sup], dst[sup])
    pairs = int(np.unique(a * n + b).size)
    nodes = np.unique(np.concatenate([src[sup], dst[sup]])).tolist()
    return UpperMode(center=c, below=c0, runs=int(sup.sum()), pairs=pairs, nodes=nodes,
                     threshold=gap, wide=bool(excess.any()))


#: an upper tail this unlikely for one level holds the level in doubt: more screening, and
#: `undecidable` when the matchings run out (a healthy sweep ends in doubt about this rarely)
DOUBT_ALPHA = 0.01


#: runs below which the quantiles' asymmetry says nothing (its law is calibrated from 24 up)
MIN_ASYMMETRY_RUNS = 24
#: log((q90 - median) / (median - q10)) of n normal runs has a spread of 2.07 / sqrt(n)
#: (20,000 draws each at n = 32 to 2,048: 2.06-2.08); 3.09 of them, one healthy sweep in
#: 1,000, says `undecidable`; 1.64, one in 20, asks for one more screening matching
ASYMMETRY_SPREAD = 2.07
ASYMMETRY_Z = 3.09
ASYMMETRY_Z_MORE = 1.64


def upper_heavy(y: np.ndarray, c0: float, cut: float, z: float = ASYMMETRY_Z) -> bool:
    """The runs' upper tail far longer than their lower one, beyond what one level's noise
    does, whatever the spread: slow sides only lengthen the lower tail, so this is a level
    above the median's (with half of 64 nodes at 0.7x, sigma 0.1, half the sweeps show it
    after screening, and the more matchings it asks for show it in every one)."""
    if y.size < MIN_ASYMMETRY_RUNS:
        return False
    # around the level found so far (the median's, unless clearly slow sides were left
    # out of it: then it is above most runs, and no longer a reason to look higher)
    q10, q90 = np.quantile(y, (0.1, 0.9)).tolist()
    hi, lo = q90 - c0, c0 - q10
    if hi < cut / 2:  # a practical difference too: the upper tail half the cut long
        return False
    return lo <= 0 or math.log(hi / lo) > z * ASYMMETRY_SPREAD / math.sqrt(y.size)


def _suggested(y, src, dst, c0: float, sigma: float, p: float,
               params: VerdictParams) -> UpperMode | None:
    """An upper tail too heavy for one level but too light to stand on: in doubt, or None."""
    cut = -math.log(1.0 - params.min_drop)
    firm = p < DOUBT_ALPHA or upper_heavy(y, c0, cut)
    if not (firm or upper_heavy(y, c0, cut, ASYMMETRY_Z_MORE)):
        return None
    above = y > c0 + 2.0 * sigma
    if not above.any():
        above = y >= np.quantile(y, 0.9)
    nodes = np.unique(np.concatenate([src[above], dst[above]])).tolist()
    return UpperMode(center=float(np.median(y[above])), below=c0, runs=int(above.sum()),
                     pairs=0, nodes=nodes, threshold=2.0 * sigma, suggested=True, firm=firm)


def _pair_lows(y: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per unordered pair measured both ways, the lower of its two directions' best runs
    (-inf for a pair measured one way only), and each run's pair index."""
    a, b = np.minimum(src, dst), np.maximum(src, dst)
    keys, pair_of = np.unique(a * n + b, return_inverse=True)
    fwd = src < dst
    best_f = np.full(keys.size, -np.inf)
    best_b = np.full(keys.size, -np.inf)
    np.maximum.at(best_f, pair_of[fwd], y[fwd])
    np.maximum.at(best_b, pair_of[~fwd], y[~fwd])
    return np.minimum(best_f, best_b), pair_of

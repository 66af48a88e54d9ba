"""The cluster's healthy level and the spread of one run, robust to any share of slow runs.

A run's figure is the lower of its sender's send capacity and its receiver's receive
capacity, times noise: slow sides only ever pull runs *down*. On a small cluster one node
slow both ways is in half the runs (4 nodes, 2 screening rounds: 4 of 8), so a median of the
runs lands between the healthy and the slow figure, the spread around it balloons, and the
slow node is cleared against a level it dragged down itself (the blind spot of the first
design, which left a side out only when even its best run was below half the typical one).

Here the level is found the way an operator reads the table:

1. start from the median of the nodes' best runs (a healthy node's best run is healthy
   unless every one of its partners was slow);
2. a side (a node's send or its receive) whose *clean* runs average clearly below that level
   is left out: below `1 - min_drop / 2` of it (halfway to the cut that names a side) and, once
   a spread is known, by more than `z_out` of its standard error. A run is clean for a side
   when its partner's other runs (leave-this-one-out) do not look slow, so the healthy
   partner of a slow node is not left out with it;
3. the level is the median of the runs that touch no left-out side; repeat from 2 until the
   left-out sides no longer change.

The spread of one run is pooled from every run, each against what explains it: a clean run
against the level, a run of a left-out side against that side's own mean (scaled for the
degree of freedom its mean took). A node slow both ways on 4 nodes thus adds its runs to the
spread instead of inflating it. The spread is a MAD, floored, and taken at its upper bound
(2 standard errors of the estimate), so a small cluster's lucky low spread names nobody.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..robust import MAD_TO_SIGMA
from .params import VerdictParams
from .runs import OK, RunTable
from .upper import UpperMode, pair_spread, upper_bound, upper_mode

_NORMAL = NormalDist()
#: runs a level above the median's must stand on: both directions of one pair are enough (a
#: node cannot beat its healthy link, so the faster level is the healthy one); a single run
#: far above the rest is held in doubt until another matching adds evidence
MIN_UPPER_RUNS = 2


@dataclass
class UpperLevel:
    """:class:`UpperMode` as figures and names, for the verdict and the JSON."""

    center: float
    below: float
    runs: int
    pairs: int
    nodes: list[str]
    adopted: bool
    #: log ratio to `center` a side's best run reaches when it reaches the level; None when
    #: the level was found from many runs a little above it (the tail's excess): there a slow
    #: side's best of 8 runs reaches half the gap in 4 % of sides (1,024 nodes, all but 3 at
    #: 0.7x: 28 healthy sides named beside them), so reaching it shows nothing
    reach: float | None = 0.0
    #: runs above it more than one level's noise puts there, too few to stand on
    suggested: bool = False
    #: the suggestion holds at the level that ends a sweep `undecidable` (else more screening)
    firm: bool = True
    #: the fastest pair above the rest, in doubt: that pair is measured again
    again: bool = False


@dataclass
class Level:
    """The cluster's level and spread, and the cuts derived from them (cuts are log ratios)."""

    center: float | None
    sigma: float
    clean_runs: int
    source: str  # "runs" or "expect"
    cut: float  # log(1 - min_drop): practical cut
    budget: int  # the most clean runs a side can get (max rounds)
    looks: int  # decisions taken (after each round from the last screening one on)
    q_look: float  # the false discovery rate of one look: fdr / looks
    z_family: float  # z of one side at family-wise level q_look over all sides
    z_power: float
    left_out: int = 0  # node-directions left out of the level (clearly slow)
    spread_runs: int = 0  # runs the spread was pooled from
    #: a level well above the median's that some nodes reach with each other (the level, when
    #: adopted; otherwise one pair too few to stand on)
    upper: UpperLevel | None = None

    def design_for(self, z: float) -> float:
        """The drop a `budget`-run test resolves at threshold z, `z_power` to spare (log)."""
        return min(self.cut, -(z + self.z_power) * self.sigma / math.sqrt(self.budget))

    @property
    def design(self) -> float:
        """The design drop before any discovery (family-wise threshold)."""
        return self.design_for(self.z_family)

    @property
    def explain(self) -> float:
        """A partner whose other runs average below this explains a low run."""
        return self.design / 2

    @property
    def in_doubt(self) -> bool:
        """One pair far above every other run: a slow majority, or two fast nodes?"""
        return self.upper is not None and not self.upper.adopted

    def limit(self, log_ratio: float) -> float | None:
        return None if self.center is None else self.center * math.exp(log_ratio)


def _bincount(idx: np.ndarray, w: np.ndarray, n2: int) -> np.ndarray:
    return np.bincount(idx, weights=w.astype(np.float64), minlength=n2)


def side_means(x: np.ndarray, ds: np.ndarray, dr: np.ndarray, n2: int, low: float,
               out: np.ndarray | None = None):
    """Per side, the mean of x over its clean runs and their count; and per run whether it is
    clean for its sender's send side and for its receiver's receive side. A run is left out
    of a side when the partner's other runs average below `low`, or the partner is `out`."""
    clean_s = np.ones(x.size, dtype=bool)
    clean_r = np.ones(x.size, dtype=bool)
    out = np.zeros(n2, dtype=bool) if out is None else out
    for _ in range(4):
        S = _bincount(ds, x * clean_s, n2) + _bincount(dr, x * clean_r, n2)
        K = _bincount(ds, clean_s, n2) + _bincount(dr, clean_r, n2)
        with np.errstate(invalid="ignore", divide="ignore"):
            loo_r = (S[dr] - x * clean_r) / (K[dr] - clean_r)
            loo_s = (S[ds] - x * clean_s) / (K[ds] - clean_s)
            new_s = ~((loo_r < low) | out[dr])
            new_r = ~((loo_s < low) | out[ds])
        if np.array_equal(new_s, clean_s) and np.array_equal(new_r, clean_r):
            break
        clean_s, clean_r = new_s, new_r
    S = _bincount(ds, x * clean_s, n2) + _bincount(dr, x * clean_r, n2)
    K = _bincount(ds, clean_s, n2) + _bincount(dr, clean_r, n2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(K > 0, S / np.maximum(K, 1), np.nan)
    return mean, K, clean_s, clean_r


def _pooled_residuals(y: np.ndarray, ds, dr, out: np.ndarray, mean: np.ndarray,
                      k: np.ndarray, center: float) -> np.ndarray:
    """Each run against what explains it: the level (clean runs), or the lower left-out
    side's own mean, scaled by sqrt(k / (k - 1)) for the mean it is part of (k >= 2)."""
    res = y - center
    keep = np.ones(y.size, dtype=bool)
    touched = out[ds] | out[dr]
    if touched.any():
        ms = np.where(out[ds], mean[ds], np.inf)
        mr = np.where(out[dr], mean[dr], np.inf)
        by_send = ms <= mr
        side = np.where(by_send, ds, dr)
        kk = k[side]
        own = y - mean[side]
        with np.errstate(invalid="ignore", divide="ignore"):
            scaled = own * np.sqrt(kk / np.maximum(kk - 1, 1))
        res = np.where(touched, scaled, res)
        keep &= ~touched | ((kk >= 2) & np.isfinite(scaled))
    return res[keep]


def _iterate(y, ds, dr, n2, params, c, fixed, cap_share):
    """Leave out the clearly slow sides, take the level of the rest (unless `fixed`) and the
    pooled spread, until the left-out sides no longer change."""
    low = math.log(1.0 - params.min_drop / 2)
    out = np.zeros(n2, dtype=bool)
    sigma: float | None = None
    clean = np.ones(y.size, dtype=bool)
    res = np.zeros(0)
    for _ in range(8):
        mean, k, _s, _r = side_means(y - c, ds, dr, n2, low)
        side_y = mean + c  # the sides' means as log figures (c moves below)
        with np.errstate(invalid="ignore"):
            new = (k > 0) & (mean < low)
            if sigma is not None:  # once a spread is known: clearly, not by chance
                new &= mean * np.sqrt(np.maximum(k, 1)) < -params.z_out * sigma
        # one whole node may be left out even on 3 nodes (a quarter of 6 sides is 1)
        cap = max(int(cap_share * n2), 2 if n2 >= 6 else 0)
        if new.sum() > cap:  # the lowest ones only: a level needs a majority to stand on
            z = np.where(new, mean * np.sqrt(np.maximum(k, 1)), np.inf)
            keep = np.argsort(z, kind="stable")[:cap]
            new[:] = False
            new[keep] = True
        clean = ~new[ds] & ~new[dr]
        if not clean.any():  # every run touches a slow side: nothing to stand on
            new[:] = False
            clean[:] = True
        if not fixed:
            c = float(np.median(y[clean]))
        mid = float(np.median(y[clean])) if fixed else c
        res = _pooled_residuals(y, ds, dr, new, side_y, k, mid)
        sigma = MAD_TO_SIGMA * float(np.median(np.abs(res))) if res.size else 0.0
        if np.array_equal(new, out):
            break
        out = new
    return c, sigma or 0.0, int(clean.sum()), int(out.sum()), int(res.size)


@dataclass
class LevelFit:
    center: float  # log
    sigma: float
    clean_runs: int
    left_out: int
    spread_runs: int
    upper: UpperMode | None = None  # found above the median's level
    adopted: bool = False  # the level is the upper one


def robust_level(values: np.ndarray, src: np.ndarray, dst: np.ndarray, n: int,
                 params: VerdictParams, expect: float | None = None,
                 pair_again: bool = True) -> LevelFit:
    """The level and spread of OK runs (log), the sides left out, and any upper level."""
    y = np.log(values)
    n2 = 2 * n
    ds, dr = 2 * src, 2 * dst + 1
    # start from the median of the nodes' best runs: a healthy node's best run is healthy
    # unless every one of its partners was slow
    best = np.full(n, -np.inf)
    np.maximum.at(best, src, y)
    np.maximum.at(best, dst, y)
    c = math.log(expect) if expect else float(np.median(best[np.isfinite(best)]))
    fit = LevelFit(*_iterate(y, ds, dr, n2, params, c, bool(expect), params.max_left_out))
    if expect:
        return fit
    spread = upper_bound(fit.sigma, fit.spread_runs, params)
    by_pairs = pair_spread(y, src, dst, n, params)
    spread = spread if by_pairs is None else min(spread, by_pairs)
    up = upper_mode(y, src, dst, n, fit.center, spread, params, point_sigma=fit.sigma,
                    pair_again=pair_again)
    if up is None:
        return fit
    if up.runs < MIN_UPPER_RUNS or up.suggested or up.again:  # noise, or a slow majority?
        fit.upper = up
        return fit
    # the level stands on the runs that reach it: every other side may be left out
    out = LevelFit(*_iterate(y, ds, dr, n2, params, up.center, True, 1.0), upper=up,
                   adopted=True)
    out.clean_runs = up.runs
    return out


def estimate_level(table: RunTable, params: VerdictParams, expect: float | None,
                   budget: int, looks: int = 1, pair_again: bool = True) -> Level:
    """Level and spread from the screening runs (all runs when screening has too few).
    Extra rounds measure a biased selection of nodes, and on a loaded machine fewer
    concurrent pairs run faster. `pair_again` false: the fastest pair has been measured
    again as often as the sweep does, and one still only in doubt is noise."""
    n = len(table.nodes)
    ok = (table.status == OK) & (table.value > 0) & np.isfinite(table.value)
    sel = ok & table.screening()
    if sel.sum() < params.min_clean:
        sel = ok
    center: float | None = expect
    sigma = params.sigma_small
    clean_n = left_out = spread_n = 0
    fit = None
    if sel.any():
        fit = robust_level(table.value[sel], table.src[sel], table.dst[sel], n, params, expect,
                           pair_again)
        sigma, clean_n, left_out, spread_n = (fit.sigma, fit.clean_runs, fit.left_out,
                                              fit.spread_runs)
        center = expect or math.exp(fit.center)
        if spread_n < params.min_clean:
            sigma = max(sigma, params.sigma_small)
    sigma = upper_bound(sigma, spread_n, params)
    q_look = params.fdr / looks
    names = table.nodes
    upper = fit.upper if fit is not None else None
    return Level(center=center, sigma=sigma, clean_runs=clean_n,
                 source="expect" if expect else "runs", cut=math.log(1.0 - params.min_drop),
                 budget=budget, looks=looks, q_look=q_look,
                 z_family=-_NORMAL.inv_cdf(q_look / (2 * n)), z_power=params.z_power,
                 left_out=left_out, spread_runs=spread_n,
                 upper=None if upper is None else UpperLevel(
                     center=math.exp(upper.center), below=math.exp(upper.below),
                     runs=upper.runs, pairs=upper.pairs,
                     nodes=[names[i] for i in upper.nodes], adopted=fit.adopted,
                     reach=None if upper.wide else -upper.threshold / 2,
                     suggested=upper.suggested, firm=upper.firm, again=upper.again))

"""The statistics of the sweep: from one-way runs to a state for each node-direction.

Model. A run from `s` to `d` measures min(send capacity of s, receive capacity of d) times
log-normal noise: x = log(figure / cluster level) = min(t_s, r_d) + e, e ~ N(0, sigma^2),
independent between runs. A healthy side has t = 0; a slow one t = log(factor) < 0.

Per node-direction ("side": a node's send or its receive), the evidence is the mean m of its
*clean* runs: runs whose partner side is not itself slow. A low run whose partner's other
runs (leave-this-one-out mean) say the partner is slow is explained by the partner and left
out (a run near the level is never: a slow partner does not make it),
so a healthy node paired with a slow one is not dragged down, and the slow one keeps all its
evidence. Failed runs are handled the same way: a failure is charged to a side unless the
partner side fails with its other partners too.

Decision for a side with k clean runs (s_k = sigma / sqrt(k)):
* slow: m is at least `min_drop` below the level (practical) and significant. The p-values
  P(N(0, s_k) <= m) of all 2N sides go through Benjamini-Hochberg at `fdr` / looks (the
  decisions after each round from the last screening one on), so that on 100,000 nodes the
  expected share of false suspects among the named stays below `fdr` over the whole sweep
  (with no slow node it is family-wise control). At least `min_runs` clean runs, and a
  partner whose side is cleared ("confirmed"); suspects are weighed afresh at every look.
* unreachable: at least 2 charged failures and more failures than clean runs.
* cleared (ok): m rules out the slowdown this sweep is designed to find within its round
  budget K (`design` = the larger of `min_drop` and the drop a K-run test resolves at the z
  Benjamini-Hochberg needs, with `z_power` to spare), with `z_clear` standard errors of
  margin; and, where that drop is the cut, m rules out `clear_gap` below it (0.70x) at
  `clear_alpha` over all looks (a true 0.70x side with 2 runs at sigma 0.1 cleared 1 time
  in 125 on the first rule alone). A cleared side stays cleared (a sequential test stops at
  its decision).
* otherwise ambiguous: measured again with new, cleared partners (extra rounds) until the
  budget is spent; then it is slow if significant, else ok but `borderline` in the table.
A side with no clean run at the end, or a single one that looks slow, is `undecided`: the
sweep cannot vouch for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .level import Level, estimate_level
from .params import VerdictParams
from .runs import FAILED, OK, TIMEOUT, RunTable

# side states
CLEARED, SLOW, UNREACHABLE, AMBIGUOUS, BORDERLINE, UNDECIDED, UNMEASURED = range(7)
STATE = ("ok", "slow", "unreachable", "ambiguous", "borderline", "undecided", "unmeasured")
_NORMAL = NormalDist()


def _never_cleared(design: float, cut: float, params: VerdictParams) -> float:
    """The log level `clear_gap` below the cut (0.70x at 0.75x), where a direction clears by
    chance less often than `clear_alpha`; only where the round budget resolves the cut (the
    design drop is the cut): at a spread it does not (sigma 0.28 on 3-8 nodes) the sweep's
    resolution is the design drop, and the summary says so."""
    if design < cut:
        return -math.inf
    return math.log(max(math.exp(cut) - params.clear_gap, 1e-6))


@dataclass
class Evidence:
    """Per side (index 2 * node + direction, direction 0 = send, 1 = receive)."""

    level: Level
    state: np.ndarray
    k: np.ndarray  # clean OK runs
    mean: np.ndarray  # mean log ratio of the clean runs (NaN when k == 0)
    charged: np.ndarray  # failed runs charged to this side
    runs: np.ndarray  # all runs of this side (interrupted ones excluded)
    slow: np.ndarray  # OK runs below the practical cut (clean or not)
    failed: np.ndarray  # failed or timed-out runs
    confirmed: np.ndarray  # a clean (or charged) run with a cleared partner side
    unconfirmed: np.ndarray  # slow or unreachable, held back until a cleared partner confirms
    clean_src: np.ndarray  # per run: counts for the sender's send side
    clean_dst: np.ndarray  # per run: counts for the receiver's receive side
    x: np.ndarray  # per run: log ratio (NaN when not OK)
    design: float  # the drop ruled out before clearing, at this look (log ratio)
    z_bh: float  # the z a side needed to be named at this look

    def figure(self, side: int) -> float | None:
        if self.k[side] == 0 or self.level.center is None:
            return None
        return float(self.level.center * math.exp(self.mean[side]))


def _bh_reject(z: np.ndarray, m: int, q: float) -> tuple[np.ndarray, float]:
    """Benjamini-Hochberg over m tests, given one-sided z (low = slow; NaN never rejects):
    the rejections and the |z| threshold used (that of R = 1 when nothing is rejected)."""
    out = np.zeros(z.shape, dtype=bool)
    cand = np.flatnonzero(z < _NORMAL.inv_cdf(q))  # p > q is never rejected
    if cand.size == 0:
        return out, -_NORMAL.inv_cdf(q / m)
    p = np.array([0.5 * math.erfc(-zz / math.sqrt(2.0)) for zz in z[cand].tolist()])
    order = np.argsort(p)
    ranks = np.arange(1, p.size + 1)
    ok = p[order] <= q * ranks / m
    if not ok.any():
        return out, -_NORMAL.inv_cdf(q / m)
    last = int(np.flatnonzero(ok)[-1])
    out[cand[order[: last + 1]]] = True
    return out, -_NORMAL.inv_cdf(q * (last + 1) / m)


def weigh(table: RunTable, level: Level, params: VerdictParams, final: bool,
          before: np.ndarray | None = None) -> Evidence:
    """The state of every side after the runs so far (`final`: no more rounds to come).

    `before`: the states of the previous look. A side cleared then stays cleared unless it
    is named now (a sequential test stops at its decision: a partner's later runs may change
    which runs count, but must not reopen a cleared side). Suspects are weighed afresh at
    every look, on all runs, each look at fdr / looks so that all looks together stay within
    fdr."""
    n2 = 2 * len(table.nodes)
    src, dst, status = table.src, table.dst, table.status
    ds, dr = 2 * src, 2 * dst + 1
    ok = (status == OK) & (table.value > 0)
    fail = (status == FAILED) | (status == TIMEOUT) | ((status == OK) & ~(table.value > 0))
    counted = ok | fail
    center = level.center or 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(ok, np.log(np.where(ok, table.value, 1.0) / center), np.nan)
    x0 = np.nan_to_num(x)

    def bc(idx, w):
        return np.bincount(idx, weights=w.astype(np.float64), minlength=n2)

    named_before = (np.zeros(n2, dtype=bool) if before is None
                    else (before == SLOW) | (before == UNREACHABLE))
    # a side with a run well above the cut is shown healthy by it (a slow side
    # only pulls runs down): it explains none of its partners' low runs, however many of its
    # other partners were slow (with half the cluster slow, a healthy node's mean is low too)
    best = np.full(n2, -np.inf)
    np.maximum.at(best, ds[ok], x[ok])
    np.maximum.at(best, dr[ok], x[ok])
    shown_ok = best > level.cut + params.z_shown * level.sigma
    if level.upper is not None and level.upper.adopted and level.upper.reach is not None:
        # the level stands on the runs of the sides that reach it: each of them has shown it
        # (on a small cluster the spread's upper bound alone would not let them show it)
        shown_ok |= best >= level.upper.reach
    clean_s, clean_r = ok.copy(), ok.copy()
    charge_s, charge_r = fail.copy(), fail.copy()
    # every OK run of a side, clean or not: what its partner is judged on when none of the
    # partner's other runs is clean (all with slow partners of its own)
    s_all, k_all = bc(ds, x0 * ok) + bc(dr, x0 * ok), bc(ds, ok) + bc(dr, ok)
    for _ in range(3):
        S = bc(ds, x0 * clean_s) + bc(dr, x0 * clean_r)
        K = bc(ds, clean_s) + bc(dr, clean_r)
        F = bc(ds, charge_s) + bc(dr, charge_r)
        fo_r, ko_r = F[dr] - charge_r, K[dr] - clean_r
        fo_s, ko_s = F[ds] - charge_s, K[ds] - clean_s
        with np.errstate(invalid="ignore", divide="ignore"):
            loo_r = np.where(ko_r > 0, (S[dr] - x0 * clean_r) / ko_r,  # receiver w/o this run
                             (s_all[dr] - x0 * ok) / (k_all[dr] - ok))
            loo_s = np.where(ko_s > 0, (S[ds] - x0 * clean_s) / ko_s,
                             (s_all[ds] - x0 * ok) / (k_all[ds] - ok))
        ko_r = np.where(ko_r > 0, ko_r, k_all[dr] - ok)
        ko_s = np.where(ko_s > 0, ko_s, k_all[ds] - ok)
        # the partner explains the run when its other runs say it is slow: below half the
        # design drop, and by more than `z_explain` of their standard error (one unlucky
        # run of a healthy partner must not discard the evidence)
        # (or, for a partner side named at the previous look, below half the design drop)
        with np.errstate(invalid="ignore"):
            slow_r = (loo_r < level.explain) & ~shown_ok[dr] & (
                (loo_r * np.sqrt(np.maximum(ko_r, 1)) < -params.z_explain * level.sigma)
                | named_before[dr])
            slow_s = (loo_s < level.explain) & ~shown_ok[ds] & (
                (loo_s * np.sqrt(np.maximum(ko_s, 1)) < -params.z_explain * level.sigma)
                | named_before[ds])
        # an OK run shows that its partner side works: only a slow partner explains it, and
        # only a low run: a run near the level is not what a slow partner makes (16 nodes, 13
        # at 0.7x: a healthy receive side's runs from its 2 healthy senders, at 0.94x and
        # 1.02x, were explained by senders named at an earlier look, and it was named on
        # its slow senders' runs alone)
        low = ok & (x0 < level.explain)
        new_s = ok & ~(slow_r & low)
        new_r = ok & ~(slow_s & low)
        new_cs = fail & ~((fo_r >= 1) & (fo_r >= ko_r))
        new_cr = fail & ~((fo_s >= 1) & (fo_s >= ko_s))
        same = (np.array_equal(new_s, clean_s) and np.array_equal(new_r, clean_r)
                and np.array_equal(new_cs, charge_s) and np.array_equal(new_cr, charge_r))
        clean_s, clean_r, charge_s, charge_r = new_s, new_r, new_cs, new_cr
        if same:
            break
    S = bc(ds, x0 * clean_s) + bc(dr, x0 * clean_r)
    k = (bc(ds, clean_s) + bc(dr, clean_r)).astype(np.int64)
    charged = (bc(ds, charge_s) + bc(dr, charge_r)).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(k > 0, S / np.maximum(k, 1), np.nan)
    runs = (bc(ds, counted) + bc(dr, counted)).astype(np.int64)
    below = ok & (x < level.cut)
    slow_n = (bc(ds, below) + bc(dr, below)).astype(np.int64)
    failed_n = (bc(ds, fail) + bc(dr, fail)).astype(np.int64)

    se = level.sigma / np.sqrt(np.maximum(k, 1))
    with np.errstate(invalid="ignore"):
        z = np.where(k >= params.min_runs, mean / se, np.nan)
    significant, z_bh = _bh_reject(z, n2, level.q_look)
    slow = significant & (mean < level.cut)
    unreach = (charged >= 2) & (charged > k)
    # the drop to rule out before clearing: what a full budget resolves at the threshold
    # BH needs with the discoveries so far (the family-wise one when there are none)
    design = level.design_for(min(z_bh, level.z_family))
    # a 0.70x direction clears less often than clear_alpha over all looks (Bonferroni)
    z_never = -_NORMAL.inv_cdf(params.clear_alpha / level.looks)
    # never cleared below the practical cut, whatever the spread: a table that shows a side
    # slow must not sit beside a verdict that clears it
    cleared = (~slow & ~unreach & (k >= 1) & (mean > design + params.z_clear * se)
               & (mean > _never_cleared(design, level.cut, params) + z_never * se)
               & (mean >= level.cut) & ((charged == 0) | (k >= 2 * charged)))
    state = np.full(n2, AMBIGUOUS, dtype=np.int8)
    state[cleared] = CLEARED
    state[slow] = SLOW
    state[unreach] = UNREACHABLE
    state[runs == 0] = UNMEASURED

    # confirmed: some evidence run has a cleared partner side
    conf = np.zeros(n2, dtype=bool)
    part_s, part_r = state[dr] == CLEARED, state[ds] == CLEARED
    conf[ds[(clean_s | charge_s) & part_s]] = True
    conf[dr[(clean_r | charge_r) & part_r]] = True
    named = (state == SLOW) | (state == UNREACHABLE)
    unconfirmed = named & ~conf & (not final)
    state[unconfirmed] = AMBIGUOUS  # look for a known-good partner first
    if before is not None:
        keep = (before == CLEARED) & ~named
        state[keep] = CLEARED
    if final:
        # too few clean runs to be tested (none, or one that looks slow) is undecided; tested
        # and not significant is borderline: not named, listed in the table
        amb = state == AMBIGUOUS
        untested = (k == 0) | ((k < params.min_runs) & (mean < level.cut))
        state[amb & untested] = UNDECIDED
        state[amb & ~untested] = BORDERLINE
    return Evidence(level=level, state=state, k=k, mean=mean, charged=charged, runs=runs,
                    slow=slow_n, failed=failed_n, confirmed=conf, unconfirmed=unconfirmed,
                    clean_src=clean_s,
                    clean_dst=clean_r, x=x, design=design, z_bh=z_bh)

__all__ = ["Evidence", "Level", "VerdictParams", "estimate_level", "weigh"]

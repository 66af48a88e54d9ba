"""upper_groups: the two tests of a group of runs above the rest (the fastest pair, the best
split of the sorted runs), and how often a healthy cluster's runs pass them by chance."""

from __future__ import annotations

import math

import numpy as np

from fabrictest.sweep.params import VerdictParams
from fabrictest.sweep.upper import upper_mode
from fabrictest.sweep.upper_groups import (
    SPLIT_ALPHA,
    SPLIT_MORE_ALPHA,
    _split_critical,
    _split_t,
    split_level,
    top_pair,
)

P = VerdictParams()


def every_pair(n: int, times: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of n nodes, `times` each."""
    src, dst = zip(*[(a, b) for a in range(n) for b in range(n) if a != b], strict=True)
    return np.tile(np.array(src), times), np.tile(np.array(dst), times)


def four_nodes(healthy_pair_level: float, sigma: float, seed: int, times: int = 1):
    """4 nodes, every pair both ways: the runs between nodes 0 and 1 at `healthy_pair_level`
    (log), the rest at 0 (the slow majority's level)."""
    src, dst = every_pair(4, times)
    rng = np.random.default_rng(seed)
    y = rng.normal(0.0, sigma, src.size)
    top = ((src == 0) & (dst == 1)) | ((src == 1) & (dst == 0))
    y[top] += healthy_pair_level
    return y, src, dst, top


def test_the_split_critical_value_holds_its_false_rate():
    """The Monte Carlo critical values are what fresh draws of one level's runs exceed at
    SPLIT_MORE_ALPHA (and SPLIT_ALPHA): 4,000 new draws of 40 runs, at their own seed."""
    firm_t, more_t = _split_critical(40)
    rng = np.random.default_rng(12345)
    t = _split_t(np.sort(rng.standard_normal((4000, 40)), axis=1)).max(axis=1)
    assert abs((t > more_t).mean() - SPLIT_MORE_ALPHA) < 0.02
    assert (t > firm_t).mean() < 5 * SPLIT_ALPHA
    assert firm_t > more_t > 0


def test_a_healthy_clusters_runs_split_firmly_about_never():
    """400 healthy sweeps' 40 runs at sigma 0.1: none split firmly (the upper group must also
    stand half the cut above the level)."""
    rng = np.random.default_rng(7)
    firm = [split_level(rng.normal(0.0, 0.1, 40), 0.0, P) for _ in range(400)]
    assert sum(1 for s in firm if s is not None and s.firm) == 0


def test_a_minority_at_the_healthy_level_splits_off():
    """12 runs at the healthy level 2x above 28 slow ones, sigma 0.1: a firm split whose
    upper group is those 12 runs, its gap half the difference (at 1/0.7x the same runs reach
    t 9.6, under even the 10 % critical value of 9.8 at 40 runs: sorting alone separates)."""
    rng = np.random.default_rng(3)
    y = rng.normal(0.0, 0.1, 40)
    y[:12] += math.log(2.0)
    s = split_level(y, float(np.median(y)), P)
    assert s is not None and s.firm
    assert s.runs[:12].all() and not s.runs[12:].any()
    assert 0.25 < s.gap < 0.45


def test_too_few_or_too_many_runs_are_not_split():
    rng = np.random.default_rng(1)
    assert split_level(rng.normal(0.0, 0.1, 7), 0.0, P) is None
    assert split_level(rng.normal(0.0, 0.1, 601), 0.0, P) is None


def test_the_top_pair_firm_in_doubt_or_noise():
    """4 nodes, every pair once, sigma 0.1: the healthy pair at 1/0.7x is in doubt or firm in
    most seeds; measured 4 times it is firm in every seed; a healthy cluster's fastest pair
    is never firm."""
    lift = -math.log(0.7)
    seen = [top_pair(*four_nodes(lift, 0.1, s)[:3], 4, P) for s in range(20)]
    assert sum(t is not None for t in seen) >= 14
    for s in range(20):
        y, src, dst, top = four_nodes(lift, 0.1, s, times=4)
        t = top_pair(y, src, dst, 4, P)
        assert t is not None and t.firm, s
        assert np.array_equal(t.runs, top)
    healthy = [top_pair(*four_nodes(0.0, 0.1, s)[:3], 4, P) for s in range(200)]
    assert not any(t is not None and t.firm for t in healthy)


def test_a_top_pair_still_in_doubt_after_its_repeats_is_noise():
    """upper_mode with `pair_again` false (the core has measured the pair again as often as
    it does) drops a top pair still only in doubt, instead of asking for it again."""
    lift = -math.log(0.7)
    cases = 0
    for s in range(40):
        y, src, dst, _top = four_nodes(lift, 0.1, s)
        c0 = float(np.median(y))
        asked = upper_mode(y, src, dst, 4, c0, 0.1, P, point_sigma=0.1)
        if asked is None or not asked.again:
            continue
        cases += 1
        assert sorted(asked.nodes) == [0, 1]
        dropped = upper_mode(y, src, dst, 4, c0, 0.1, P, point_sigma=0.1, pair_again=False)
        assert dropped is None or not dropped.again
    assert cases >= 3

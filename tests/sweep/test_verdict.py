"""Verdict logic on simulated and hand-made pair figures."""

from __future__ import annotations

import random

import pytest

from fabrictest.sweep.core import run_sweep
from fabrictest.sweep.output import render
from fabrictest.sweep.runners import SimulatedRunner
from fabrictest.sweep.verdict import (
    PairResult,
    VerdictParams,
    decide,
    estimate_level,
    screening_candidates,
)


def names(n):
    return [f"node{i:02d}" for i in range(1, n + 1)]


def test_four_nodes_one_degraded_like_vcluster():
    nodes = names(4)
    sim = SimulatedRunner(nodes, base=0.19, sigma=0.05, slow={"node03": 50 / 200}, seed=1)
    res = run_sweep(nodes, sim, seed=1)
    assert res.suspects == ["node03"]
    assert len(res.rounds) == 3
    line = res.verdict.lines()[-1]
    assert line.startswith("suspect: node03 median 0.0")
    assert "vs cluster 0.1" in line and "3/3 pairs slow, confirmed with node" in line
    text = render(res)
    assert text.rstrip().endswith(line)
    assert "per-node figures" in text and "pair figures" in text


def test_link_down_is_unreachable():
    nodes = names(4)
    res = run_sweep(nodes, SimulatedRunner(nodes, sigma=0.05, down=["node02"], seed=2), seed=2)
    assert res.suspects == ["node02"]
    line = res.verdict.lines()[-1]
    assert line.startswith("suspect: node02 unreachable (3/3 pairs failed, confirmed with ")


def test_healthy_cluster_has_no_suspects():
    for seed in range(20):
        nodes = names(16)
        res = run_sweep(nodes, SimulatedRunner(nodes, sigma=0.05, seed=seed), seed=seed)
        assert res.verdict.lines() == ["suspects: none"]
        assert len(res.rounds) == 2  # nothing to confirm


def test_noisy_healthy_cluster_has_no_suspects():
    false = 0
    for seed in range(30):
        nodes = names(64)
        res = run_sweep(nodes, SimulatedRunner(nodes, sigma=0.28, seed=seed), seed=seed)
        false += len(res.suspects)
    assert false == 0


@pytest.mark.parametrize("n", [5, 7])
def test_odd_node_count(n):
    nodes = names(n)
    for seed in range(10):
        slow = random.Random(seed).choice(nodes)
        sim = SimulatedRunner(nodes, sigma=0.05, slow={slow: 0.25}, seed=seed)
        res = run_sweep(nodes, sim, seed=seed)
        assert res.suspects == [slow], render(res)
        assert len(res.rounds) <= 4


def test_one_slow_among_ten_thousand_in_three_rounds():
    nodes = [f"nid{i:05d}" for i in range(10000)]
    sim = SimulatedRunner(nodes, sigma=0.28, slow={"nid04242": 0.25}, seed=5)
    res = run_sweep(nodes, sim, seed=5)
    assert res.suspects == ["nid04242"]
    assert len(res.rounds) == 3


def test_partner_of_slow_node_is_cleared_by_its_other_pairs():
    # round 0: a-b slow, c-d fine; round 1: a-c slow, b-d fine; confirm: d-a slow
    rs = [
        PairResult(0, "screen", "a", "b", "ok", 0.05),
        PairResult(0, "screen", "c", "d", "ok", 0.20),
        PairResult(1, "screen", "a", "c", "ok", 0.05),
        PairResult(1, "screen", "b", "d", "ok", 0.19),
    ]
    level = estimate_level(rs, VerdictParams())
    assert level.center == pytest.approx(0.195)
    cands, good = screening_candidates("abcd", rs, level)
    assert cands == ["a"]
    assert good[0] == "d"  # all pairs fine, fastest first
    rs.append(PairResult(2, "confirm", "d", "a", "ok", 0.049))
    v = decide("abcd", rs, level, cands, "Gbps")
    assert [s.node for s in v.suspects] == ["a"]
    assert v.suspects[0].confirmed_with == ["d"]
    assert {r.node: r.status for r in v.table} == {"a": "suspect", "b": "ok", "c": "ok", "d": "ok"}


def test_candidate_cleared_when_confirmation_is_fine():
    rs = [
        PairResult(0, "screen", "a", "b", "ok", 0.05),
        PairResult(0, "screen", "c", "d", "ok", 0.20),
        PairResult(1, "screen", "a", "c", "ok", 0.05),
        PairResult(1, "screen", "b", "d", "ok", 0.19),
        PairResult(2, "confirm", "d", "a", "ok", 0.20),
    ]
    level = estimate_level(rs)
    v = decide("abcd", rs, level, ["a"], "Gbps")
    assert v.lines() == ["suspects: none"]
    assert v.table[0].status == "cleared"


def test_expected_level_overrides_median():
    rs = [PairResult(0, "screen", "a", "b", "ok", 0.5), PairResult(0, "screen", "c", "d", "ok", 0.5)]
    level = estimate_level(rs, expect=1.0)
    assert level.center == 1.0 and level.source == "expect"
    cands, _ = screening_candidates("abcd", rs, level)
    assert cands == list("abcd")  # everything is slow against the reference


def test_timeout_counts_as_failed_evidence():
    rs = [
        PairResult(0, "screen", "a", "b", "timeout"),
        PairResult(0, "screen", "c", "d", "ok", 1.0),
        PairResult(1, "screen", "a", "c", "failed", detail="exit 1"),
        PairResult(1, "screen", "b", "d", "ok", 1.0),
        PairResult(2, "confirm", "d", "a", "timeout"),
    ]
    level = estimate_level(rs)
    cands, _ = screening_candidates("abcd", rs, level)
    assert cands == ["a"]
    v = decide("abcd", rs, level, cands, "Gbps")
    assert v.lines() == ["suspect: a unreachable (3/3 pairs failed, confirmed with d)"]


def test_a_failed_pair_never_vanishes_into_suspects_none():
    # c,d timed out once but both are fine with other partners: no suspect, and no
    # "suspects: none" either (the vcluster flake: a pair with no result within 40 s)
    rs = [
        PairResult(0, "screen", "a", "b", "ok", 1.0),
        PairResult(0, "screen", "c", "d", "timeout",
                   detail="no result within 40 s; slurmstepd-node03: error: Waiting up to 7 s"),
        PairResult(1, "screen", "a", "c", "ok", 1.0),
        PairResult(1, "screen", "b", "d", "ok", 1.0),
    ]
    level = estimate_level(rs)
    cands, _ = screening_candidates("abcd", rs, level)
    v = decide("abcd", rs, level, cands, "Gbps")
    assert not v.suspects and not v.healthy
    assert v.lines() == [
        "failed pair: c,d in round 0 (timeout: no result within 40 s; slurmstepd-node03: "
        "error: Waiting up to 7 s); both nodes fine with other partners"
    ]


class FlakyRunner(SimulatedRunner):
    """The simulation, except that the first pair of round 0 times out."""

    def run_round(self, rnd):
        out = super().run_round(rnd)
        if rnd.index == 0:
            r = out[0]
            r.status, r.value, r.detail = "timeout", None, "no result within 40 s"
        return out


def test_sweep_with_one_flaky_pair_is_not_healthy():
    nodes = names(8)
    res = run_sweep(nodes, FlakyRunner(nodes, sigma=0.05, seed=3), seed=3)
    assert res.suspects == []
    lines = res.verdict.lines()
    assert "suspects: none" not in lines
    assert len(lines) == 1 and lines[0].startswith("failed pair: ")
    assert res.to_dict()["healthy"] is False
    assert render(res).rstrip().endswith(lines[0])

"""The round scheduler: disjoint pairs, no repeats, different sit-outs, extra rounds."""

from __future__ import annotations

import numpy as np
import pytest

from fabrictest.sweep import nodes as nodeset
from fabrictest.sweep.schedule import extra_round, screening_rounds


def met_of(rounds) -> set[frozenset]:
    return {frozenset(p) for r in rounds for p in r.pairs}


@pytest.mark.parametrize("n", [2, 3, 4, 5, 16, 17, 101, 1000])
@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_rounds_are_perfect_matchings_without_repeats(n, rounds):
    names = [f"n{i}" for i in range(n)]
    plan = screening_rounds(names, rounds, seed=n * 7 + rounds)
    assert len(plan) == min(rounds, n - 1 if n % 2 == 0 else n)
    seen = set()
    for rnd in plan:
        used = rnd.nodes() + [names[i] for i in rnd.idle]
        assert sorted(used) == sorted(names)  # every node once: in one pair or idle
        assert len(rnd.idle) == n % 2
        for p in rnd.pairs:
            assert frozenset(p) not in seen
            seen.add(frozenset(p))
    idle = [i for rnd in plan for i in rnd.idle]
    assert len(idle) == len(set(idle))  # odd N: a different node sits out each round


def test_seed_reproducible_and_varies():
    names = [f"n{i}" for i in range(20)]
    a = screening_rounds(names, 2, seed=1)
    b = screening_rounds(names, 2, seed=1)
    c = screening_rounds(names, 2, seed=2)
    assert [r.pairs for r in a] == [r.pairs for r in b]
    assert [r.pairs for r in a] != [r.pairs for r in c]


def test_all_pairs_when_asked_for_n_minus_1_rounds():
    names = [f"n{i}" for i in range(8)]
    plan = screening_rounds(names, 7, seed=0)
    assert len(met_of(plan)) == 8 * 7 // 2


def test_a_hundred_thousand_nodes_in_one_call():
    names = [f"nid{i:06d}" for i in range(100_000)]
    plan = screening_rounds(names, 2, seed=5)
    for rnd in plan:
        both = np.concatenate([rnd.a, rnd.b])
        assert len(rnd) == 50_000 and np.unique(both).size == 100_000
    key = [set((np.minimum(r.a, r.b) * 100_000 + np.maximum(r.a, r.b)).tolist()) for r in plan]
    assert not key[0] & key[1]


def test_extra_round_pairs_each_ambiguous_node_with_an_unmet_good_node():
    names = list("abcdefgh")
    amb = np.array([0, 1])  # a, b
    good = np.array([2, 3, 4, 5, 6, 7])
    met = {0: {2, 3, 4}, 1: {5}}
    rnd = extra_round(3, names, amb, good, met, seed=1, reason="why")
    assert rnd.kind == "extra" and rnd.index == 3 and rnd.reason == "why"
    partner = {int(b): int(a) for a, b in zip(rnd.a, rnd.b, strict=True)}
    assert set(partner) == {0, 1}
    assert partner[0] in {5, 6, 7} and partner[1] in {2, 3, 4, 6, 7}
    assert partner[0] != partner[1]  # one pair per node and round


def test_extra_round_repeats_a_good_partner_rather_than_measure_nothing():
    names = list("abc")
    rnd = extra_round(2, names, np.array([0]), np.array([1, 2]), {0: {1, 2}}, seed=0)
    assert len(rnd) == 1 and int(rnd.b[0]) == 0 and int(rnd.a[0]) in (1, 2)


def test_extra_round_without_good_nodes_pairs_ambiguous_nodes_unmet_first():
    names = list("abcd")
    rnd = extra_round(2, names, np.array([0, 1, 2, 3]), np.array([], dtype=int),
                      {0: {1}, 1: {0}, 2: {3}, 3: {2}}, seed=0)
    pairs = {frozenset(p) for p in rnd.pairs}
    assert len(pairs) == 2
    assert frozenset("ab") not in pairs and frozenset("cd") not in pairs


def test_extra_round_measures_a_one_way_doubt_with_nodes_cleared_that_way():
    # a (0) doubts its receive side, b (1) its send side, c (2) both; no node is cleared
    # both ways: d (3) and e (4) only send cleared, f (5) and g (6) only receive cleared
    names = list("abcdefg")
    helpers = {0: np.array([5, 6]), 1: np.array([3, 4])}
    for seed in range(20):
        rnd = extra_round(4, names, np.array([0, 1, 2]), np.array([], dtype=int), {},
                          seed=seed, one_way={0: 1, 1: 0}, helpers=helpers)
        s2, d2 = rnd.second()
        runs = list(zip(rnd.a.tolist(), rnd.b.tolist(), strict=True)) + list(
            zip(s2.tolist(), d2.tolist(), strict=True))
        assert sorted(s for s, d in runs if d == 0) == [3, 4]  # a hears both cleared senders
        assert sorted(d for s, d in runs if s == 1) == [5, 6]  # b sends to both cleared ones
        assert 2 not in {x for run in runs for x in run}  # c: no partner cleared both ways
    # without the helpers a and b could only meet each other (the old behaviour)
    rnd = extra_round(4, names, np.array([0, 1]), np.array([], dtype=int), {}, seed=0,
                      one_way={0: 1, 1: 0})
    assert {frozenset(p) for p in rnd.pairs} == {frozenset("ab")}


def test_hostlist_expressions():
    assert nodeset.expand("node[01-04]") == ["node01", "node02", "node03", "node04"]
    assert nodeset.expand(["nid00[1-2]", "login1", "nid001"]) == ["nid001", "nid002", "login1"]
    assert nodeset.collect(["node01", "node02", "node04"]) == "node[01-02,04]"
    env = {"SLURM_JOB_NODELIST": "vc[1-3],x"}
    assert nodeset.resolve(env=env) == ["vc1", "vc2", "vc3", "x"]
    with pytest.raises(nodeset.NodeSetError):
        nodeset.resolve(env={})
    with pytest.raises(nodeset.NodeSetError):
        nodeset.expand("node[01-")


def test_hostfile(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("# edge switch x1000c1r5b0\nnid001 slots=4\nnid[002-003]\n\nnid004:2\n")
    assert nodeset.from_file(str(f)) == ["nid001", "nid002", "nid003", "nid004"]

"""The round scheduler: disjoint pairs, no repeats, different sit-outs, confirmation."""

from __future__ import annotations

import pytest

from fabrictest.sweep import nodes as nodeset
from fabrictest.sweep.schedule import confirmation_round, pairs_met, screening_rounds


@pytest.mark.parametrize("n", [2, 3, 4, 5, 16, 17, 101, 1000])
@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_rounds_are_perfect_matchings_without_repeats(n, rounds):
    names = [f"n{i}" for i in range(n)]
    plan = screening_rounds(names, rounds, seed=n * 7 + rounds)
    assert len(plan) == min(rounds, n - 1 if n % 2 == 0 else n)
    seen = set()
    for rnd in plan:
        used = rnd.nodes() + rnd.idle
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
    assert len(pairs_met(plan)) == 8 * 7 // 2


def test_confirmation_pairs_with_unmet_good_nodes_one_pair_per_node():
    plan = screening_rounds(["a", "b", "c", "d", "e", "f"], 2, seed=3)
    met = pairs_met(plan)
    rnd, left = confirmation_round(2, ["a", "b"], ["c", "d", "e", "f"], met)
    assert left == []
    assert rnd.kind == "confirm"
    partners = [g for g, _s in rnd.pairs]
    assert len(set(partners)) == 2
    for g, s in rnd.pairs:
        assert frozenset((g, s)) not in met or all(
            frozenset((s, x)) in met for x in "cdef"
        )


def test_confirmation_with_too_few_good_nodes_leaves_some():
    rnd, left = confirmation_round(2, ["a", "b", "c"], ["d"], set())
    assert rnd.pairs == [("d", "a")]
    assert left == ["b", "c"]


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

"""Generated topologies (`fabric-plan --generate`): the sizes asked for, the node sets the
families derive from them, bad specs refused in one line."""

from __future__ import annotations

import time

import pytest

from fabrictest.parsers.node_sets import derive_node_sets
from fabrictest.parsers.topology import parse_any_topology
from fabrictest.plan.generate import GenerateError, parse_spec, topology_conf


def _sets(spec):
    topo = parse_any_topology(topology_conf(spec))
    nodes = {n for leaf in topo.leaves() for n in topo.switches[leaf].nodes}
    return topo, nodes, derive_node_sets(topo)


def test_a_small_dragonfly_has_its_groups_switches_and_nodes():
    topo, nodes, sets = _sets("dragonfly:groups=3,switches=2,nodes=4")
    assert len(nodes) == 24 and len(topo.leaves()) == 6
    assert sets.sets["switch"] == ["nid00001", "nid00002", "nid00003", "nid00004"]
    assert len(sets.sets["group"]) == 8 and len(sets.sets["global"]) == 16
    # 3 groups: one side of the top holds 1 group (8 nodes), the other 2: 8 from each
    assert len(sets.sets["bisection"]) == 16


def test_a_fat_tree_is_three_levels():
    topo, nodes, sets = _sets("fattree:pods=4,leaves=3,nodes=2")
    assert len(nodes) == 24 and len(topo.leaves()) == 12
    assert len(sets.sets["switch"]) == 2 and len(sets.sets["group"]) == 6


def test_ten_thousand_nodes_generate_and_parse_in_seconds():
    start = time.monotonic()
    _topo, nodes, sets = _sets("dragonfly:groups=25,switches=25,nodes=16")
    assert len(nodes) == 10_000
    assert {k: len(v) for k, v in sets.sets.items()} == {
        "switch": 16, "group": 400, "global": 800, "bisection": 9600}
    assert time.monotonic() - start < 10  # about 0.3 s on an idle core


@pytest.mark.parametrize("spec, says", [
    ("torus:x=2", "the kind is one of"),
    ("dragonfly:groups=2,switches=2", "missing nodes"),
    ("dragonfly:groups=2,switches=2,nodes=0", "at least 1"),
    ("dragonfly:groups=2,groups=3,switches=2,nodes=2", "groups given twice"),
    ("fattree:pods=2,leaves=2,nodes=2,spines=4", "'spines=4' is not one of"),
    ("fattree:pods=1000,leaves=100,nodes=100", "at most 100,000"),
    ("dragonfly:groups=100,switches=63,nodes=16", "100,800 nodes, at most 100,000"),
    ("dragonfly:groups=two,switches=2,nodes=2", "is not one of"),
])
def test_a_bad_spec_is_refused_in_one_line(spec, says):
    with pytest.raises(GenerateError) as err:
        parse_spec(spec)
    assert says in str(err.value) and "\n" not in str(err.value)

"""The links among a case's nodes by route class (attribute_hops.py) are exactly the union of
`Topology.route` over every ordered pair of the nodes, on every topology form, (the time, linear
in the nodes where it was quadratic, is measured in bench/bench_attribute.py)."""

from __future__ import annotations

import random

import pytest

from fabrictest.parsers.topology import parse_scontrol_topology, parse_topology_file
from fabrictest.report.attribute.hops import HopFinder

GUIDE = parse_scontrol_topology(
    "SwitchName=s0 Nodes=tux[0-3]\nSwitchName=s1 Nodes=tux[4-7]\nSwitchName=s2 Nodes=tux[8-11]\n"
    "SwitchName=s3 Nodes=tux[12-15]\nSwitchName=s4 Switches=s[0-3]\nSwitchName=s5 Switches=s[0-3]\n"
    "SwitchName=s6 Switches=s[0-3]\nSwitchName=s7 Switches=s[0-3]\n")
# three levels: two pods of two leaves under two aggregation switches each, 3 spines
PODS = parse_topology_file(
    "l1: n[01-03] parent=a1,a2\nl2: n[04-06] parent=a1,a2\nl3: n[07-09] parent=a3,a4\n"
    "l4: n[10-11] parent=a3,a4\na1: parent=t1,t2,t3\na2: parent=t1,t2,t3\n"
    "a3: parent=t1,t2,t3\na4: parent=t1,t2,t3\n")
# a switch with nodes and switches below it (a pod is not enough to key its routes)
MIXED = parse_topology_file(
    "l1: n[1-2] parent=m1,m2\nl2: n[3-4] parent=m1,m2\nm1: n[5-6] parent=t1,t2\n"
    "m2: parent=t1,t2\nl3: n[7-9] parent=t1,t2\n")
DRAGONFLY_TEXT = (
    "g1s1: n[1-2] parent=g1 global=g2s1,g3s1\ng1s2: n[3-4] parent=g1 global=g2s2\n"
    "g2s1: n[5-6] parent=g2 global=g3s2\ng2s2: n[7-8] parent=g2\ng3s1: n[9-11] parent=g3\n"
    "g3s2: n[12] parent=g3 global=g1s2\n")
DRAGONFLY = parse_topology_file("routing=dmodk\n" + DRAGONFLY_TEXT)
TREE = parse_topology_file("a: n[1-3] parent=c\nb: n[4-6] parent=c\nd: n[7-8] parent=e\n"
                           "c: parent=top\ne: parent=top\n")
BLOCKS = parse_scontrol_topology("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\n"
                                 "BlockName=b3 Nodes=n[9-12]\nBlockSizes=4,8\n")
SHAPES = {
    "fat tree": GUIDE, "fat tree dmodk": GUIDE.configured(routing="dmodk"),
    "pods": PODS, "pods dmodk": PODS.configured(routing="dmodk"),
    "mixed": MIXED, "mixed dmodk": MIXED.configured(routing="dmodk"),
    "dragonfly dmodk": DRAGONFLY, "dragonfly": parse_topology_file(DRAGONFLY_TEXT),
    "tree": TREE, "blocks": BLOCKS,
}


def every_pair(topo, nodes):
    return {h for a in nodes for b in nodes if a != b for h in topo.route(a, b)}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_elements_are_the_union_of_every_pairs_route(shape):
    topo = SHAPES[shape]
    nodes = sorted(topo.switch_of())
    finder = HopFinder(topo)  # one finder for every subset: its cache must not leak
    rng = random.Random(5)
    subsets = [nodes] + [rng.sample(nodes, k) for k in (2, 3, 4, 5, len(nodes) // 2)
                         for _ in range(6)]
    for sub in subsets:
        assert finder.elements(sub) == every_pair(topo, sub), sub
    for a in nodes:
        for b in nodes:
            assert list(finder.route(a, b)) == topo.route(a, b)


def test_dmodk_routes_differ_by_destination_and_are_all_found():
    """The check has teeth: on the guide's fat tree every leaf-spine link carries some run
    (16 uplinks), and two nodes only cross the links their own route takes."""
    topo = SHAPES["fat tree dmodk"]
    finder = HopFinder(topo)
    assert len(finder.elements(sorted(topo.switch_of()))) == 16
    assert finder.elements(["tux0", "tux5"]) == {h for h in topo.route("tux0", "tux5")} | {
        h for h in topo.route("tux5", "tux0")}
    assert len(finder.elements(["tux0", "tux5"])) == 4

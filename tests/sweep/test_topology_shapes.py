"""The sweep beyond trees (simulation, the true routes those of the topology model): on a fat
tree a slow leaf-spine link is named as that link with a routing rule, as its leaf's bundle
of uplinks without one; on a dragonfly a slow global or local link is named as such; a slow
node is still the node; a healthy fabric names nothing; a link whose LinkSpeed says it is
slower is held against its share of the level."""

from __future__ import annotations

import pytest

from fabrictest.parsers.topology import parse_topology_file
from fabrictest.sweep.core import run_sweep
from fabrictest.sweep.simulate import SimulatedRunner

SEEDS = range(10)


def fat_tree(leaves: int, spines: int, per: int, routing: bool = True, speeds=None):
    nodes = [f"node{i:02d}" for i in range(1, leaves * per + 1)]
    lines = [f"leaf{k + 1}: {','.join(nodes[k * per:(k + 1) * per])} parent=spine[1-{spines}]"
             + (f" speed={speeds[k]}" if speeds else "") for k in range(leaves)]
    text = "\n".join(lines) + ("\nrouting=dmodk\n" if routing else "\n")
    return nodes, parse_topology_file(text)


DRAGONFLY = ("routing=dmodk\ng1s1: node[01-02] parent=g1 global=g2s1\n"
             "g1s2: node[03-04] parent=g1 global=g2s2\ng2s1: node[05-06] parent=g2\n"
             "g2s2: node[07-08] parent=g2\n")


def named(nodes, truth, seen, want, **faults) -> int:
    """How many seeds end with exactly one suspect line starting with `want`."""
    good = 0
    for seed in SEEDS:
        sim = SimulatedRunner(nodes, sigma=0.05, seed=seed, topology=truth, **faults)
        lines = run_sweep(nodes, sim, seed=seed, topology=seen).verdict.lines()
        good += len(lines) == 1 and lines[0].startswith(want)
    return good


@pytest.mark.parametrize("leaves, spines, per, name", [
    (4, 2, 2, "uplink leaf1<->spine1: "),
    (4, 2, 4, "uplink leaf1<->spine1: "),
    # two leaves: leaf1-spine1 and spine1-leaf2 carry the same runs
    (2, 2, 4, "uplink leaf1<->spine1 or leaf2<->spine1 (cannot tell which): "),
])
def test_fat_tree_link_named_with_a_routing_rule(leaves, spines, per, name):
    nodes, topo = fat_tree(leaves, spines, per)
    assert named(nodes, topo, topo, f"suspect: {name}",
                 slow_uplinks={"leaf1<->spine1": 0.25}) == len(SEEDS)


def test_fat_tree_without_a_rule_names_the_leafs_bundle():
    nodes, truth = fat_tree(4, 2, 4)
    _, seen = fat_tree(4, 2, 4, routing=False)
    assert named(nodes, truth, seen, "suspect: the uplinks of leaf leaf1 (2 links; cannot tell "
                 "which): ", slow_uplinks={"leaf1<->spine1": 0.25}) >= len(SEEDS) - 1


@pytest.mark.parametrize("link, kind", [("g1s1<->g2s1", "global"), ("g1s1<->g1s2", "local"),
                                        ("g2s1<->g2s2", "local")])
def test_dragonfly_local_and_global_links_named(link, kind):
    topo = parse_topology_file(DRAGONFLY)
    nodes = sorted(topo.switch_of())
    assert named(nodes, topo, topo, f"suspect: {kind} link {link}: ",
                 slow_uplinks={link: 0.25}) == len(SEEDS)


def test_dragonfly_without_wiring_names_the_group_pairs_global_links():
    truth = parse_topology_file(DRAGONFLY)
    seen = parse_topology_file("g1s1: node[01-02] parent=g1\ng1s2: node[03-04] parent=g1\n"
                               "g2s1: node[05-06] parent=g2\ng2s2: node[07-08] parent=g2\n"
                               "shape=dragonfly\n")
    nodes = sorted(truth.switch_of())
    good = named(nodes, truth, seen, "suspect: the global links between groups g1 and g2",
                 slow_uplinks={"g1s1<->g2s1": 0.25})
    assert good >= len(SEEDS) - 2


@pytest.mark.parametrize("shape", ["fat-tree", "dragonfly"])
def test_a_slow_node_is_the_node_and_healthy_is_healthy(shape):
    if shape == "fat-tree":
        nodes, topo = fat_tree(4, 2, 2)
    else:
        topo = parse_topology_file(DRAGONFLY)
        nodes = sorted(topo.switch_of())
    assert named(nodes, topo, topo, "suspect: node03 ", slow={"node03": 0.5}) == len(SEEDS)
    assert named(nodes, topo, topo, "suspects: none") == len(SEEDS)


def test_linkspeed_is_the_links_expected_share():
    """leaf1's uplinks say LinkSpeed 1 of 2 and run at 0.5 of the level: as expected, not
    slow; at 0.2 (0.4 of their share) they are named, with their share said."""
    nodes, topo = fat_tree(4, 2, 2, speeds=[1, 2, 2, 2])
    sims = {f"leaf1<->spine{s}": 0.5 for s in (1, 2)}
    assert named(nodes, topo, topo, "suspects: none", slow_uplinks=sims) == len(SEEDS)
    slow = {"leaf1<->spine1": 0.2, "leaf1<->spine2": 0.5}
    assert named(nodes, topo, topo, "suspect: uplink leaf1<->spine1: ",
                 slow_uplinks=slow) >= len(SEEDS) - 1
    sim = SimulatedRunner(nodes, sigma=0.05, seed=1, topology=topo, slow_uplinks=slow)
    line = run_sweep(nodes, sim, seed=1, topology=topo).verdict.lines()[0]
    assert "(expected 0.50 of it: its LinkSpeed)" in line

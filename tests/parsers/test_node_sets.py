"""Node sets from a topology (the Slingshot acceptance notes' edge, local and global scopes, and
bisection's halves across the top): tree and Slingshot-xname inputs, sizes, labels, hand-written
precedence, and a topology too small for a scope."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.node_sets import (
    LABELS,
    NodeSets,
    compress_hostlist,
    derive_node_sets,
    merge,
    parse_any_topology,
    sizes,
)
from fabrictest.parsers.topology import topology_from_switch_hosts

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "topology"

# a fat tree of two pods of two leaves, in Slurm's topology.conf form
TREE = """
SwitchName=leaf1 Nodes=n[01-04]
SwitchName=leaf2 Nodes=n[05-08]
SwitchName=leaf3 Nodes=n[09-12]
SwitchName=leaf4 Nodes=n[13-14]
SwitchName=pod1 Switches=leaf[1-2]
SwitchName=pod2 Switches=leaf[3-4]
SwitchName=core Switches=pod[1-2]
"""


def test_labels_are_the_acceptance_notes_scopes():
    assert LABELS == {"switch": "edge", "group": "local", "global": "global",
                      "bisection": "global"}


def test_a_fat_tree_gives_every_scope():
    d = derive_node_sets(parse_any_topology(TREE))
    assert d.missing == {}
    assert d.hostlist("switch") == "n[01-04]"  # edge: one leaf
    assert d.hostlist("group") == "n[01-08]"  # local: one pod
    # global: as many from each of the first two pods (pod2 has 6)
    assert d.hostlist("global") == "n[01-06,09-14]"
    # bisection: pod1 against pod2, the first half in name order all on one side
    assert d.hostlist("bisection") == "n[01-06,09-14]"
    assert sizes({}, d) == {"switch": 4, "group": 8, "global": 12, "bisection": 12}


def test_bisection_splits_the_groups_in_two_halves():
    text = "".join(f"sw{g}: h[{g}0-{g}3] parent=g{g}\ng{g}: parent=top\n" for g in range(1, 5))
    d = derive_node_sets(parse_any_topology(text))
    # groups 1-2 against groups 3-4, 8 nodes a side
    assert d.hostlist("bisection") == "h[10-13,20-23,30-33,40-43]"
    assert d.hostlist("global") == "h[10-13,20-23]"
    assert d.hostlist("group") == "h[10-13]"


def test_slingshot_xnames_from_the_notes_host_files():
    hosts = {"x1000c0r3b0": ["nid000001", "nid000002", "nid000003"],
             "x1000c1r5b0": ["nid000004", "nid000005", "nid000006"],
             "x1001c0r3b0": ["nid000101", "nid000102"]}
    d = derive_node_sets(topology_from_switch_hosts(hosts))
    assert d.hostlist("switch") == "nid[000001-000002]"  # 3 on the switch: one pair
    assert d.hostlist("group") == "nid[000001-000006]"  # cabinet 1000 is one group
    assert d.hostlist("global") == "nid[000001-000002,000101-000102]"
    assert d.hostlist("bisection") == "nid[000001-000002,000101-000102]"


def test_the_slingshot_system_topology_gives_the_sets_it_once_wrote_by_hand():
    d = derive_node_sets(parse_any_topology(
        (ROOT / "config" / "reframe" / "topology" / "slingshot.txt").read_text()))
    assert merge({}, d) == {"switch": "nid[001-002]", "group": "nid[001-062]",
                            "global": "nid[001-032,063-094]",
                            "bisection": "nid[001-032,063-094]"}
    assert sizes({}, d) == {"switch": 2, "group": 62, "global": 64, "bisection": 64}


def test_scontrol_recorded_on_the_vcluster():
    d = derive_node_sets(parse_any_topology(
        (DATA / "scontrol-show-topology-vcluster-2sw.txt").read_text()))
    # two leaves straight under the top: each is its own group, so local is edge
    assert d.hostlist("switch") == d.hostlist("group") == "node[01-02]"
    assert d.hostlist("global") == d.hostlist("bisection") == "node[01-04]"


def test_hand_written_sets_win():
    d = derive_node_sets(parse_any_topology(TREE))
    got = merge({"switch": "n[13-14]"}, d)
    assert got["switch"] == "n[13-14]" and got["group"] == "n[01-08]"
    assert sizes({"global": 4}, d)["global"] == 4
    assert merge({"group": "x[1-2]"}, NodeSets()) == {"group": "x[1-2]"}
    # a hand-written set without a size counts its own nodes, not the derived set's
    assert sizes({}, d, {"group": "n[01-03,07]"})["group"] == 4
    assert sizes({"group": 2}, d, {"group": "n[01-03,07]"})["group"] == 2


def test_odd_switches_and_groups_give_pairs():
    d = derive_node_sets(parse_any_topology(
        "sw1: a[1-3] parent=g1\nsw2: a[4-6] parent=g1\ng1: parent=top\n"
        "sw3: b[1-3] parent=g2\ng2: parent=top\n"))
    assert d.hostlist("switch") == "a[1-2]"
    assert d.hostlist("group") == "a[1-6]"
    assert d.hostlist("global") == "a[1-3],b[1-3]"


def test_too_small_for_a_scope_is_left_out_with_a_reason():
    one_group = derive_node_sets(parse_any_topology(
        "sw1: a[1-2] parent=g1\nsw2: a3 parent=g1\ng1: parent=top\n"))
    assert set(one_group.sets) == {"switch", "group"}
    assert one_group.missing["global"] == "one group (g1): nothing spans two groups"
    assert "nothing crosses the top" in one_group.missing["bisection"]
    lonely = derive_node_sets(parse_any_topology(
        "sw1: a1 parent=g1\nsw2: b1 parent=g2\ng1: parent=top\ng2: parent=top\n"))
    assert lonely.missing["switch"] == "no switch has 2 nodes"
    assert lonely.missing["group"] == "no group has 2 nodes"
    assert lonely.hostlist("global") == "a1,b1"


def test_names_interleaved_across_the_top_give_no_bisection():
    # Slurm places rank blocks in name order: a, c on one side and b, d on the other would
    # pair a-c with b-d (c is under g1 but sorts between b and d)
    d = derive_node_sets(parse_any_topology("s1: n1,n3 parent=g1\ns2: n2,n4 parent=g2\n"
                                                "g1: parent=top\ng2: parent=top\n"))
    assert "interleave" in d.missing["bisection"]
    assert d.hostlist("global") == "n[1-4]"


@pytest.mark.parametrize("nodes, text", [
    (["nid001"], "nid001"),
    (["nid003", "nid001", "nid002", "nid010"], "nid[001-003,010]"),
    (["a1", "b2", "b3", "login"], "a1,b[2-3],login"),
    (["n9", "n10", "n11"], "n[9-11]"),  # as Slurm's `scontrol show hostlist` writes it
])
def test_compress_hostlist(nodes, text):
    assert compress_hostlist(nodes) == text


def test_bad_topology_is_one_parse_error():
    with pytest.raises(ParseError, match="topology file"):
        parse_any_topology("just words\n")
    with pytest.raises(ParseError):
        parse_any_topology("SwitchName=a Nodes=n1\nSwitchName=b Nodes=n1\n")

"""Topology parsers: Slurm's tree (`scontrol show topology`, topology.conf; fat trees with a
switch under several parents, `LinkSpeed`), Slurm's block topology, our own file (routing,
dragonfly wiring), HPE Slingshot xnames; the links a run crosses in each shape; recorded
outputs in tests/data/topology (SOURCES.md there), every one read whole and cut anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.node_sets import derive_node_sets
from fabrictest.parsers.sinfo import parse_sinfo
from fabrictest.parsers.topology import (
    Hop,
    describe,
    parse_any_topology,
    parse_scontrol_topology,
    parse_topology_file,
    parse_xname,
    topology_from_switch_hosts,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "topology"
TOPOLOGIES = sorted(DATA.glob("*.txt"))
SINFO = sorted((ROOT / "tests" / "data" / "real-outputs").glob("sinfo*.txt"))


def read(name: str):
    return parse_any_topology((DATA / name).read_text())


def names(hops):
    return [h.name for h in hops]


def test_every_recording_is_listed_with_its_source():
    sources = (DATA / "SOURCES.md").read_text()
    assert len(TOPOLOGIES) >= 13
    for path in TOPOLOGIES:
        assert f"`{path.name}`" in sources, path.name


def test_scontrol_show_topology_recorded_on_the_vcluster():
    topo = read("scontrol-show-topology-vcluster-2sw.txt")
    assert (topo.source, topo.shape) == ("scontrol", "tree")
    assert topo.switch_of() == {"node01": "sw1", "node02": "sw1", "node03": "sw2",
                                "node04": "sw2"}
    assert topo.switches["top"].children == ["sw1", "sw2"]
    assert topo.switches["sw1"].parent == "top" and topo.switches["sw1"].level == 0
    assert topo.switches["top"].level == 1
    assert topo.route("node01", "node02") == []
    assert names(topo.route("node01", "node04")) == ["sw1<->top", "sw2<->top"]
    one = read("scontrol-show-topology-node01-vcluster-2sw.txt")
    assert one.switch_of() == {"node01": "sw1", "node02": "sw1"}
    assert one.path("sw1") == ["sw1", "top"]


def test_the_slurm_guides_fat_tree_is_read_with_node_sets_and_halves():
    """Refused before as 'switch s0 has two parents (s4, s5)'."""
    topo = read("topology-conf-slurm-guide-fat-tree.txt")
    assert topo.shape == "fat-tree"
    assert topo.switches["s0"].parents == ["s4", "s5", "s6", "s7"]
    assert topo.switches["s4"].children == ["s0", "s1", "s2", "s3"]
    assert (topo.switches["s0"].link_speed, topo.switches["s3"].link_speed) == (900, 1800)
    d = derive_node_sets(topo)
    assert d.missing == {}
    assert d.hostlist("switch") == "tux[0-3]"  # edge: a leaf
    assert d.hostlist("global") == "tux[0-7]"  # across two leaves
    assert d.hostlist("bisection") == "tux[0-15]"  # leaves s0-s1 against s2-s3
    assert describe(topo) == "fat-tree: 4 leaf switches in 4 groups, 16 nodes"


def test_fat_tree_routes_with_and_without_a_routing_rule():
    topo = read("topology-conf-slurm-guide-fat-tree.txt")
    # without a rule a run crosses one of each leaf's 4 uplinks: which, it cannot tell
    hops = topo.route("tux0", "tux5")
    assert hops == [Hop("uplinks", "s0", count=4), Hop("uplinks", "s1", count=4)]
    assert hops[0].label == "the uplinks of leaf s0 (4 links; cannot tell which)"
    # destination-mod-k: tux5 is node 5 in name order, spine 5 mod 4 = 1 (s5)
    dmodk = topo.configured(routing="dmodk")
    assert names(dmodk.route("tux0", "tux5")) == ["s0<->s5", "s1<->s5"]
    assert names(dmodk.route("tux9", "tux6")) == ["s2<->s6", "s1<->s6"]
    # LinkSpeed: a link is as fast as the slower of its ends
    assert dmodk.route("tux0", "tux5")[0].speed == 900.0
    assert dmodk.route("tux12", "tux1")[0].speed == 1800.0
    assert topo.route("tux0", "tux3") == []


def test_fat_tree_recorded_on_the_vcluster_slurm_22_05():
    topo = read("scontrol-show-topology-vcluster-fat-tree-4x2.txt")
    assert topo.shape == "fat-tree"
    assert topo.switches["leaf3"].parents == ["spine1", "spine2"]
    assert topo.switch_of()["node06"] == "leaf3"  # spines' Nodes= (all below) are not theirs
    assert names(topo.configured(routing="dmodk").route("node01", "node05")) == [
        "leaf1<->spine1", "leaf3<->spine1"]


def test_dragonfly_as_slurm_and_as_our_file_say_it():
    slurm = read("scontrol-show-topology-vcluster-dragonfly-2x2.txt")
    assert slurm.shape == "tree"  # TopologyParam=dragonfly is in slurm.conf, not here
    df = slurm.configured(dragonfly=True)
    assert df.shape == "dragonfly" and df.group_of("g2s1") == "g2"
    assert names(df.route("node01", "node03")) == ["g1s1<->g1s2"]
    assert df.route("node01", "node03")[0].label == "local link g1s1<->g1s2"
    bundle = df.route("node01", "node07")
    assert bundle == [Hop("globals", "g1", "g2")]  # the wiring is not in Slurm's view
    assert bundle[0].label == "the global links between groups g1 and g2 (cannot tell which)"
    ours = parse_topology_file(
        "routing=dmodk\ng1s1: node[01-02] parent=g1 global=g2s1\n"
        "g1s2: node[03-04] parent=g1 global=g2s2\ng2s1: node[05-06] parent=g2\n"
        "g2s2: node[07-08] parent=g2\n")
    assert ours.shape == "dragonfly"
    assert ours.global_links("g1", "g2") == [("g1s1", "g2s1"), ("g1s2", "g2s2")]
    # node07 is node 6: global link 6 mod 2 = 0 (g1s1-g2s1), then local to g2s2
    assert names(ours.route("node03", "node07")) == ["g1s1<->g1s2", "g1s1<->g2s1",
                                                      "g2s1<->g2s2"]
    assert [h.kind for h in ours.route("node03", "node07")] == ["local", "global", "local"]
    assert names(ours.route("node01", "node06")) == ["g1s1<->g1s2", "g1s2<->g2s2",
                                                      "g2s1<->g2s2"]
    d = derive_node_sets(df)
    assert (d.hostlist("switch"), d.hostlist("group"), d.hostlist("global")) == (
        "node[01-02]", "node[01-04]", "node[01-08]")


def test_slurm_says_dragonfly_beside_a_topology_conf(tmp_path):
    """topology.conf lives beside slurm.conf: TopologyParam=dragonfly there makes it one."""
    from fabrictest.topology_source import TopologyError, read_topology

    conf = tmp_path / "topology.conf"
    conf.write_text((DATA / "scontrol-show-topology-vcluster-dragonfly-2x2.txt").read_text())
    assert read_topology(str(conf)).shape == "tree"
    (tmp_path / "slurm.conf").write_text("TopologyPlugin=topology/tree\n"
                                         "TopologyParam=RouteTree,dragonfly\n")
    assert read_topology(str(conf)).shape == "dragonfly"
    assert read_topology(str(conf), routing="dmodk").routing == "dmodk"
    with pytest.raises(TopologyError, match="--routing ecmp: one of dmodk"):
        read_topology(str(conf), routing="ecmp")


def test_block_topology_is_read_as_groups():
    conf = read("topology-conf-man-block.txt")
    assert conf.shape == "blocks" and conf.block_sizes == [30, 120]
    assert conf.switch_of()["node40"] == "block2"
    assert conf.route("node1", "node40") == [Hop("blocks", "block1", "block2")]
    d = derive_node_sets(conf)
    assert "names blocks" in d.missing["switch"]
    assert d.hostlist("group") == "node[1-32]" and d.hostlist("global") == "node[1-64]"
    printed = read("scontrol-show-topology-block-gcm.txt")  # Slurm 24.11+: BlockSize=
    assert printed.shape == "blocks"
    assert printed.switches["block_DH1-067-US-EAST-04B"].nodes == [
        "g3-129-235", "g3-129-237", "g3-130-001", "g3-130-003"]
    nv = read("topology-conf-topograph-block.txt")
    assert len(nv.leaves()) == 12 and nv.block_sizes == [8, 16, 32]


def test_aggregated_blocks_and_mixed_files():
    text = ("BlockName=b1 BlockIndex=0 Nodes=n[1-2] BlockSize=2\n"
            "BlockName=b2 BlockIndex=1 Nodes=n[3-4] BlockSize=2\n"
            "AggregatedBlock=b1_b2 BlockIndex=2 Nodes=n[1-4] BlockSize=4\n")
    assert parse_scontrol_topology(text).leaves() == ["b1", "b2"]
    with pytest.raises(ParseError, match="node n9 is in no base block"):
        parse_scontrol_topology(text.replace("n[1-4] BlockSize=4", "n[1-4,9] BlockSize=4"))
    with pytest.raises(ParseError, match="both switches"):
        parse_scontrol_topology("SwitchName=s1 Nodes=n1\nBlockName=b1 Nodes=n2\n")


def test_sites_outputs_read_as_printed():
    gcm = read("scontrol-show-topology-tree-gcm.txt")
    assert gcm.switches["data-transfer"].nodes == []  # an empty Nodes=
    d = derive_node_sets(gcm)
    assert d.missing["global"] == "2 groups under no common top switch: nothing spans two groups"
    nv = read("topology-conf-topograph-tree.txt")  # switch.2.[1-6]: dots in the names
    assert nv.switches["switch.3.1"].children == [f"switch.2.{k}" for k in range(1, 7)]
    assert nv.path("switch.1.5") == ["switch.1.5", "switch.2.3", "switch.3.1"]
    three = read("topology-conf-slurm-guide-three-levels.txt")
    assert names(three.route("tux0", "tux7")) == ["s0<->s4", "s4<->s6", "s3<->s5", "s5<->s6"]


def test_topology_conf_forms_slurm_accepts():
    text = ("# comment\nswitchname=s1 nodes=n[1-2] # trailing\n"
            "SwitchName=s2 \\\n  Nodes=n[3-4]\nSwitchName=top Switches=s[1-2] LinkSpeed=100\n")
    topo = parse_scontrol_topology(text)
    assert topo.switches["s2"].nodes == ["n3", "n4"] and topo.switches["top"].link_speed == 100


def test_our_own_file():
    text = """# switch: nodes, parent
    sw1: nid[001-003] parent=spine
    sw2: nid[004-006] parent=spine speed=400
    spine:
    """
    topo = parse_topology_file(text)
    assert topo.switch_of()["nid005"] == "sw2"
    assert topo.switches["spine"].children == ["sw1", "sw2"]
    assert names(topo.route("nid001", "nid006")) == ["sw1<->spine", "sw2<->spine"]
    assert topo.route("nid001", "nid006")[1].speed == 400.0
    fat = parse_topology_file("l1: a[1-2] parent=s[1-2]\nl2: a[3-4] parent=s1,s2\n")
    assert fat.shape == "fat-tree" and fat.switches["s2"].children == ["l1", "l2"]


def test_slingshot_xnames_as_the_acceptance_notes_use_them():
    sw = parse_xname("x1000c1r5b0")
    assert (sw.kind, sw.cabinet, sw.chassis, sw.switch) == ("switch", 1000, 1, 5)
    assert sw.switch_name == "x1000c1r5b0"
    node = parse_xname("x1000c1s0b0n0")
    assert (node.kind, node.cabinet, node.slot, node.bmc, node.node) == ("node", 1000, 0, 0, 0)
    assert parse_xname("x1002c3r7b0").group() == 1002
    assert parse_xname("x1003c0r1b0").group(cabinets_per_group=2, first_cabinet=1000) == 1
    # the notes' host file per switch (nids-switch.sh: lldptool, grep per switch)
    topo = topology_from_switch_hosts({"x1000c1r5b0": ["nid001000", "nid001001"],
                                       "x1000c1r7b0": ["nid001002"],
                                       "x1001c0r3b0": ["nid001064"]})
    assert topo.shape == "dragonfly"
    assert topo.switch_of()["nid001002"] == "x1000c1r7b0"
    assert topo.switches["x1000c1r5b0"].parent == "group1000"
    assert topo.switches["group1001"].parent == "global"
    assert topo.route("nid001000", "nid001001") == []  # edge: one switch
    assert [h.kind for h in topo.route("nid001000", "nid001002")] == ["local"]
    assert topo.route("nid001000", "nid001064") == [Hop("globals", "group1000", "group1001")]


@pytest.mark.parametrize("text, message", [
    ("", "empty scontrol show topology output"),
    ("hello world\n", "line 1 names no switch"),
    ("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n", "switch a listed twice"),
    ("SwitchName=a Nodes=n1\nSwitchName=b Nodes=n1\n", "node n1 is under two switches"),
    ("SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "cycle"),
    ("SwitchName=a Switches=a\n", "its own parent"),
    ("SwitchName=a Level=x Nodes=n1\n", "bad number"),
    ("SwitchName=a LinkSpeed=0 Nodes=n1\n", "below 1"),
    ("SwitchName=a Nodes=n[3-1]\n", "bad .*Nodes=.* 'n\\[3-1\\]': start > stop"),
    ("SwitchName=a Nodes=n[1-2\n", "unbalanced brackets"),
    ("SwitchName=a Nodes=n[0-99999999]\n", "more than 100000 names"),
    ("SwitchName=a Colour=red Nodes=n1\n", "unknown key 'colour'"),
    ("SwitchName=a Nodes=n1 trailing words\n", "is not KEY=VALUE"),
    ("SwitchName= Nodes=n1\n", "names no switch"),
    ("SwitchName=a Nodes=n1 Nodes=n2\n", "a key given twice"),
    ("BlockSizes=4\nBlockSizes=8\nBlockName=b Nodes=n1\n", "BlockSizes= given twice"),
    ("BlockName=b1 Nodes=n1 BlockSize=0\n", "below 1"),
    ("SwitchName=s6 Switches=s", "ends mid-line"),
    # issue 43: read as one switch literally named "leaf[1-4]" before
    ("SwitchName=leaf[1-4] Nodes=n[1-8]\n", r"line 1: SwitchName=leaf\[1-4\] names several"),
    ("SwitchName=a,b Nodes=n1\n", r"SwitchName=a,b names several"),
    ("BlockName=b[1-2] Nodes=n[1-4]\n", r"BlockName=b\[1-2\] names several"),
])
def test_bad_scontrol_text_is_one_clear_error(text, message):
    with pytest.raises(ParseError, match=message):
        parse_scontrol_topology(text)


@pytest.mark.parametrize("text, message", [
    ("sw1 node01\n", "expected 'SWITCH: NODES"),
    ("sw1: node01 colour=red\n", "unknown key"),
    ("# nothing\n", "no switch"),
    ("routing=ecmp\nsw1: n1\n", "expected 'SWITCH: NODES"),
    ("g1s1: n1 parent=g1 global=g1s2\ng1s2: n2 parent=g1\n", "joins one group"),
    ("g1s1: n1 parent=g1 global=nowhere\n", "not a switch"),
    ("sw1: n1 parent=top", "ends mid-line"),
])
def test_bad_own_file_is_one_clear_error(text, message):
    with pytest.raises(ParseError, match=message):
        parse_topology_file(text)


@pytest.mark.parametrize("text", ["x1000", "nid001000", "x1000c1r5b0n0", "c1r5"])
def test_not_an_xname(text):
    with pytest.raises(ParseError, match="is not a switch"):
        parse_xname(text)


# --- every recording cut anywhere: read exactly what it holds, or refused ----------------

@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.name)
def test_topology_cut_anywhere_is_read_exactly_or_refused(path):
    """A cut that ends a line reads the switches of the lines before it, exactly as the whole
    text places them; any other cut (a `SwitchName=s6 Switches=s` without its newline) is
    refused, never read as a switch `s` or a shorter node list."""
    text = path.read_text()
    whole = parse_any_topology(text)
    where = whole.switch_of()
    read = refused = 0
    for k in range(len(text)):
        cut = text[:k]
        try:
            part = parse_any_topology(cut)
        except ParseError:
            refused += 1
            continue
        read += 1
        assert cut.endswith("\n"), f"read a text cut mid-line at {k}: {cut[-40:]!r}"
        assert set(part.switches) <= set(whole.switches), (k, set(part.switches) - set(whole.switches))
        assert all(where[n] == s for n, s in part.switch_of().items()), k
        for s in part.leaves():
            assert part.switches[s].nodes == whole.switches[s].nodes, (k, s)
    assert refused and (read or text.count("\n") <= 1)


@pytest.mark.parametrize("path", SINFO, ids=lambda p: p.name)
def test_sinfo_cut_anywhere_is_read_exactly_or_refused(path):
    text = path.read_text()
    whole = parse_sinfo(text)
    for k in range(len(text)):
        try:
            part = parse_sinfo(text[:k])
        except ParseError:
            continue
        assert text[:k].endswith("\n")
        assert part.rows == whole.rows[:len(part.rows)], k

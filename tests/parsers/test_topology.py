"""Topology parsers: Slurm's tree (`scontrol show topology`, topology.conf), our own file,
HPE Slingshot xnames; recorded outputs in tests/data/topology (SOURCES.md there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.topology import (
    parse_scontrol_topology,
    parse_topology_file,
    parse_xname,
    topology_from_switch_hosts,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "topology"


def test_every_recording_is_listed_with_its_source():
    names = sorted(p.name for p in DATA.glob("*.txt"))
    sources = (DATA / "SOURCES.md").read_text()
    assert names
    for name in names:
        assert f"`{name}`" in sources, name


def test_scontrol_show_topology_recorded_on_the_vcluster():
    topo = parse_scontrol_topology((DATA / "scontrol-show-topology-vcluster-2sw.txt")
                                   .read_text())
    assert topo.source == "scontrol"
    assert topo.switch_of() == {"node01": "sw1", "node02": "sw1", "node03": "sw2",
                                "node04": "sw2"}
    assert topo.switches["top"].children == ["sw1", "sw2"]
    assert topo.switches["sw1"].parent == "top" and topo.switches["sw1"].level == 0
    assert topo.switches["top"].level == 1
    assert topo.route("node01", "node02") == []
    assert topo.route("node01", "node04") == [("sw1", "top"), ("sw2", "top")]


def test_scontrol_show_topology_of_one_node():
    topo = parse_scontrol_topology((DATA / "scontrol-show-topology-node01-vcluster-2sw.txt")
                                   .read_text())
    assert topo.switch_of() == {"node01": "sw1", "node02": "sw1"}
    assert topo.path("sw1") == ["sw1", "top"]


def test_topology_conf_lines_parse_the_same_way():
    conf = ("# a comment\nSwitchName=s1 Nodes=node[01-02]\nSwitchName=s2 Nodes=node[03-04]\n"
            "SwitchName=top Switches=s[1-2]\n")
    topo = parse_scontrol_topology(conf)
    assert topo.leaves() == ["s1", "s2"]
    assert topo.switches["s2"].nodes == ["node03", "node04"]
    assert topo.path("s1") == ["s1", "top"]


def test_our_own_file():
    text = """# switch: nodes, parent
    sw1: nid[001-003] parent=spine
    sw2: nid[004-006] parent=spine
    spine:
    """
    topo = parse_topology_file(text)
    assert topo.switch_of()["nid005"] == "sw2"
    assert topo.switches["spine"].children == ["sw1", "sw2"]
    assert topo.route("nid001", "nid006") == [("sw1", "spine"), ("sw2", "spine")]


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
    assert topo.switch_of()["nid001002"] == "x1000c1r7b0"
    assert topo.switches["x1000c1r5b0"].parent == "group1000"
    assert topo.switches["group1001"].parent == "global"
    assert topo.route("nid001000", "nid001001") == []  # edge: one switch
    assert len(topo.route("nid001000", "nid001002")) == 2  # local: one group
    assert topo.route("nid001000", "nid001064")[1] == ("group1000", "global")  # global


@pytest.mark.parametrize("text, message", [
    ("", "empty scontrol show topology output"),
    ("hello world\n", "line 1 names no switch"),
    ("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n", "switch a listed twice"),
    ("SwitchName=a Nodes=n1\nSwitchName=b Nodes=n1\n", "node n1 is under two switches"),
    ("SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "cycle"),
    ("SwitchName=a Switches=c\nSwitchName=b Switches=c\n", "switch c has two parents"),
    ("SwitchName=a Level=x Nodes=n1\n", "bad number"),
])
def test_bad_scontrol_text_is_one_clear_error(text, message):
    with pytest.raises(ParseError, match=message):
        parse_scontrol_topology(text)


@pytest.mark.parametrize("text, message", [
    ("sw1 node01\n", "expected 'SWITCH: NODES"),
    ("sw1: node01 speed=4\n", "unknown key"),
    ("# nothing\n", "no switch"),
])
def test_bad_own_file_is_one_clear_error(text, message):
    with pytest.raises(ParseError, match=message):
        parse_topology_file(text)


@pytest.mark.parametrize("text", ["x1000", "nid001000", "x1000c1r5b0n0", "c1r5"])
def test_not_an_xname(text):
    with pytest.raises(ParseError, match="is not a switch"):
        parse_xname(text)

"""`vcluster up --switches N` as a plan (pure): nodes dealt to switches, Slurm's tree
topology written to match, what the topology parser reads back."""

from __future__ import annotations

import pytest

from fabrictest.parsers.topology import parse_scontrol_topology
from fabrictest.vcluster import cli, switches
from fabrictest.vcluster.plan import Plan
from fabrictest.vcluster.shaping import PlanError


def test_two_switches_of_four_nodes(tmp_path):
    p = Plan(state_dir=tmp_path, nodes=4, switches=2)
    assert {s: [n.name for n in ns] for s, ns in switches.members(p).items()} == {
        "sw1": ["node01", "node02"], "sw2": ["node03", "node04"]}
    assert "TopologyPlugin=topology/tree" in p.slurm_conf_text().splitlines()
    topo = parse_scontrol_topology(switches.topology_conf_text(p))
    assert topo.switch_of() == {"node01": "sw1", "node02": "sw1", "node03": "sw2",
                                "node04": "sw2"}
    assert topo.switches["top"].children == ["sw1", "sw2"]
    assert switches.bridge(p, "sw2") == "vcbr-sw2" and switches.bridge(p, None) == p.bridge
    assert switches.uplink("sw1") == ("vcv-up-sw1", "vcv-ut-sw1")
    assert all(len(d) <= 15 for d in switches.uplink("sw64"))  # Linux device names
    assert Plan.from_json(p.to_json()) == p


def test_uneven_and_no_switches(tmp_path):
    p = Plan(state_dir=tmp_path, nodes=5, switches=2)
    assert [len(ns) for ns in switches.members(p).values()] == [3, 2]
    flat = Plan(state_dir=tmp_path, nodes=4)
    assert switches.topology_conf_text(flat) == ""
    assert "TopologyPlugin" not in flat.slurm_conf_text()
    with pytest.raises(PlanError, match="not a switch of this cluster"):
        switches.require(flat, "sw1")


@pytest.mark.parametrize("count", [-1, 5])
def test_bad_switch_count(tmp_path, count):
    with pytest.raises(PlanError, match="--switches must be between 1 and the node count"):
        Plan(state_dir=tmp_path, nodes=4, switches=count)


def test_cli_refusals(tmp_path, capsys):
    rc = cli.main(["--state-dir", str(tmp_path / "none"), "degrade-uplink", "sw1", "fast"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "bad rate" in err
    rc = cli.main(["--state-dir", str(tmp_path / "none"), "up", "--nodes", "4",
                   "--switches", "9"])
    err = capsys.readouterr().err
    assert rc == 2 and "--switches must be between 1 and the node count (4)" in err
    # a good request: what stops it is the missing cluster
    rc = cli.main(["--state-dir", str(tmp_path / "none"), "degrade-uplink", "sw1", "50mbit"])
    assert rc == 1 and capsys.readouterr().err.startswith("vcluster: error: no cluster in ")

"""`vcluster up --preflight [--health-check S]` as a plan (pure): the switch ports and their
Slingshot MACs, every node's AMA, fabric address and name, the inventory fabric-health reads,
Slurm's health check lines and script, and the faults' refusals of bad input."""

from __future__ import annotations

import pytest

from fabrictest.health.stage1_checks import ama_from_port, ama_of, is_ama
from fabrictest.parsers.inventory import parse_inventory
from fabrictest.vcluster import cli
from fabrictest.vcluster import preflight_plan as pp
from fabrictest.vcluster.plan import Plan
from fabrictest.vcluster.shaping import PlanError


def test_ports_macs_and_inventory_on_two_switches(tmp_path):
    p = Plan(state_dir=tmp_path, nodes=4, switches=2, preflight=True)
    ports = pp.home_ports(p)
    assert {n: (port.switch, port.name) for n, port in ports.items()} == {
        "node01": ("sw1", "p1"), "node02": ("sw1", "p2"),
        "node03": ("sw2", "p1"), "node04": ("sw2", "p2")}
    for port in ports.values():
        assert is_ama(port.ama) and ama_from_port(port.switch_mac) == port.ama
        assert port.ama == ama_of(0, port.switch_index(), port.index)
    assert len({p.ama for p in ports.values()}) == 4
    inv = parse_inventory(pp.inventory(p))
    e = inv.get("node03", "hsn0")
    assert (e.switch, e.port, e.mac, e.ip) == ("sw2", "p1", "02:00:00:00:00:81", "10.200.1.13")
    assert str(pp.fabric_network(p)) == "10.200.1.0/24"
    assert pp.hosts_lines(p).splitlines()[0] == "10.200.1.11\tnode01-hsn0"
    assert pp.hosts_lines(p, {"node02"}).splitlines()[1] == "10.200.1.254\tnode02-hsn0"
    assert Plan.from_json(p.to_json()) == p


def test_one_bridge_is_switch_sw0(tmp_path):
    p = Plan(state_dir=tmp_path, nodes=3, preflight=True)
    assert [(x.switch, x.name) for x in pp.home_ports(p).values()] == [
        ("sw0", "p1"), ("sw0", "p2"), ("sw0", "p3")]
    assert pp.home_ports(p)["node02"].switch_mac == "02:fe:00:00:00:02"


def test_a_port_out_of_the_ama_layout_is_refused(tmp_path):
    with pytest.raises(PlanError, match="switches 0-31 and ports 1-63"):
        pp.Port("sw1", 64).low_bits()


def test_health_check_script_and_slurm_lines(tmp_path):
    p = Plan(state_dir=tmp_path, nodes=2, preflight=True, health_check=7)
    assert pp.slurm_conf_lines(p) == [f"HealthCheckProgram={tmp_path}/etc/healthcheck.sh",
                                      "HealthCheckInterval=7", "HealthCheckNodeState=ANY"]
    script = pp.health_script_text(p, tmp_path / "bin")
    assert script.startswith("#!/bin/sh\n")
    assert f"{tmp_path}/bin/fabric-health --drain --node-name \"$node\" --no-rdma --no-arp " \
           "--nic hsn0" in script
    assert "--mac-rule slingshot-ama" in script and "--mgmt vcctl:6817" in script
    assert f"timeout {pp.HEALTH_TIMEOUT_S} " in script
    assert pp.slurm_conf_lines(Plan(state_dir=tmp_path, nodes=2, preflight=True)) == []
    extras = pp.reframe_extras(p)
    assert extras["fabric_nics"] == ["hsn0"] and extras["no_arp"] is True


@pytest.mark.parametrize("mac,why", [
    ("02:00:00:00:00", "six hexadecimal octets"), ("01:00:5e:00:00:01", "multicast"),
    ("00:00:00:00:00:00", "all zeros"), ("zz:00:00:00:00:00", "six hexadecimal octets")])
def test_bad_macs(mac, why):
    with pytest.raises(PlanError, match=why):
        pp.parse_mac(mac)
    assert pp.parse_mac("02-00-00-00-00-9A") == "02:00:00:00:00:9a"


@pytest.mark.parametrize("argv,why", [
    (["swap-cable", "node01", "node01"], "swap-cable needs two nodes, not node01 twice"),
    (["swap-cable", "node01", "nodeX"], "'nodeX' is not a node name"),
    (["set-mac", "node02", "01:00:5e:00:00:01"], "is a multicast address"),
    (["set-mac", "node02", "nonsense"], "bad MAC"),
    (["drop-ip", "n3"], "'n3' is not a node name"),
    (["bad-dns", "node"], "'node' is not a node name"),
    (["up", "--health-check", "-5"], "--health-check -5: seconds between runs"),
    (["up", "--health-check", "999999"], "--health-check 999999: seconds between runs"),
])
def test_cli_refuses_bad_input_before_looking_for_a_cluster(tmp_path, capsys, argv, why):
    rc = cli.main(["--state-dir", str(tmp_path / "none"), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and why in err, err


def test_faults_need_a_preflight_cluster(tmp_path, capsys):
    rc = cli.main(["--state-dir", str(tmp_path / "none"), "drop-ip", "node01"])
    err = capsys.readouterr().err
    assert rc == 1 and "no cluster in" in err

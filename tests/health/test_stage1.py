"""Stage 1's fabric-NIC checks (MAC, address, names, LLDP neighbour, management network,
loopback rate) on the Slingshot host software's recordings (tests/data/real-outputs), and the
command with stand-in tools on PATH: each check passes on its healthy input and fails on the
fault it exists for, with what it found and what it expected. ``--drain`` against a stand-in
``scontrol``: a failure drains with its line, a pass resumes what fabric-health drained and
nothing else."""

from __future__ import annotations

import json
import socket
import subprocess
import textwrap
from pathlib import Path

import pytest
from recordings import read

from fabrictest.health import cli as health
from fabrictest.health import stage1_checks as c
from fabrictest.health import stage1_gather
from fabrictest.parsers.inventory import parse_inventory
from fabrictest.parsers.ip_addr import parse_ip_addr
from fabrictest.parsers.lldp import LldpNeighbor, parse_lldptool

GOOD_LLDP = "lldptool-t-n-slingshot-hsn0-x6107c0r48b0.txt"
GOOD_IP = "ip-addr-show-slingshot-hsn0-ama-permaddr.txt"
BAD_LLDP = "lldptool-t-n-slingshot-hsn0-ama-mismatch.txt"
BAD_IP = "ip-addr-show-slingshot-hsn0-ama-mismatch.txt"
INVENTORY = ("nid001 hsn0 x6107c0r48b0 ros0p42 02:00:00:00:07:ea 10.152.0.209\n"
             "nid002 hsn0 x6102c0r45b0 ros0p27 02:00:00:00:03:1b 10.152.0.121\n")


def neighbors(name):
    return parse_lldptool(read(name), "hsn0").of("hsn0")


def iface(name):
    return parse_ip_addr(read(name))["hsn0"]


# ----------------------------------------------------------------------------- pure: MAC
def test_ama_layout_is_the_documents():
    # "hsn0 is connected to switch x6107c0r48b0 ... group 0, switchId 31, portId 42":
    # 02:00:00:00:07:ea (the Slingshot host software's AMA concepts page)
    assert c.ama_of(0, 31, 42) == "02:00:00:00:07:ea"
    assert c.ama_from_port("02:fe:00:00:07:ea") == "02:00:00:00:07:ea"
    assert c.ama_from_port("a4:8c:db:6a:09:00") is None
    assert c.is_ama("02:00:00:05:42:b1") and not c.is_ama("02:00:00:15:42:b1")
    with pytest.raises(ValueError):
        c.ama_of(512, 0, 0)


def test_slingshot_ama_passes_on_the_documents_matching_node():
    r = c.check_mac("nid001", "hsn0", iface(GOOD_IP).mac, "slingshot-ama", neighbors(GOOD_LLDP))
    assert r.ok, r.detail
    assert r.detail == ("found 02:00:00:00:07:ea, expected 02:00:00:00:07:ea (Slingshot AMA of "
                        "x6107c0r48b0 port ros0p42, 02:fe:00:00:07:ea)")


def test_slingshot_ama_fails_on_the_documents_mismatch():
    r = c.check_mac("nid002", "hsn0", iface(BAD_IP).mac, "slingshot-ama", neighbors(BAD_LLDP))
    assert not r.ok
    assert r.detail.startswith("found 02:00:00:00:03:7c, expected 02:00:00:00:03:1b")


@pytest.mark.parametrize("nbrs,problem,why", [
    (None, "lldpctl exited 1", "no LLDP (lldpctl exited 1)"),
    ([], None, "no LLDP neighbour"),
    ([LldpNeighbor("hsn0", "a4:8c:db:6a:09:00", "mac", port_id="34", port_id_type="local")],
     None, "is not a Slingshot switch port's"),
    ([LldpNeighbor("hsn0", "x", "local", "sw1", "p1", "local")], None,
     "a neighbour without a port MAC"),
])
def test_slingshot_ama_without_a_slingshot_port_fails(nbrs, problem, why):
    r = c.check_mac("n", "hsn0", "02:00:00:00:07:ea", "slingshot-ama", nbrs, problem)
    assert not r.ok and why in r.detail, r.detail


def test_inventory_mac_rule():
    inv = parse_inventory(INVENTORY)
    want = inv.get("nid001", "hsn0").mac
    assert c.check_mac("nid001", "hsn0", "02:00:00:00:07:EA", "inventory",
                       inventory_mac=want, inventory_where="line 1").ok
    bad = c.check_mac("nid001", "hsn0", "5c:bc:3d:af:cb:e3", "inventory", inventory_mac=want)
    assert not bad.ok and "expected 02:00:00:00:07:ea" in bad.detail
    assert not c.check_mac("nid009", "hsn0", "02:00:00:00:07:ea", "inventory").ok


# ------------------------------------------------------------------- pure: address, names
def test_ip_by_inventory_subnet_or_any():
    i = iface(GOOD_IP)
    ok, addr = c.check_ip("n", "hsn0", i, expected_ip="10.152.0.209")
    assert ok.ok and addr == "10.152.0.209"
    assert c.check_ip("n", "hsn0", i, subnet="10.152.0.0/15")[0].ok
    wrong = c.check_ip("n", "hsn0", i, subnet="10.253.0.0/16")[0]
    assert not wrong.ok and wrong.detail == ("found 10.152.0.209/15, expected an address in "
                                             "10.253.0.0/16")
    assert c.check_ip("n", "hsn0", i)[0].ok
    none = parse_ip_addr(read("ip-a-slingshot-hsn0-nmn0-unindented.txt"))["net1"]
    assert c.check_ip("n", "net1", none) == (
        c.check_ip("n", "net1", none)[0], None)
    assert not c.check_ip("n", "net1", none)[0].ok
    missing_nic = c.check_ip("n", "hsn7", None, "ip addr shows no hsn7")[0]
    assert not missing_nic.ok and "ip addr shows no hsn7" in missing_nic.detail


def test_names_both_ways():
    fwd, rev = c.check_names("nid001", "hsn0", "nid001-hsn0", "10.152.0.209",
                             ["10.152.0.209"], None, ["nid001-hsn0.local"], None)
    assert fwd.ok and rev.ok
    fwd, rev = c.check_names("nid001", "hsn0", "nid001-hsn0", "10.152.0.209",
                             ["10.152.0.254"], None, None, "no name")
    assert not fwd.ok and fwd.detail == "nid001-hsn0 -> 10.152.0.254, expected 10.152.0.209"
    assert not rev.ok and rev.detail == "10.152.0.209 -> no name, expected nid001-hsn0"
    fwd, rev = c.check_names("nid001", "hsn0", "nid001-hsn0", None, None, None, None, None)
    assert not fwd.ok and not rev.ok
    _, rev = c.check_names("n", "hsn0", "nid001-hsn0", "10.0.0.1", ["10.0.0.1"], None,
                           ["nid001-hsn01"], None)
    assert not rev.ok  # a longer name is another name


def test_a_name_that_also_resolves_to_another_address_fails():
    """A stale second record (DNS and hosts file both answer): peers may reach another host."""
    fwd, _ = c.check_names("nid001", "hsn0", "nid001-hsn0", "10.152.0.209",
                           ["10.152.0.209", "10.152.0.250"], None, ["nid001-hsn0"], None,
                           own=("10.152.0.209", "fe80::ff:fe00:7ea"))
    assert not fwd.ok
    assert fwd.detail == ("nid001-hsn0 -> 10.152.0.209, 10.152.0.250, expected 10.152.0.209 "
                          "(also 10.152.0.250: not hsn0's)")
    # the NIC's own other address (its IPv6) is no stray
    fwd, _ = c.check_names("nid001", "hsn0", "nid001-hsn0", "10.152.0.209",
                           ["10.152.0.209", "fe80::ff:fe00:7ea"], None, ["nid001-hsn0"], None,
                           own=("10.152.0.209", "fe80::ff:fe00:7ea"))
    assert fwd.ok, fwd.detail


# ----------------------------------------------------------------------------- pure: LLDP
def test_lldp_against_inventory_and_topology():
    inv = parse_inventory(INVENTORY)
    exp = c.expected_neighbor("nid001", "hsn0", inv, None)
    assert exp == c.ExpectedNeighbor("x6107c0r48b0", "ros0p42", "inventory line 1")
    good = c.check_lldp("nid001", "hsn0", exp, neighbors(GOOD_LLDP))
    assert good.ok and good.detail == ("found x6107c0r48b0 port ros0p42, expected x6107c0r48b0 "
                                       "port ros0p42 (inventory line 1)")
    # the other node's cable: its switch and port
    swapped = c.check_lldp("nid001", "hsn0", exp, neighbors(BAD_LLDP))
    assert not swapped.ok and swapped.detail.startswith("found x6102c0r45b0 port ros0p27")
    topo = c.expected_neighbor("nid001", "hsn0", None, {"nid001": "x6107c0r48b0"})
    assert topo.port is None and c.check_lldp("nid001", "hsn0", topo, neighbors(GOOD_LLDP)).ok
    assert not c.check_lldp("nid001", "hsn0", topo, neighbors(BAD_LLDP)).ok
    assert not c.check_lldp("nid009", "hsn0", c.expected_neighbor("nid009", "hsn0", inv, {}),
                            neighbors(GOOD_LLDP)).ok


def test_lldp_neighbour_counts():
    exp = c.ExpectedNeighbor("sw1", "p1", "inventory line 1")
    a = LldpNeighbor("eth0", sysname="sw1.cluster", port_id="02:fe:00:00:00:41",
                     port_id_type="mac", port_descr="p1")
    b = LldpNeighbor("eth0", sysname="sw2", port_descr="p3")
    assert c.check_lldp("n", "eth0", exp, [a]).ok  # an FQDN system name
    assert c.check_lldp("n", "eth0", exp, [a, a]).ok  # one neighbour listed twice
    two = c.check_lldp("n", "eth0", exp, [a, b])
    assert not two.ok and "found 2 neighbours" in two.detail
    assert not c.check_lldp("n", "eth0", exp, []).ok
    none = c.check_lldp("n", "eth0", exp, None, "neither lldpctl (lldpd) nor lldptool")
    assert not none.ok and "neither lldpctl" in none.detail
    wrong_port = LldpNeighbor("eth0", sysname="sw1", port_descr="p2")
    assert not c.check_lldp("n", "eth0", exp, [wrong_port]).ok


def test_loopback_judgement():
    assert c.check_loopback("n", "hsn0", "m", 97.9, 100, 0.9).ok
    low = c.check_loopback("n", "hsn0", "m", 60.0, 100, 0.9)
    assert not low.ok and low.detail == "found 60 Gb/s, expected >= 90 Gb/s (0.9 x 100 Gb/s; m)"
    for got, rate in ((float("nan"), 100), (None, 100), (97.9, None), (97.9, float("inf")),
                      (-1.0, 100), (97.9, 0)):
        assert not c.check_loopback("n", "hsn0", "m", got, rate, 0.9).ok


def test_a_loopback_faster_than_its_port_fails():
    """issue 40: 250 Gb/s on a 100 Gb/s port never crossed the NIC (ceiling: x 1.1 margin)."""
    fast = c.check_loopback("n", "hsn0", "m", 250.0, 100, 0.9)
    assert not fast.ok and fast.detail == ("found 250 Gb/s, above the port's 100 Gb/s x 1.1 "
                                           "margin = 110 Gb/s: impossible through the NIC")
    assert c.check_loopback("n", "hsn0", "m", 109.9, 100, 0.9).ok
    # TCP over the NIC's address is the kernel's loopback (the vcluster's 15.8 Gb/s beside a
    # 0.2 Gb/s port, tests/vcluster/test_preflight_e2e.py): no ceiling, it never left memory
    assert c.check_loopback("n", "hsn0", "m", 15.8, 0.2, 0.5, through_nic=False).ok


# ------------------------------------------------------------ the command with stand-ins
def make_node(tmp_path: Path) -> tuple[Path, Path]:
    """A sysfs with one RoCE port (mlx5_0/1, 100 Gb/s, netdev hsn0) and a /proc."""
    sys_root = tmp_path / "sys"
    pdir = sys_root / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        (pdir / sub).mkdir(parents=True, exist_ok=True)
    for name, value in (("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"),
                        ("link_layer", "Ethernet"), ("rate", "100 Gb/sec (4X EDR)")):
        (pdir / name).write_text(value + "\n")
    (pdir / "gids" / "0").write_text("fe80:0000:0000:0000:0000:00ff:fe00:07ea\n")
    (pdir / "gid_attrs" / "types" / "0").write_text("RoCE v2\n")
    (pdir / "gid_attrs" / "ndevs" / "0").write_text("hsn0\n")
    net = sys_root / "class" / "net" / "hsn0"
    net.mkdir(parents=True, exist_ok=True)
    (net / "mtu").write_text("9000\n")
    (net / "operstate").write_text("up\n")
    neigh = tmp_path / "proc" / "sys" / "net" / "ipv4" / "neigh" / "default"
    neigh.mkdir(parents=True, exist_ok=True)
    for i, value in enumerate((128, 512, 1024), 1):
        (neigh / f"gc_thresh{i}").write_text(f"{value}\n")
    return sys_root, tmp_path / "proc"


def _sh(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body).strip() + "\n")
    path.chmod(0o755)


@pytest.fixture
def fake_node(tmp_path, monkeypatch):
    """A bin directory with stand-in ip, getent, lldptool, scontrol and ib_write_bw (PATH is
    only it), fed from files the test writes."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    files = {k: tmp_path / k for k in ("ip.json", "hosts", "lldp.txt", "slurm.txt",
                                       "scontrol.log", "bw.txt")}
    # shell stand-ins (PATH holds only them: the real tools' paths are spelt out)
    _sh(bin_dir / "ip", f"/bin/cat {files['ip.json']}")
    _sh(bin_dir / "getent", f"""
        /usr/bin/awk -v kind="$1" -v key="$2" '
          kind == "hosts" && $1 == key {{ print; hit = 1 }}
          kind == "ahosts" {{ for (i = 2; i <= NF; i++) if ($i == key)
                               {{ print $1 "  STREAM " key; hit = 1 }} }}
          END {{ exit hit ? 0 : 2 }}' {files['hosts']}""")
    _sh(bin_dir / "lldptool", f"/bin/cat {files['lldp.txt']}")
    _sh(bin_dir / "scontrol", f"""
        echo "$*" >> {files['scontrol.log']}
        if [ "$1" = -o ]; then /bin/cat {files['slurm.txt']}; echo; exit 0; fi
        node=${{2#NodeName=}}
        if [ "$3" = State=DRAIN ]; then
            echo "NodeName=$node State=IDLE+DRAIN ${{4}} [root@2026-11-26T10:00:00]" \
                > {files['slurm.txt']}
        else
            echo "NodeName=$node State=IDLE [root@2026-11-26T10:00:00]" > {files['slurm.txt']}
        fi""")
    _sh(bin_dir / "ib_write_bw", f"""
        for last; do :; done
        if [ "$last" != localhost ]; then exec /bin/sleep 30; fi  # the server: stopped
        /bin/cat {files['bw.txt']}""")
    monkeypatch.setenv("PATH", str(bin_dir))
    ip = parse_ip_addr(read(GOOD_IP))["hsn0"]
    files["ip.json"].write_text(json.dumps([{
        "ifname": "hsn0", "address": ip.mac, "operstate": "UP", "mtu": 9000,
        "addr_info": [{"family": "inet", "local": "10.152.0.209", "prefixlen": 15,
                       "scope": "global"}]}]))
    files["hosts"].write_text("10.152.0.209 nid001-hsn0\n")
    files["lldp.txt"].write_text(read(GOOD_LLDP))
    files["slurm.txt"].write_text("NodeName=nid001 State=IDLE Reason=")
    files["bw.txt"].write_text(read("ib_write_bw-roce-slingshot-duration-D5-gbits-client.txt"))
    (tmp_path / "inventory").write_text(INVENTORY)
    return tmp_path, files


def run_cli(capsys, tmp_path, *extra, rdma=False):
    base = ["--node-name", "nid001", "--nic", "hsn0", "--inventory", str(tmp_path / "inventory"),
            "--mac-rule", "slingshot-ama", "--fabric-hostname", "{node}-{nic}"]
    if rdma:
        sys_root, proc = make_node(tmp_path / "node")
        base += ["--sys-root", str(sys_root), "--proc-root", str(proc), "--no-ibv-devinfo"]
    else:
        base += ["--no-rdma"]
    rc = health.main(base + list(extra))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _lines(out: str, check: str) -> list[str]:
    return [line for line in out.splitlines() if f" {check}: " in line]


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_command_on_a_healthy_node(fake_node, capsys):
    tmp_path, _ = fake_node
    rc, out, err = run_cli(capsys, tmp_path)
    assert rc == 0, out + err
    for check in ("mac", "ip", "name_forward", "name_reverse", "lldp"):
        [line] = _lines(out, check)
        assert " PASS found " in line or " PASS nid001-hsn0" in line or " PASS 10." in line, line


@pytest.mark.proc  # through fabrictest code that starts its commands
@pytest.mark.parametrize("fault,check,shows", [
    ("cable", "lldp", "found x6102c0r45b0 port ros0p27, expected x6107c0r48b0 port ros0p42"),
    ("cable", "mac", "found 02:00:00:00:07:ea, expected 02:00:00:00:03:1b"),
    ("mac", "mac", "found 02:00:00:00:00:99, expected 02:00:00:00:07:ea"),
    ("ip", "ip", "found no address, expected 10.152.0.209 (inventory)"),
    ("ip", "name_forward", "expected hsn0's fabric address, and hsn0 has none"),
    ("dns", "name_forward", "nid001-hsn0 -> 10.152.0.250, expected 10.152.0.209"),
    ("dns", "name_reverse", "10.152.0.209 -> no name, expected nid001-hsn0"),
    ("dns-also", "name_forward", "-> 10.152.0.209, 10.152.0.250, expected 10.152.0.209 "
                                 "(also 10.152.0.250: not hsn0's)"),
    ("no-lldp", "lldp", "found no LLDP answer (lldptool exited 1"),
])
def test_command_names_each_fault(fake_node, capsys, fault, check, shows):
    tmp_path, files = fake_node
    if fault == "cable":
        files["lldp.txt"].write_text(read(BAD_LLDP))
    elif fault == "mac":
        doc = json.loads(files["ip.json"].read_text())
        doc[0]["address"] = "02:00:00:00:00:99"
        files["ip.json"].write_text(json.dumps(doc))
    elif fault == "ip":
        doc = json.loads(files["ip.json"].read_text())
        doc[0]["addr_info"] = []
        files["ip.json"].write_text(json.dumps(doc))
    elif fault == "dns":
        files["hosts"].write_text("10.152.0.250 nid001-hsn0\n")
    elif fault == "dns-also":  # the right record, and a stale one of the same name
        files["hosts"].write_text("10.152.0.209 nid001-hsn0\n10.152.0.250 nid001-hsn0\n")
    elif fault == "no-lldp":
        _sh(Path(files["ip.json"]).parent / "bin" / "lldptool",
            "echo 'Agent instance for device not found'; exit 1")
    rc, out, _ = run_cli(capsys, tmp_path)
    assert rc == 1
    [line] = _lines(out, check)
    assert line.startswith(f"HEALTH nid001 hsn0/- {check}: FAIL "), line
    assert shows in line, line


def test_an_inventory_with_two_nodes_on_one_switch_port_is_refused(fake_node, capsys):
    """nid002 listed on nid001's port: refused in one line before any check, exit 64 (a
    usage error, as an unreadable inventory)."""
    tmp_path, _ = fake_node
    (tmp_path / "inventory").write_text(INVENTORY.replace("x6102c0r45b0 ros0p27",
                                                          "x6107c0r48b0 ros0p42"))
    rc, out, err = run_cli(capsys, tmp_path)
    assert rc == 64 and out == "", out
    assert err.count("\n") == 1 and "inventory line 2: nid002 hsn0 on x6107c0r48b0 port " \
        "ros0p42, where line 1 cables nid001 hsn0" in err, err


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_lldptool_output_that_is_not_utf8_fails_lldp_and_drains(fake_node, capsys):
    """Bytes no text decoding reads (a Latin-1 system description): no traceback; lldp FAILs
    saying so, exit 1, and under --drain the node is drained with that reason."""
    tmp_path, files = fake_node
    files["lldp.txt"].write_bytes(read(GOOD_LLDP).encode() + b"System Description TLV\n"
                                  b"\tCr\xe9ay switch\n")
    rc, out, err = run_cli(capsys, tmp_path, "--drain")
    assert rc == 1, out + err
    assert "Traceback" not in err
    [line] = _lines(out, "lldp")
    assert line.startswith("HEALTH nid001 hsn0/- lldp: FAIL "), line
    assert "lldptool printed bytes that are not UTF-8 (0xe9 at byte " in line, line
    [said] = [x for x in out.splitlines() if " slurm: " in x]
    assert said.startswith("HEALTH nid001 slurm: drained: fabric-health: hsn0/- "), said
    assert "State=IDLE+DRAIN" in files["slurm.txt"].read_text()


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_a_stopped_command_is_ended_by_its_timeout(fake_node, capsys, monkeypatch):
    """lldptool that stops itself (SIGSTOP, as a hung agent leaves it): killed at the command
    timeout, the lldp check FAILs saying so, exit 1: neither a pass nor a hang."""
    tmp_path, files = fake_node
    monkeypatch.setattr(stage1_gather, "COMMAND_TIMEOUT_S", 0.5)
    _sh(Path(files["ip.json"]).parent / "bin" / "lldptool", "kill -STOP $$")
    rc, out, err = run_cli(capsys, tmp_path)
    assert rc == 1, out + err
    [line] = _lines(out, "lldp")
    assert line.startswith("HEALTH nid001 hsn0/- lldp: FAIL "), line
    assert "lldptool gave no answer within 0.5 s" in line, line


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_management_targets(fake_node, capsys):
    tmp_path, _ = fake_node
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, not listening: refused
    try:
        up, down = server.getsockname()[1], closed.getsockname()[1]
        rc, out, _ = run_cli(capsys, tmp_path, "--mgmt",
                             f"127.0.0.1:{up},127.0.0.1:{down}", "--mgmt-timeout", "2")
    finally:
        server.close()
        closed.close()
    [ok] = _lines(out, f"mgmt:127.0.0.1:{up}")
    [bad] = _lines(out, f"mgmt:127.0.0.1:{down}")
    assert rc == 1
    assert " PASS tcp connect to 127.0.0.1:" in ok
    assert bad.startswith(f"HEALTH nid001 -/- mgmt:127.0.0.1:{down}: FAIL tcp connect failed")


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_rdma_loopback_with_ib_write_bw(fake_node, capsys, monkeypatch):
    tmp_path, files = fake_node
    monkeypatch.setattr(stage1_gather, "SERVER_START_S", 0.05)
    rc, out, err = run_cli(capsys, tmp_path, "--loopback", "0.9", rdma=True)
    [line] = _lines(out, "loopback")
    assert " PASS found 9" in line and "expected >= 90 Gb/s (0.9 x 100 Gb/s; ib_write_bw " \
        "loopback on mlx5_0/1)" in line, line
    rc, out, err = run_cli(capsys, tmp_path, "--loopback", "0.9", "--port-rate", "200",
                           rdma=True)
    [line] = _lines(out, "loopback")
    assert " FAIL found 9" in line and "expected >= 180 Gb/s" in line, line
    files["bw.txt"].write_text(read("ib_write_bw-roce-qp8-gbits-truncated.txt"))
    rc, out, err = run_cli(capsys, tmp_path, "--loopback", "0.9", rdma=True)
    [line] = _lines(out, "loopback")
    assert " FAIL found no rate (" in line, line


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_drain_and_resume_by_the_nhc_convention(fake_node, capsys):
    tmp_path, files = fake_node
    files["hosts"].write_text("10.152.0.250 nid001-hsn0\n")
    rc, out, _ = run_cli(capsys, tmp_path, "--drain")
    assert rc == 1
    [said] = [line for line in out.splitlines() if " slurm: " in line]
    assert said.startswith("HEALTH nid001 slurm: drained: fabric-health: hsn0/- name_forward: "
                           "nid001-hsn0 -> 10.152.0.250, expected 10.152.0.209 (+1 more)")
    assert "State=IDLE+DRAIN" in files["slurm.txt"].read_text()
    # still failing: left as it is (no second update)
    run_cli(capsys, tmp_path, "--drain")
    assert files["scontrol.log"].read_text().count("update") == 1
    # fixed: resumed
    files["hosts"].write_text("10.152.0.209 nid001-hsn0\n")
    rc, out, _ = run_cli(capsys, tmp_path, "--drain")
    assert rc == 0 and "slurm: resumed (was: fabric-health: hsn0/- name_forward" in out
    assert "DRAIN" not in files["slurm.txt"].read_text()
    # an administrator's drain is never lifted, and never overwritten
    files["slurm.txt"].write_text("NodeName=nid001 State=IDLE+DRAIN Reason=bad DIMM "
                                  "[admin@2026-11-26T09:00:00]")
    rc, out, _ = run_cli(capsys, tmp_path, "--drain")
    assert rc == 0 and "slurm: unchanged: IDLE+DRAIN" in out
    files["hosts"].write_text("")
    rc, out, _ = run_cli(capsys, tmp_path, "--drain")
    assert "slurm: left drained: bad DIMM" in out
    assert files["scontrol.log"].read_text().count("update") == 2


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_drain_without_scontrol_fails_saying_so(fake_node, capsys):
    tmp_path, _ = fake_node
    (tmp_path / "bin" / "scontrol").unlink()
    rc, out, _ = run_cli(capsys, tmp_path, "--drain")
    assert rc == 1 and "HEALTH nid001 slurm: unchanged: scontrol not found" in out


# ----------------------------------------------------------------- the LBNL NHC check file
NHC = Path(__file__).resolve().parents[2] / "scripts" / "nhc" / "fabric_health.nhc"


@pytest.mark.parametrize("behaviour,said", [
    ("exit 0", ""),
    ('echo "HEALTH nid001 hsn0/- lldp: FAIL found sw2 port p1, expected sw1 port p3"; '
     'echo "HEALTH summary: 8 checks, 1 failed"; exit 1',
     "DIE 1 fabric-health: hsn0/- lldp: found sw2 port p1, expected sw1 port p3"),
    ('echo "fabric-health: error: --inventory /x: No such file or directory" >&2; exit 64',
     "DIE 1 fabric-health: exit 64: fabric-health: error: --inventory /x: No such file"),
    ("sleep 20", "DIE 1 fabric-health: no answer within 1 s"),
])
def test_nhc_check_file(tmp_path, behaviour, said):
    """The check NHC runs: no word on a pass, NHC's `die` with the first failure otherwise
    (NHC itself is not in Debian: its `die` is a stand-in here)."""
    fake = tmp_path / "fabric-health"
    fake.write_text(f"#!/bin/sh\n{behaviour}\n")
    fake.chmod(0o755)
    script = (f'die() {{ echo "DIE $1 $2"; }}; HOSTNAME_S=nid001; FABRIC_HEALTH={fake}; '
              f'FABRIC_HEALTH_TIMEOUT=1; source {NHC}; check_fabric_health --nic hsn0')
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
    assert proc.stdout.strip().startswith(said) if said else proc.stdout.strip() == ""
    assert proc.returncode == (1 if said else 0)

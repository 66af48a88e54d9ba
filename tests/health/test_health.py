"""NIC pre-flight checks on recorded ibv_devinfo outputs, fake sysfs trees and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fabrictest.health import cli as health
from fabrictest.health.checks import (
    HealthExpectations,
    evaluate_arp_thresholds,
    evaluate_netdev,
    evaluate_port,
    gc_thresh_requirements,
    unreachable_pairs,
)
from fabrictest.parsers import ParseError
from fabrictest.parsers.health import LINE_RE, SUMMARY_RE, parse_health
from fabrictest.parsers.ibv_devinfo import parse_ibv_devinfo

REAL = Path(__file__).resolve().parents[1] / "data" / "real-outputs"


def failed(results):
    """The checks that did not pass, in the order they ran."""
    return [r for r in results if not r.ok]


def ports(name: str):
    return [p for h in parse_ibv_devinfo((REAL / name).read_text()) for p in h.ports]


ROCE = HealthExpectations(link_layer="Ethernet", min_mtu=1024, min_rate_gbps=10)


def test_healthy_roce_recording_passes():
    (port,) = ports("ibv_devinfo-v-roce-cx4lx-mofed4-spaces.txt")
    assert failed(evaluate_port(port, ROCE, node="n1")) == []
    results = evaluate_port(port, ROCE, node="n1")
    assert [r.check for r in results] == [
        "port_state",
        "phys_state",
        "link_layer",
        "active_mtu",
        "rate",
        "rocev2_gid",
    ]
    assert all(r.ok for r in results)
    assert results[-1].detail.startswith(
        "index 1 fe80:0000:0000:0000:0ac0:ebff:fe3b:353c (type inferred"
    )
    assert results[0].line() == "HEALTH n1 mlx5_3/1 port_state: PASS PORT_ACTIVE"


def test_roce_recording_below_expectations():
    (port,) = ports("ibv_devinfo-v-roce-cx4lx-mofed4-spaces.txt")
    problems = failed(
        evaluate_port(
            port, HealthExpectations(link_layer="InfiniBand", min_mtu=4096, min_rate_gbps=100)
        )
    )
    assert {p.check for p in problems} == {"link_layer", "active_mtu", "rate"}
    by = {p.check: p.detail for p in problems}
    assert by["active_mtu"] == "1024 < 4096"
    assert by["rate"] == "10 Gb/s (1X 10) < 100 Gb/s"
    assert by["link_layer"] == "Ethernet (expected InfiniBand)"
    assert all((p.device, p.port) == ("mlx5_3", "1") for p in problems)


def test_polling_recording_fails():
    (port,) = ports("ibv_devinfo-v-ib-cx3-mlx4-port2-down-polling.txt")
    problems = failed(
        evaluate_port(port, HealthExpectations(link_layer="IB", min_mtu=4096, min_rate_gbps=100))
    )
    by = {p.check: p.detail for p in problems}
    assert by["port_state"] == "PORT_DOWN"
    assert by["phys_state"] == "POLLING"
    assert by["rate"] == "10 Gb/s (4X 2.5) < 100 Gb/s"
    assert "link_layer" not in by and "active_mtu" not in by
    assert "rocev2_gid" not in {
        r.check for r in evaluate_port(port, HealthExpectations())
    }  # IB port


def test_port_down_recording_fails_only_on_the_down_ports():
    all_ports = ports("ibv_devinfo-ib-cx3-mlx4-port2-down.txt")
    expect = HealthExpectations(link_layer="InfiniBand", min_mtu=4096)
    state = {
        (p.device, p.port): [x.check for x in failed(evaluate_port(p, expect))] for p in all_ports
    }
    assert state[("mlx4_1", 2)][0] == "port_state" and state[("mlx4_0", 2)][0] == "port_state"
    assert "port_state" not in state[("mlx4_1", 1)] and "port_state" not in state[("mlx4_0", 1)]
    # plain ibv_devinfo shows no physical state: not verifiable, so not passed
    assert all("phys_state" in checks for checks in state.values())


def test_plain_roce_output_cannot_show_a_rocev2_gid():
    port = ports("ibv_devinfo-roce-cx3-mlx4-2port.txt")[0]
    by = {p.check: p.detail for p in failed(evaluate_port(port, HealthExpectations(min_mtu=1024)))}
    assert by["rocev2_gid"].startswith("no GID in this output")
    no_v2 = HealthExpectations(require_rocev2_gid=False)
    assert failed(
        evaluate_port(port, HealthExpectations(require_rocev2_gid=False, min_mtu=1024))
    ) == [p for p in failed(evaluate_port(port, no_v2)) if p.check == "phys_state"]


def test_netdev():
    jumbo = HealthExpectations(netdev_mtu=9000)
    assert failed(evaluate_netdev("ens1f0", "UP", 9000, jumbo)) == []
    assert [p.check for p in failed(evaluate_netdev("ens1f0", "DOWN", 1500, jumbo))] == [
        "netdev_state",
        "netdev_mtu",
    ]
    assert failed(evaluate_netdev("ens1f0", "up", 1500, HealthExpectations())) == []
    assert (
        failed(evaluate_netdev(None, None, None, HealthExpectations()))[0].detail
        == "no netdev found for this port"
    )


def test_arp_thresholds():
    linux_defaults = {"gc_thresh1": 128, "gc_thresh2": 512, "gc_thresh3": 1024}
    assert failed(evaluate_arp_thresholds(linux_defaults, nodes=10)) == []
    assert gc_thresh_requirements(1000, 5) == (25000, 37500, 75000)  # HPE CSM guide's example
    big = failed(evaluate_arp_thresholds(linux_defaults, nodes=1000, nics_per_node=5))
    assert [p.check for p in big] == ["gc_thresh1", "gc_thresh2", "gc_thresh3"]
    assert big[0].detail == "128 < 25000 (nodes=1000, nics=5)"
    full_names = {
        f"net.ipv4.neigh.default.gc_thresh{i}": v for i, v in ((1, 25000), (2, 37500), (3, 75000))
    }
    assert failed(evaluate_arp_thresholds(full_names, nodes=1000, nics_per_node=5)) == []
    disordered = failed(
        evaluate_arp_thresholds(
            {"gc_thresh1": 4096, "gc_thresh2": 2048, "gc_thresh3": 8192}, nodes=2
        )
    )
    assert [p.check for p in disordered] == ["gc_thresh_order"]
    unreadable = failed(evaluate_arp_thresholds({"gc_thresh1": None}, nodes=2))
    assert [p.check for p in unreadable] == GC3
    assert HealthExpectations.for_cluster(100, 2).min_gc_thresh == (400, 600, 1200)
    with pytest.raises(ValueError):
        gc_thresh_requirements(0)


GC3 = ["gc_thresh1", "gc_thresh2", "gc_thresh3"]


def test_unreachable_pairs():
    nested = {
        "a": {"b": True, "c": False},
        "b": {"a": True, "c": True},
        "c": {"a": True, "b": False},
    }
    assert unreachable_pairs(nested) == [("a", "c"), ("c", "b")]
    flat = {("a", "b"): True, ("b", "a"): False, ("a", "a"): False}
    assert unreachable_pairs(flat) == [("b", "a")]
    assert unreachable_pairs({("a", "b"): True}, nodes=["a", "b", "c"]) == [
        ("a", "c"),
        ("b", "a"),
        ("b", "c"),
        ("c", "a"),
        ("c", "b"),
    ]
    assert unreachable_pairs({}) == []


# --------------------------------------------------------------------------- CLI


def make_node(
    tmp_path: Path,
    *,
    state="4: ACTIVE",
    phys="5: LinkUp",
    rate="100 Gb/sec (4X EDR)",
    mtu=9000,
    operstate="up",
    v2=True,
    gc=(128, 512, 1024),
) -> tuple[Path, Path]:
    sys_root = tmp_path / "sys"
    pdir = sys_root / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs"):
        (pdir / sub).mkdir(parents=True)
    for name, value in (
        ("state", state),
        ("phys_state", phys),
        ("link_layer", "Ethernet"),
        ("rate", rate),
    ):
        (pdir / name).write_text(value + "\n")
    gids = [("fe80:0000:0000:0000:b226:28ff:fe3a:22c6", "IB/RoCE v1")]
    if v2:
        gids.append(("fe80:0000:0000:0000:b226:28ff:fe3a:22c6", "RoCE v2"))
    for i, (gid, kind) in enumerate(gids):
        (pdir / "gids" / str(i)).write_text(gid + "\n")
        (pdir / "gid_attrs" / "types" / str(i)).write_text(kind + "\n")
        (pdir / "gid_attrs" / "ndevs" / str(i)).write_text("ens1f0\n")
    net = sys_root / "class" / "net" / "ens1f0"
    net.mkdir(parents=True)
    (net / "mtu").write_text(f"{mtu}\n")
    (net / "operstate").write_text(f"{operstate}\n")
    proc = tmp_path / "proc"
    neigh = proc / "sys" / "net" / "ipv4" / "neigh" / "default"
    neigh.mkdir(parents=True)
    for i, value in enumerate(gc, 1):
        (neigh / f"gc_thresh{i}").write_text(f"{value}\n")
    return sys_root, proc


def cli(capsys, sys_root, proc, *extra):
    argv = [
        "--sys-root",
        str(sys_root),
        "--proc-root",
        str(proc),
        "--no-ibv-devinfo",
        "--node-name",
        "n01",
        *extra,
    ]
    rc = health.main(argv)
    return rc, capsys.readouterr().out


def test_cli_healthy_node(tmp_path, capsys):
    sys_root, proc = make_node(tmp_path)
    rc, out = cli(
        capsys,
        sys_root,
        proc,
        "--expect-mtu",
        "4096",
        "--expect-rate",
        "100",
        "--link-layer",
        "Ethernet",
        "--netdev-mtu",
        "9000",
        "--nodes",
        "16",
    )
    assert rc == 0, out
    lines = out.splitlines()
    assert all(LINE_RE.match(line) for line in lines[:-1])
    assert lines[-1] == f"HEALTH summary: {len(lines) - 1} checks, 0 failed"
    assert "HEALTH n01 mlx5_0/1 active_mtu: PASS 4096 >= 4096" in lines
    assert "HEALTH n01 mlx5_0/1 rate: PASS 100 Gb/s (4X 25) >= 100 Gb/s" in lines
    assert (
        "HEALTH n01 mlx5_0/1 rocev2_gid: PASS index 1 fe80:0000:0000:0000:b226:28ff:fe3a:22c6"
        in lines
    )
    assert "HEALTH n01 mlx5_0/1 netdev_mtu: PASS ens1f0 mtu 9000 == 9000" in lines
    assert "HEALTH n01 -/- gc_thresh1: PASS 128 >= 16 (nodes=16, nics=1)" in lines
    report = parse_health(out)
    assert (report.checks, report.failed, report.failures()) == (len(lines) - 1, 0, [])


def test_cli_unhealthy_node(tmp_path, capsys):
    sys_root, proc = make_node(
        tmp_path,
        state="1: DOWN",
        phys="2: Polling",
        rate="40 Gb/sec (4X QDR)",
        mtu=1500,
        operstate="down",
        v2=False,
    )
    rc, out = cli(
        capsys,
        sys_root,
        proc,
        "--expect-mtu",
        "4096",
        "--expect-rate",
        "100",
        "--netdev-mtu",
        "9000",
        "--nodes",
        "2000",
        "--nics-per-node",
        "2",
    )
    assert rc == 1
    failed = {r.check for r in parse_health(out).failures()}
    assert failed == {
        "port_state",
        "phys_state",
        "active_mtu",
        "rate",
        "rocev2_gid",
        "netdev_state",
        "netdev_mtu",
        "gc_thresh1",
        "gc_thresh2",
        "gc_thresh3",
    }
    assert "HEALTH n01 mlx5_0/1 active_mtu: FAIL 1024 < 4096" in out
    assert SUMMARY_RE.match(out.splitlines()[-1])


def test_cli_filters_and_json(tmp_path, capsys):
    sys_root, proc = make_node(tmp_path)
    rc, out = cli(capsys, sys_root, proc, "--link-layer", "InfiniBand")
    assert rc == 1 and "HEALTH n01 -/- rdma_port: FAIL no port matches link layer InfiniBand" in out
    rc, out = cli(capsys, sys_root, proc, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["node"] == "n01" and doc["failed"] == 0
    assert doc["checks"] == len(doc["results"]) and doc["results"][0]["status"] == "PASS"


def test_cli_without_rdma_device(tmp_path, capsys):
    rc, out = cli(capsys, tmp_path / "nosys", tmp_path / "noproc")
    assert rc == health.EXIT_NO_DEVICE == 2
    assert out.startswith("HEALTH n01 no RDMA device: ") and out.count("\n") == 1
    assert parse_health(out).no_device == {"n01": out.strip().split(": ", 1)[1]}
    rc, out = cli(capsys, tmp_path / "nosys", tmp_path / "noproc", "--json")
    assert rc == 2 and json.loads(out)["no_device"] is True


def test_cli_usage_error_is_not_the_no_device_code(capsys):
    with pytest.raises(SystemExit) as exc:
        health.main(["--expect-mtu", "big"])
    assert exc.value.code == health.EXIT_USAGE != health.EXIT_NO_DEVICE
    assert health.main(["--nodes", "0", "--sys-root", "/nonexistent"]) == health.EXIT_USAGE


def test_parse_health_matrix_and_errors():
    text = (
        "HEALTH a -/- ping:b: PASS 2/2 replies\nHEALTH a -/- ping:c: FAIL 0/2 replies\n"
        "HEALTH summary: 2 checks, 1 failed\n"
        "HEALTH b -/- ping:a: PASS 2/2 replies\nHEALTH summary: 1 checks, 0 failed\n"
    )
    report = parse_health(text)
    assert report.ping_matrix() == {("a", "b"): True, ("a", "c"): False, ("b", "a"): True}
    assert (report.checks, report.failed, report.nodes()) == (3, 1, ["a", "b"])
    assert unreachable_pairs(report.ping_matrix(), nodes=["a", "b", "c"]) == [
        ("a", "c"),
        ("b", "c"),
        ("c", "a"),
        ("c", "b"),
    ]
    with pytest.raises(ParseError):
        parse_health("nothing here\n")


def test_cli_ping_checks(tmp_path, capsys, monkeypatch):
    sys_root, proc = make_node(tmp_path)
    monkeypatch.setattr(
        health,
        "ping_peer",
        lambda peer: (peer != "n03", "2/2 replies" if peer != "n03" else "0/2 replies"),
    )
    rc, out = cli(capsys, sys_root, proc, "--ping", "n02, n03")
    assert rc == 1
    assert "HEALTH n01 -/- ping:n02: PASS 2/2 replies" in out
    assert "HEALTH n01 -/- ping:n03: FAIL 0/2 replies" in out
    assert parse_health(out).ping_matrix() == {("n01", "n02"): True, ("n01", "n03"): False}


# --------------------------------------------------------------------------- installed command


@pytest.mark.parametrize(
    "command", [["fabric-health"], [sys.executable, "-m", "fabrictest.health"]]
)
def test_installed_command_exit_codes(tmp_path, command):
    """The console script (pyproject's entry point) and `python -m` run the same CLI."""
    if command[0] == "fabric-health":
        command = [str(Path(sys.executable).parent / "fabric-health")]
    none = [*command, "--sys-root", str(tmp_path), "--proc-root", str(tmp_path)]
    proc = subprocess.run(
        [*none, "--no-ibv-devinfo", "--node-name", "n01"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout.startswith("HEALTH n01 no RDMA device: ") and proc.stdout.count("\n") == 1
    sys_root, proc_root = make_node(tmp_path)
    proc = subprocess.run(
        [
            *command,
            "--sys-root",
            str(sys_root),
            "--proc-root",
            str(proc_root),
            "--no-ibv-devinfo",
            "--node-name",
            "n01",
            "--expect-rate",
            "9999",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert any(line.startswith("HEALTH n01 mlx5_0/1 rate: FAIL") and "9999 Gb/s" in line
               for line in proc.stdout.splitlines()), proc.stdout
    proc = subprocess.run(
        [*command, "--expect-mtu", "big"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 64 and proc.stdout == ""
    assert "fabric-health: error: argument --expect-mtu" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_entry_point_of_older_installs_still_runs(tmp_path, capsys):
    from fabrictest import health as package

    rc = package.main(
        [
            "--sys-root",
            str(tmp_path),
            "--proc-root",
            str(tmp_path),
            "--no-ibv-devinfo",
            "--node-name",
            "n01",
        ]
    )
    assert rc == 2 and capsys.readouterr().out.startswith("HEALTH n01 no RDMA device: ")


@pytest.mark.parametrize("name", ["nid001 State=RESUME", "n01;reboot", "-n01", "n01\n", "a..b"])
def test_a_node_name_that_is_no_host_name_is_refused_before_anything_runs(capsys, name):
    """issue 40: the name goes into the health line and to scontrol (--drain)."""
    assert health.main([f"--node-name={name}", "--sys-root", "/nonexistent"]) == health.EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == "" and "is not a host name" in captured.err
    assert captured.err.count("\n") == 1


def test_host_names_as_sites_write_them_pass_the_node_name_rule():
    for name in ("nid001", "x1000c0s0b0n0", "node-01.cluster", "gpu_n01"):
        assert health._HOST_NAME.fullmatch(name), name

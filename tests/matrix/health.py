"""``fabric-health``: the port checks on recorded ``ibv_devinfo`` outputs (what the command
evaluates on a node), the reading of ``ibv_devinfo`` (its parser plugin), and ``fabric-health
counters --diff`` on the counter faults' snapshot directories, in this process."""

from __future__ import annotations

import tempfile
from pathlib import Path

from parsers.test_variants import IbvDevinfo
from recordings import read

from fabrictest.health.checks import HealthExpectations, evaluate_port
from fabrictest.health.cli import main
from fabrictest.parsers.ibv_devinfo import parse_ibv_devinfo

from . import counter_faults
from .cell import Cell, cited, failed, na, passed
from .inproc import call

ROCE = "ibv_devinfo-v-roce-cx4lx-mofed4-spaces.txt"  # one RoCE port, 10 Gb/s (1X 10)
DOWN = "ibv_devinfo-ib-cx3-mlx4-port2-down.txt"  # two HCAs, port 2 of each down
ETH = dict(link_layer="Ethernet", min_mtu=1024)


def _ports(name: str, expect: HealthExpectations) -> Cell:
    results = [r for hca in parse_ibv_devinfo(read(name)) for p in hca.ports
               for r in evaluate_port(p, expect, node="n01")]
    bad = sorted((r for r in results if not r.ok), key=lambda r: r.check != "port_state")
    if not bad:
        return passed(f"{len(results)} checks: " + "; ".join(r.line() for r in results[:2]))
    first = bad[0]
    return failed("; ".join(r.line() for r in bad[:2]), f"{first.device}/{first.port}")


def _diff(fault: str) -> Cell:
    with tempfile.TemporaryDirectory(prefix="fault-matrix-") as tmp:
        for phase, snaps in counter_faults.snapshots(fault).items():
            d = Path(tmp) / phase
            d.mkdir()
            for node, snap in snaps.items():
                (d / f"{node}.json").write_text(snap.to_json())
        rc, out, err = call(main, "counters", "--diff", Path(tmp) / "before", Path(tmp) / "after")
    said = [x for x in out.splitlines() if x.startswith(("FAIL", "UNREAD", "UNKNOWN"))]
    if rc == 0:
        return passed(out.splitlines()[-1] if out.strip() else err)
    return failed(f"exit {rc}: " + "; ".join(said or [err]), counter_faults.FAULTY)


def _reading(text: str, ctx) -> Cell:
    got = IbvDevinfo().read(text, ctx)
    return failed(got.why) if hasattr(got, "why") else passed("read whole")


def _foreign() -> Cell:
    """Snapshots before the test of node01 and node03, after it of node01 and node04 (a
    directory of another job)."""
    with tempfile.TemporaryDirectory(prefix="fault-matrix-") as tmp:
        snaps = counter_faults.snapshots("healthy")
        for phase, nodes in (("before", ("node01", "node03")), ("after", ("node01", "node04"))):
            d = Path(tmp) / phase
            d.mkdir()
            for node in nodes:
                snap = snaps[phase]["node03" if node == "node04" else node]
                snap = type(snap)(node, snap.counters, [], snap.taken)
                (d / f"{node}.json").write_text(snap.to_json())
        rc, out, err = call(main, "counters", "--diff", Path(tmp) / "before", Path(tmp) / "after")
    lines = [x for x in out.splitlines() if "node03" in x or "node04" in x]
    if rc == 0:
        return passed(out.splitlines()[-1] if out.strip() else err)
    return failed(f"exit {rc}: " + "; ".join(lines or [err]), "node03")


def cells() -> dict[str, Cell]:
    whole = read(ROCE)
    ctx = IbvDevinfo().context(whole)
    return {
        "healthy": _ports(ROCE, HealthExpectations(**ETH, min_rate_gbps=10)),
        "link_down": _ports(DOWN, HealthExpectations(link_layer="InfiniBand", min_mtu=4096)),
        "bw_0_5": _ports(ROCE, HealthExpectations(**ETH, min_rate_gbps=20)),
        "bw_0_85": na("a port's rate is a step its link negotiates (4X HDR 200, 4X EDR 100, "
                      "2X HDR 100 Gb/s ...): 0.85x of a rate is no rate a port reports; a "
                      "slower step is the 0.5x cell"),
        "flap": _diff("flap"),
        "error_burst": _diff("error_burst"),
        "saturated": _diff("saturated"),
        "nonfinite": na("ibv_devinfo prints states, widths and speeds, no measured figure; "
                        "the rate is computed from width and speed"),
        "truncated": _reading(whole[: len(whole) // 2], ctx),
        "doubled": _reading(whole + whole, ctx),
        "other_benchmark": _reading(read("osu_bw-7.4-ompi4.1-local.txt"), ctx),
        "hung_tool": cited("FAIL", "an lldptool that stops itself (SIGSTOP): killed at the "
                           "command timeout, 'lldp: FAIL found no LLDP answer (lldptool gave "
                           "no answer within 0.5 s)', exit 1",
                           "tests/health/test_stage1.py::"
                           "test_a_stopped_command_is_ended_by_its_timeout"),
        "missing_tool": cited("FAIL", "a node without an RDMA device (no ibv_devinfo, no "
                              "sysfs device): 'HEALTH n01 no RDMA device', exit 2, never a pass",
                              "tests/health/test_health.py::test_cli_without_rdma_device"),
        "empty_selection": cited("FAIL", "--link-layer InfiniBand on a RoCE node: 'HEALTH n01 "
                                 "-/- rdma_port: FAIL no port matches link layer InfiniBand'",
                                 "tests/health/test_health.py::test_cli_filters_and_json"),
        "lost_records": na("fabric-health keeps no records: its lines are its output, read "
                           "whole by NicHealthTest (that row's cells)"),
        "stale_foreign": _foreign(),
    }

"""What fabric-health reads when a tool is there but its view is lost (issue 40): a stand-in
``ibv_devinfo`` / ``ip`` on PATH that hangs, exits non-zero, prints bytes that are not UTF-8 or
prints what is no ``ibv_devinfo -v``; sysfs stands in and the source says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabrictest.health import cli as health
from fabrictest.health import gather
from fabrictest.parsers.health import parse_health

from .test_health import make_node

pytestmark = pytest.mark.proc  # the stand-in tools are processes

STAND_INS = {
    "hangs": ("exec /bin/sleep 30", "sysfs (ibv_devinfo gave no answer within 0.5 s)"),
    "fails": ("echo 'Failed to get IB devices list: Function not implemented' >&2; exit 255",
              "sysfs (ibv_devinfo exited 255: Failed to get IB devices list: Function not "
              "implemented)"),
    "not UTF-8": ("printf 'hca_id:\\tmlx5_0\\n\\351\\n'",
                  "sysfs (ibv_devinfo printed bytes that are not UTF-8 (0xe9 at byte 15))"),
    "prints nothing": ("exit 0", "sysfs (ibv_devinfo -v printed nothing)"),
}


def _stand_in(tmp_path: Path, monkeypatch, name: str, body: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
    (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(gather, "TOOL_TIMEOUT_S", 0.5)


@pytest.mark.parametrize("case", list(STAND_INS))
def test_a_lost_ibv_devinfo_view_is_named_in_the_source(tmp_path, monkeypatch, case):
    body, source = STAND_INS[case]
    _stand_in(tmp_path, monkeypatch, "ibv_devinfo", body)
    sys_root, _proc = make_node(tmp_path)
    hcas, got = gather.gather_ports(sys_root)
    assert got == source
    assert [p.device for h in hcas for p in h.ports] == ["mlx5_0"]  # sysfs stood in


def test_output_that_is_no_ibv_devinfo_is_named(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, "ibv_devinfo", "echo 'osu_bw: 8 bytes 1.2 MB/s'")
    hcas, got = gather.gather_ports(make_node(tmp_path)[0])
    assert got.startswith("sysfs (ibv_devinfo -v output not understood: "), got
    assert [h.name for h in hcas] == ["mlx5_0"]


def test_a_missing_ibv_devinfo_stays_plain_sysfs(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, "other-tool", "exit 0")
    assert gather.gather_ports(make_node(tmp_path)[0])[1] == "sysfs"


def test_the_health_lines_say_why_the_ports_came_from_sysfs(tmp_path, monkeypatch, capsys):
    _stand_in(tmp_path, monkeypatch, "ibv_devinfo", STAND_INS["hangs"][0])
    sys_root, proc = make_node(tmp_path)
    rc = health.main(["--sys-root", str(sys_root), "--proc-root", str(proc),
                      "--node-name", "n01"])
    out = capsys.readouterr().out
    assert rc == 0, out
    lines = out.splitlines()
    assert lines[0] == "HEALTH n01 source: sysfs (ibv_devinfo gave no answer within 0.5 s)"
    report = parse_health(out)  # the source line is no check: the summary still counts
    assert (report.checks, report.failed) == (len(lines) - 2, 0)


def test_the_json_source_says_why(tmp_path, monkeypatch, capsys):
    _stand_in(tmp_path, monkeypatch, "ibv_devinfo", STAND_INS["fails"][0])
    sys_root, proc = make_node(tmp_path)
    health.main(["--sys-root", str(sys_root), "--proc-root", str(proc), "--node-name", "n01",
                 "--json"])
    assert json.loads(capsys.readouterr().out)["source"] == STAND_INS["fails"][1]


def test_no_device_says_the_tool_failed_too(tmp_path, monkeypatch, capsys):
    _stand_in(tmp_path, monkeypatch, "ibv_devinfo", STAND_INS["fails"][0])
    (tmp_path / "sys").mkdir()
    rc = health.main(["--sys-root", str(tmp_path / "sys"), "--proc-root", str(tmp_path),
                      "--node-name", "n01"])
    assert rc == health.EXIT_NO_DEVICE
    assert capsys.readouterr().out.strip().endswith(
        "; ports from " + STAND_INS["fails"][1])


def test_a_failing_ip_link_is_named_and_sysfs_stands_in(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, "ip", "echo 'Cannot open netlink socket' >&2; exit 2")
    netdevs, lost = gather.gather_netdevs(Path("/sys"))
    assert lost == "ip exited 2: Cannot open netlink socket"
    assert "lo" in netdevs  # this host's sysfs


def test_a_healthy_ip_link_loses_nothing(tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, "ip",
              """echo '[{"ifname": "hsn0", "operstate": "UP", "mtu": 9000}]'""")
    assert gather.gather_netdevs(Path("/sys")) == ({"hsn0": ("UP", 9000)}, None)

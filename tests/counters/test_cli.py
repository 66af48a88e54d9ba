"""`fabric-health counters`: a node's counters from a sysfs tree recorded on this machine (a veth
in a network namespace), the verdict on two snapshots, and the exit statuses."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from recordings import DATA

from fabrictest.counters.difference import difference
from fabrictest.counters.judge import judge
from fabrictest.counters.snapshot import Counter, Snapshot, parse_snapshot
from fabrictest.counters.thresholds import Thresholds
from fabrictest.health.cli import main as health_main

VETH = DATA / "real-outputs-local" / "sysfs-veth-netns"


def _run(capsys, *argv) -> tuple[int, str, str]:
    try:
        rc = health_main(["counters", *argv])
    except SystemExit as exit_:  # argparse's usage errors
        rc = exit_.code
    out = capsys.readouterr()
    return rc, out.out, out.err


def _veth_args(root: Path, node: str = "node03"):
    return ["--sys-root", str(root), "--proc-root", str(root / "proc"), "--node-name", node,
            "--no-commands"]


def test_snapshot_of_recorded_veth(capsys):
    rc, out, _ = _run(capsys, *_veth_args(VETH))
    assert rc == 0
    assert "COUNTER node03 eth0 netdev carrier_changes 4" in out.splitlines()
    assert "COUNTER node03 tcp tcp RetransSegs 0" in out.splitlines()


def test_unreadable_counter_is_reported_not_zero(tmp_path, capsys):
    root = tmp_path / "sys"
    shutil.copytree(VETH, root)
    (root / "class/net/eth0/carrier_changes").unlink()
    (root / "class/net/eth0/statistics/rx_errors").write_text("garbage\n")
    rc, out, _ = _run(capsys, *_veth_args(root), "--json")
    assert rc == 3
    snap = parse_snapshot(out)
    values = {c.name: c.value for c in snap.counters}
    assert values["carrier_changes"] is None and values["rx_errors"] is None
    assert any("carrier_changes" in u for u in snap.unreadable)
    assert any("rx_errors: not a counter value 'garbage'" in u for u in snap.unreadable)


def _flap(root: Path, times: int, rx_errors: int = 0):
    cc = root / "class/net/eth0/carrier_changes"
    cc.write_text(f"{int(cc.read_text()) + 2 * times}\n")
    (root / "class/net/eth0/statistics/rx_errors").write_text(f"{rx_errors}\n")


def test_diff_of_directories_names_the_flap(tmp_path, capsys):
    root = tmp_path / "sys"
    shutil.copytree(VETH, root)
    for phase in ("before", "after"):
        if phase == "after":
            _flap(root, 2, rx_errors=7)
        assert _run(capsys, *_veth_args(root), "--out-dir", str(tmp_path / phase))[0] == 0
    rc, out, _ = _run(capsys, "--diff", str(tmp_path / "before"), str(tmp_path / "after"))
    assert rc == 1
    lines = out.splitlines()
    assert "CHANGE node03 eth0 carrier_changes: 4 -> 8 (+4)" in lines
    assert ("FAIL node03 eth0: link went down 2 times during the test "
            "(carrier_changes 4 -> 8)") in lines
    assert ("FAIL node03 eth0: rx_errors rose by 7 during the test (0 -> 7; threshold 0)"
            in lines)
    assert "FIGURE node03 RetransSegs 0" in lines
    # a threshold above the increase lets the errors pass; the flap still fails
    limits = tmp_path / "t.yaml"
    limits.write_text("$provenance: {note: test}\nerrors: {rx_errors: 10}\n")
    rc, out, _ = _run(capsys, "--diff", str(tmp_path / "before"), str(tmp_path / "after"),
                      "--thresholds", str(limits), "--json")
    doc = json.loads(out)
    assert rc == 1 and len(doc["failures"]) == 1 and "link went down 2 times" in doc["failures"][0]


def test_healthy_diff_passes_and_a_missing_node_is_unread(tmp_path, capsys):
    for phase in ("before", "after"):
        _run(capsys, *_veth_args(VETH, "node01"), "--out-dir", str(tmp_path / phase))
    _run(capsys, *_veth_args(VETH, "node02"), "--out-dir", str(tmp_path / "before"))
    rc, out, _ = _run(capsys, "--diff", str(tmp_path / "before"), str(tmp_path / "after"))
    assert rc == 3 and "UNKNOWN node02: no counters before and after the test" in out
    (tmp_path / "before" / "node02.json").unlink()
    assert _run(capsys, "--diff", str(tmp_path / "before"), str(tmp_path / "after"))[0] == 0


@pytest.mark.parametrize("argv", [
    ["--diff", "/nonexistent/a", "/nonexistent/b"],
    ["--thresholds", "x.yaml"],
    ["--diff", "a", "b", "--netdev", "eth0"],
    ["--bogus"],
])
def test_bad_input_is_one_line_and_64(argv, capsys):
    rc, out, err = _run(capsys, *argv)
    assert rc == 64 and len(err.strip().splitlines()) <= 2 and "Traceback" not in err


def test_not_a_snapshot_is_refused(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text('{"node": "n"}')
    rc, _, err = _run(capsys, "--diff", str(bad), str(bad))
    assert rc == 64 and "not a counters snapshot" in err


def test_thresholds_file_must_say_where_it_comes_from():
    with pytest.raises(ValueError, match="no \\$provenance"):
        Thresholds.from_dict({"errors": {"default": 0}})
    with pytest.raises(ValueError, match="not an error counter"):
        Thresholds.from_dict({"$provenance": {}, "errors": {"carrier_changes": 3}})
    with pytest.raises(ValueError, match="not a count"):
        Thresholds.from_dict({"$provenance": {}, "errors": {"symbol_error": -1}})


def test_link_down_counters_and_cxi_state():
    def diff(name, a, b, source="ib"):
        return difference(Snapshot("n", [Counter(source, "d", "1", name, a)]),
                          Snapshot("n", [Counter(source, "d", "1", name, b)]))
    v = judge([diff("link_downed", 3, 4), diff("link_up", 1, 0, "cxi"),
               diff("port_xmit_wait", 10, 110), diff("carrier_changes", 2, 3, "netdev")])
    assert v.failures == [
        "n d/1: link went down 1 time during the test (link_downed 3 -> 4)",
        "n d/1: link went down 1 time during the test (link_up 1 -> 0)",
        "n d/1: link went down 1 time during the test (carrier_changes 2 -> 3)",
    ]
    assert v.figures == {"n": {"port_xmit_wait": 100}}
    assert judge([diff("link_up", 1, 1, "cxi"), diff("carrier_changes", 2, 2)]).failures == []


def test_sysfs_of_another_namespace_is_unreadable(tmp_path, capsys):
    """A process that entered a node's namespace with ``nsenter --net`` sees the host's sysfs:
    its eth0 there is the host's, so nothing is read from it."""
    root = tmp_path / "sys"
    shutil.copytree(VETH, root)
    (root / "proc/net/dev").write_text(
        "Inter-|   Receive\n face |bytes\n    lo: 0 0\n  vcv-node03: 0 0\n")
    rc, out, _ = _run(capsys, *_veth_args(root), "--netdev", "eth0")
    assert rc == 3
    assert "COUNTER node03 eth0 netdev carrier_changes unreadable" in out
    assert "shows another network namespace's netdevs" in out


def test_every_systems_counters_file_loads():
    import yaml

    files = sorted((Path(__file__).resolve().parents[2] / "reference" / "counters").glob("*.yaml"))
    assert files, "no reference/counters/*.yaml"
    for path in files:
        Thresholds.from_dict(yaml.safe_load(path.read_text()))


# -- what the diff refuses, and what it says ------------------------------------------------
def _snapshots(tmp_path, capsys, node="node01"):
    for phase in ("before", "after"):
        assert _run(capsys, *_veth_args(VETH, node), "--out-dir", str(tmp_path / phase))[0] == 0
    return tmp_path / "before", tmp_path / "after"


def test_healthy_diff_says_what_it_compared(tmp_path, capsys):
    before, after = _snapshots(tmp_path, capsys)
    rc, out, _ = _run(capsys, "--diff", str(before), str(after))
    assert rc == 0 and out.splitlines()[-1] == "1 node, 7 counters compared: 0 failures, 0 unknown"


@pytest.mark.parametrize("other", ["/bin/ls", "/dev/null", "{d}/big.json", "{d}/dir"])
def test_a_file_that_is_no_snapshot_is_one_line(tmp_path, capsys, other):
    before, _ = _snapshots(tmp_path, capsys)
    (tmp_path / "big.json").write_bytes(b" " * (17 << 20))
    (tmp_path / "dir").mkdir()
    rc, out, err = _run(capsys, "--diff", str(before / "node01.json"),
                        other.format(d=tmp_path))
    assert rc == 64 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("fabric-health counters: error: ")


def test_two_files_for_one_node_are_refused(tmp_path, capsys):
    """A second file for node01 (a copy from an earlier run) could hide the flap of the other."""
    before, after = _snapshots(tmp_path, capsys)
    root = tmp_path / "sys"
    shutil.copytree(VETH, root)
    _flap(root, 1)
    assert _run(capsys, *_veth_args(root, "node01"), "--out-dir", str(tmp_path / "x"))[0] == 0
    (tmp_path / "x" / "node01.json").rename(after / "node01-again.json")
    rc, _, err = _run(capsys, "--diff", str(before), str(after))
    assert rc == 64
    assert "2 snapshots of node01 (node01-again.json, node01.json)" in err


def test_snapshots_that_read_nothing_are_unknown(tmp_path, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text('{"node": "n1", "format": "fabrictest-counters/1", "counters": [], '
                     '"unreadable": []}\n')
    rc, out, _ = _run(capsys, "--diff", str(empty), str(empty))
    assert rc == 3, out
    assert "UNKNOWN n1: its snapshot before the test holds no counter value" in out
    assert out.splitlines()[-1] == "1 node, 0 counters compared: 0 failures, 2 unknown"


def test_a_node_that_reads_nothing_exits_3(tmp_path, capsys):
    (tmp_path / "proc").mkdir()
    rc, _, _ = _run(capsys, "--sys-root", str(tmp_path), "--proc-root", str(tmp_path / "proc"),
                    "--node-name", "n1", "--no-commands", "--out-dir", str(tmp_path / "out"))
    assert rc == 3
    snap = parse_snapshot((tmp_path / "out" / "n1.json").read_text())
    assert snap.read_nothing and "nothing was read on n1" in snap.unreadable[-1]


def test_system_thresholds_follow_a_relocated_reference_directory(tmp_path, capsys, monkeypatch):
    """--system NAME reads counters/NAME.yaml where every reader looks: RFM_REFERENCE_PREFIX
    moved, the 7 rx_errors that fail against the repository's vcluster file pass here."""
    root = tmp_path / "sys"
    shutil.copytree(VETH, root)
    for phase in ("before", "after"):
        if phase == "after":
            (root / "class/net/eth0/statistics/rx_errors").write_text("7\n")
        _run(capsys, *_veth_args(root), "--out-dir", str(tmp_path / phase))
    argv = ["--diff", str(tmp_path / "before"), str(tmp_path / "after"), "--system", "vcluster"]
    assert _run(capsys, *argv)[0] == 1  # the repository's: default 0
    moved = tmp_path / "site-refs"
    (moved / "counters").mkdir(parents=True)
    (moved / "counters" / "vcluster.yaml").write_text(
        "$provenance: {note: moved}\nerrors: {rx_errors: 10}\n")
    monkeypatch.setenv("RFM_REFERENCE_PREFIX", str(moved))
    rc, out, _ = _run(capsys, *argv)
    assert rc == 0, out
    assert _run(capsys, *argv, "--reference-dir", str(tmp_path / "none"))[0] == 1


# -- the 64-bit extended counters preferred where perfquery -x has them ----------------------
def _ib_tree(root: Path, symbol_error: int = 65535):
    counters = root / "class/infiniband/mlx5_0/ports/1/counters"
    counters.mkdir(parents=True)
    for name, value in (("symbol_error", symbol_error), ("link_downed", 0),
                        ("port_xmit_wait", 4294967295), ("port_xmit_data", 7)):
        (counters / name).write_text(f"{value}\n")
    (root / "class/net").mkdir(parents=True)
    (root / "proc").mkdir()


def _stub_perfquery(tmp_path: Path, recording: str, monkeypatch) -> None:
    """A perfquery on PATH that prints a recorded `perfquery -x` (the node has no HCA here)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "perfquery"
    stub.write_text(f"#!/bin/sh\ncat {DATA / 'real-outputs' / recording}\n")
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def _gathered(root: Path) -> dict:
    from fabrictest.counters.gather import gather_counters

    snap = gather_counters("n1", root, root / "proc", netdevs=[], commands=True)
    return {c.name: (c.value, c.bits) for c in snap.counters if c.source == "ib"}


@pytest.mark.proc  # the command runs a stand-in tool (perfquery, scontrol)
def test_perfquery_x_64_bit_values_replace_the_saturated_sysfs_ones(tmp_path, monkeypatch):
    root = tmp_path / "sys"
    _ib_tree(root)
    _stub_perfquery(tmp_path, "perfquery-x-rhel75-capmask2-lid10.txt", monkeypatch)
    assert _gathered(root) == {"symbol_error": (0, 64), "link_downed": (0, 64),
                               "port_xmit_wait": (0, 64)}


@pytest.mark.proc  # the command runs a stand-in tool (perfquery, scontrol)
def test_without_the_additional_counters_the_sysfs_widths_stand(tmp_path, monkeypatch):
    root = tmp_path / "sys"
    _ib_tree(root)
    _stub_perfquery(tmp_path, "perfquery-x-capmask2-0-lid133.txt", monkeypatch)
    assert _gathered(root) == {"symbol_error": (65535, 16), "link_downed": (0, 8),
                               "port_xmit_wait": (4294967295, 32)}

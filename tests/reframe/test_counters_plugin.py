"""The base's counter verdict (reframe_tests/fabric_counters.py) on stage directories as a
job leaves them: healthy, a flap, and nodes whose counters could not be read (the test must
say so, not pass and not crash)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from fabric_counters import CounterChecks

from fabrictest.counters.snapshot import SNAPSHOT_DIR, Counter, Snapshot


def _fake(stage: Path, nodes: int, nodelist=()):
    fake = SimpleNamespace(
        counter_launch_nodes=nodes, stagedir=str(stage), job=SimpleNamespace(nodelist=list(nodelist)),
        current_system=SimpleNamespace(name="vcluster"), placed_hosts=lambda: [])
    for name in ("counter_verdict", "expected_counter_nodes", "snapshot_log_tail",
                 "counter_problems"):
        setattr(fake, name, getattr(CounterChecks, name).__get__(fake))
    return fake


def _write(stage: Path, phase: str, node: str, carrier: int | None, **extra):
    d = stage / SNAPSHOT_DIR / phase
    d.mkdir(parents=True, exist_ok=True)
    snap = Snapshot(node, [Counter("netdev", "eth0", "-", "carrier_changes", carrier),
                           Counter("tcp", "tcp", "-", "RetransSegs", extra.get("retrans", 0))],
                    extra.get("unreadable", []))
    (d / f"{node}.json").write_text(snap.to_json())


def test_healthy_nodes_pass_with_their_figures(tmp_path):
    for phase, retrans in (("before", 5), ("after", 9)):
        for node in ("node01", "node03"):
            _write(tmp_path, phase, node, 17, retrans=retrans)
    fake = _fake(tmp_path, 2, ["node01", "node03"])
    assert fake.counter_problems() == []
    assert fake.counter_verdict().figures == {"node01": {"RetransSegs": 4},
                                              "node03": {"RetransSegs": 4}}


def test_a_flap_fails_naming_node_and_count(tmp_path):
    for node, after in (("node01", 17), ("node03", 21)):
        _write(tmp_path, "before", node, 17)
        _write(tmp_path, "after", node, after)
    assert _fake(tmp_path, 2, ["node01", "node03"]).counter_problems() == [
        "node03 eth0: link went down 2 times during the test (carrier_changes 17 -> 21)"]


def test_a_node_without_counters_is_reported_not_passed(tmp_path):
    _write(tmp_path, "before", "node01", 17)
    _write(tmp_path, "after", "node01", 17)
    _write(tmp_path, "before", "node03", 17)
    (tmp_path / SNAPSHOT_DIR / "after.log").write_text(
        "srun: error: node03: task 1: Exited with exit code 127\n")
    problems = _fake(tmp_path, 2, ["node01", "node03"]).counter_problems()
    assert problems == ["counters not read: node03: no counters before and after the test"]


def test_unknown_node_list_counts_the_files_and_quotes_the_log(tmp_path):
    _write(tmp_path, "before", "node01", 17)
    _write(tmp_path, "after", "node01", 17)
    (tmp_path / SNAPSHOT_DIR / "before.log").write_text("fabric-health: command not found\n")
    (problem,) = _fake(tmp_path, 2).counter_problems()
    assert problem.startswith("counters not read: counters of 1 of 2 nodes")
    assert "fabric-health: command not found" in problem


def test_unreadable_counter_and_broken_file_are_said(tmp_path):
    _write(tmp_path, "before", "node01", None, unreadable=["netdev eth0 carrier_changes: EIO"])
    _write(tmp_path, "after", "node01", 17)
    (tmp_path / SNAPSHOT_DIR / "after" / "node02.json").write_text('{"node": "node02", "cou')
    _write(tmp_path, "before", "node02", 3)
    (problem,) = _fake(tmp_path, 2, ["node01", "node02"]).counter_problems()
    assert "node02.json after the test: counters snapshot: not JSON" in problem
    assert "node01 eth0 carrier_changes: unreadable before the test" in problem
    assert "node01 before the test: netdev eth0 carrier_changes: EIO" in problem
    assert "node02: no counters before and after the test" in problem


def test_no_snapshots_taken_means_no_verdict(tmp_path):
    assert _fake(tmp_path, 0).counter_problems() == []
    assert json.loads(json.dumps(_fake(tmp_path, 0).counter_verdict())) is None


def test_a_relocated_reference_directory_is_honoured(tmp_path, monkeypatch):
    """The counters' thresholds are found where the performance references are: a site that
    moves its references (RFM_REFERENCE_PREFIX) moves its counter thresholds with them. Before,
    the plugin read the repository's reference/ only, and every error counter failed at 0."""
    stage = tmp_path / "stage"
    for phase, errors in (("before", 10), ("after", 1210)):
        d = stage / SNAPSHOT_DIR / phase
        d.mkdir(parents=True)
        (d / "node01.json").write_text(Snapshot("node01", [
            Counter("ib", "mlx5_0", "1", "symbol_error", errors, 64),
            Counter("netdev", "eth0", "-", "carrier_changes", 4)]).to_json())
    monkeypatch.delenv("RFM_REFERENCE_PREFIX", raising=False)
    assert _fake(stage, 1, ["node01"]).counter_problems() == [
        "node01 mlx5_0/1: symbol_error rose by 1200 during the test (10 -> 1210; threshold 0)"]
    moved = tmp_path / "site-references"
    (moved / "counters").mkdir(parents=True)
    (moved / "counters" / "vcluster.yaml").write_text(
        "$provenance: {document: the site's cabling notes}\nerrors: {symbol_error: 2000}\n")
    monkeypatch.setenv("RFM_REFERENCE_PREFIX", str(moved))
    assert _fake(stage, 1, ["node01"]).counter_problems() == []
    # and the performance references' own lookup is the same one
    from fabric_references import reference_path

    assert reference_path("vcluster") == str(moved / "vcluster.yaml")


def test_two_snapshots_of_one_node_are_not_read(tmp_path):
    for phase in ("before", "after"):
        _write(tmp_path, phase, "node01", 17)
    (tmp_path / SNAPSHOT_DIR / "after" / "node01.json").rename(
        tmp_path / SNAPSHOT_DIR / "after" / "a.json")
    _write(tmp_path, "after", "node01", 21)
    (problem,) = _fake(tmp_path, 1, ["node01"]).counter_problems()
    assert "2 snapshots of node01 (a.json, node01.json) after the test" in problem
    assert "node01: no counters before and after the test" in problem

"""Acceptance on the real vcluster (Slurm over network namespaces on this machine).

One node's link degraded (50 of 200 mbit): the sweep names that node and only that node, both
directions, within its round budget. One direction of a node's link degraded (`vcluster
degrade NODE RATE --direction tx|rx`, from the vcluster branch): the sweep names that node with
that direction only. One node's link down: the sweep reports it unreachable, and finishes
(each run has a time limit) instead of hanging.

The module brings up its own 4-node cluster (its own state directory) under the machine's
vcluster lock and always takes it down again (tests/vcluster_session.py): when a cluster is
already up (someone else's) it skips rather than degrade links under another run; a cluster
that does not come up fails it.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vcluster_session import env_of, held_cluster, vcluster

pytestmark = [pytest.mark.vcluster, pytest.mark.slow]

BIN = Path(sys.executable).parent
NODES = 4
PAIR_TIMEOUT = 40


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    state = tmp_path_factory.mktemp("vc-sweep") / "state"
    with held_cluster(state, "--nodes", str(NODES), wait_s=540, up_timeout=400):
        yield state, env_of(state)


def sweep(state: Path, env: dict, tmp_path: Path, name: str, first: list[str] | None = None):
    """`salloc -N 4 fabric-sweep` on the cluster: (exit code, stdout, json, seconds).

    `first`: a command run inside the allocation before the sweep (a link taken down after
    the nodes were allocated, so that Slurm has not yet marked the node down).
    """
    out = tmp_path / f"{name}.json"
    argv = [
        str(BIN / "fabric-sweep"), "--launcher", "slurm", "--seed", "7", "--nmsg", "300",
        "--pair-timeout", str(PAIR_TIMEOUT), "--json", str(out), "-v",
    ]  # fmt: skip
    if first:
        argv = ["bash", "-c", f"{shlex.join(first)} && exec {shlex.join(argv)}"]
    cmd = [
        "salloc", "--partition=vc", f"--nodes={NODES}", "--exclusive", "--no-kill",
        "--time=15", "--job-name=fabric-sweep-acceptance", *argv,
    ]  # fmt: skip
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900,
                          cwd=tmp_path)
    secs = time.monotonic() - t0
    (tmp_path / f"{name}.log").write_text(proc.stdout + "\n--- stderr\n" + proc.stderr)
    assert out.exists(), f"no sweep JSON; salloc exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.returncode, proc.stdout, json.loads(out.read_text()), secs


def verdict_lines(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    return lines[lines.index("verdict:") + 1:]


def test_healthy_cluster_has_no_suspects(cluster, tmp_path):
    state, env = cluster
    rc, out, data, _s = sweep(state, env, tmp_path, "healthy")
    assert verdict_lines(out) == ["suspects: none"], out
    assert rc == 0
    assert data["rounds_used"] == 3  # 4 nodes screen every pair (schedule.EVERY_PAIR)
    assert all(p["status"] == "ok" for p in data["pairs"]), out
    assert len(data["pairs"]) == 3 * 2 * 2  # 3 rounds x 2 pairs x both directions


def test_degraded_link_names_that_node_only(cluster, tmp_path):
    state, env = cluster
    vcluster(state, "degrade", "node03", "50mbit")
    try:
        rc, out, data, _s = sweep(state, env, tmp_path, "degraded")
    finally:
        vcluster(state, "restore", "node03")
    lines = verdict_lines(out)
    assert len(lines) == 1 and lines[0].startswith("suspect: node03 send "), out
    assert ", receive " in lines[0]
    assert re.search(r"\((\d)/\1 pairs slow sending, (\d)/\2 slow receiving; confirmed with "
                     r"node0[124]", lines[0]), lines[0]
    assert rc == 1
    assert 3 <= data["rounds_used"] <= 4  # 3 screening rounds: every pair of 4 nodes
    assert [s["node"] for s in data["suspects"]] == ["node03"]


def _has_direction_option(state: Path) -> bool:
    proc = vcluster(state, "degrade", "--help", timeout=60, check=False)
    return "--direction" in proc.stdout + proc.stderr


@pytest.mark.parametrize("direction, named, fine", [("tx", "send", "receiving"),
                                                    ("rx", "receive", "sending")])
def test_one_direction_degraded_is_named_with_its_direction(cluster, tmp_path, direction,
                                                            named, fine):
    """`vcluster degrade node03 50mbit --direction tx` shapes only node03's sending side
    (rx: its receiving side): the sweep names node03 with that direction, and only it."""
    state, env = cluster
    if not _has_direction_option(state):
        pytest.skip("vcluster degrade has no --direction option yet: it comes with the "
                    "vcluster branch (this test is ready for it)")
    vcluster(state, "degrade", "node03", "50mbit", "--direction", direction)
    try:
        rc, out, data, _s = sweep(state, env, tmp_path, f"degraded-{direction}")
    finally:
        vcluster(state, "restore", "node03")
    lines = verdict_lines(out)
    gerund = "sending" if named == "send" else "receiving"
    assert len(lines) == 1 and lines[0].startswith(f"suspect: node03 {named} 0.0"), out
    assert re.search(rf"\((\d)/\1 pairs slow {gerund}, {fine} ok; confirmed with node0[124]",
                     lines[0]), lines[0]
    assert rc == 1
    assert data["rounds_used"] <= 4
    sides = {row["node"]: (row["send_state"], row["receive_state"])
             for row in data["nodes_table"]}
    assert sides["node03"] == (("slow", "ok") if named == "send" else ("ok", "slow"))
    assert all(v == ("ok", "ok") for k, v in sides.items() if k != "node03"), sides


def test_link_down_is_reported_unreachable_not_hung(cluster, tmp_path):
    state, env = cluster
    down = [str(BIN / "vcluster"), "--state-dir", str(state), "link-down", "node02"]
    try:
        rc, out, data, secs = sweep(state, env, tmp_path, "down", first=down)
    finally:
        vcluster(state, "restore", "node02")
    lines = verdict_lines(out)
    assert len(lines) == 1 and lines[0].startswith("suspect: node02 unreachable ("), out
    assert rc == 1
    assert data["rounds_used"] <= 4
    # each round: both directions of a pair, one after the other, each bounded by the run
    # time limit (plus the kill grace and startup)
    assert secs < data["rounds_used"] * 2 * (PAIR_TIMEOUT + 15) + 60


def test_reframe_sweep_sessions_compared_flag_the_degraded_node(cluster, tmp_path):
    """The ReFrame SweepTest run twice (healthy, then node03 degraded), both stored with
    --session-extras; `fabric-report compare --tag ... --tag ...` names node03 as the only changed node
    (no REGRESSED: one session per side is no evidence), and
    `fabric-report html` draws the sweep from the stored session."""
    state, env = cluster
    root = Path(__file__).resolve().parents[2]
    env = dict(env)
    env["RFM_CONFIG_FILES"] = str(root / "config" / "reframe" / "settings.py")
    env["FABRICTEST_RESULTS_DB"] = str(tmp_path / "results.db")
    env["VCLUSTER_STATE_DIR"] = str(state)
    env["FABRICTEST_RFM_LOG"] = str(tmp_path / "reframe.log")

    def run(tag, *extra):
        cmd = [str(BIN / "reframe"), "-c", str(root / "reframe_tests" / "sweep.py"), "-r",
               "--system", "vcluster", "-n", "SweepTest", "--prefix",
               str(tmp_path / tag), "--session-extras", f"stack={tag}", "-S",
               "SweepTest.nmsg=300", "-S", "SweepTest.seed=3", "--nocolor", *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600,
                              cwd=tmp_path)
        (tmp_path / f"{tag}.out").write_text(proc.stdout + "\n--- stderr\n" + proc.stderr)
        # one case: the rdma sweep is listed only where the partition has +rdma
        assert re.search(r"PASSED .* Ran 1/1 test case", proc.stdout), proc.stdout[-3000:]
        return proc

    run("pre-upgrade")
    vcluster(state, "degrade", "node03", "50mbit")
    try:
        run("post-upgrade", "-S", "SweepTest.fail_on_suspect=false")
    finally:
        vcluster(state, "restore", "node03")
    cmp = subprocess.run(
        [str(BIN / "fabric-report"), "compare", "--tag", "stack=pre-upgrade", "--tag",
         "stack=post-upgrade", "--json", str(tmp_path / "cmp.json")],
        capture_output=True, text=True, env=env, timeout=300)
    # one session per side and the sweep's figures informational: no evidence of a regression
    # (docs/report.md), so compare calls nothing REGRESSED and exits 0, and says which figures
    # changed: node03's own, its directions and its links, and the sweep's suspect count
    assert cmp.returncode == 0, cmp.stdout + cmp.stderr
    assert "no evidence of regression" in cmp.stdout, cmp.stdout
    rows = json.loads((tmp_path / "cmp.json").read_text())["rows"]
    assert not [r for r in rows if r["status"] in ("REGRESSED", "failed")], cmp.stdout
    changed = sorted(r["pvar"] for r in rows if r["status"] == "changed")
    assert {"node03", "node03_send", "node03_recv", "suspects"} <= set(changed), cmp.stdout
    assert all("node03" in pvar or pvar == "suspects" for pvar in changed), cmp.stdout
    html = subprocess.run(
        [str(BIN / "fabric-report"), "html", "--tag", "stack=pre-upgrade", "--tag",
         "stack=post-upgrade", "-o", str(tmp_path / "report")],
        capture_output=True, text=True, env=env, timeout=300)
    assert html.returncode == 0, html.stdout + html.stderr
    page = (tmp_path / "report" / "index.html").read_text()
    assert "suspect: node03 send " in page
    assert (tmp_path / "report" / "sweep0-matrix.png").exists()

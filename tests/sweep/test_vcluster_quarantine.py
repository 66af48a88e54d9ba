"""The blind spot, the quarantine and the topology on the real vcluster (Slurm over network
namespaces), 4 nodes on 2 switches (`vcluster up --switches 2`).

* node03's link shaped to 130 of 200 mbit (0.65x, both directions): on 4 nodes it is in half
  the screening runs, which is where the first design cleared it (2 of 2 sweeps). The sweep
  names node03, and `--drain --confirm` drains node03 and no other node; a healthy sweep with
  `--drain --confirm` drains nothing.
* sw1's uplink shaped to 50mbit: a plain `fabric-sweep` (no `--topology`: Slurm's tree, as
  `scontrol show topology` prints it, is used by default) whose screening pairs all cross the
  uplink names `uplink sw1<->sw2` within 4 rounds and no node (issue 27: it said `suspects:
  none`); node03 degraded instead, with `--topology slurm`: named as the node, no uplink.
* every sweep without `--expect` is held against the system's reference (vcluster.yaml).

A few minutes: four sweeps of 10-30 s each. The module takes the vcluster lock the other
vcluster tests take, brings up its own cluster and always takes it down again.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from vcluster_session import env_of, held_cluster, vcluster

from fabrictest.parsers.topology import parse_scontrol_topology

pytestmark = [pytest.mark.vcluster, pytest.mark.slow]

BIN = Path(sys.executable).parent
NODES = ["node01", "node02", "node03", "node04"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # waits at most 9 min for the lock: a skip, not pytest-timeout's 600 s failure
    state = tmp_path_factory.mktemp("vc-quarantine") / "state"
    with held_cluster(state, "--nodes", str(len(NODES)), "--switches", "2", wait_s=540,
                      up_timeout=400):
        yield state, env_of(state)


def sweep_and_drain(env: dict, tmp_path: Path, name: str,
                    extra: tuple[str, ...] = ("--drain", "--confirm"), seed: int = 5):
    """`salloc -N 4 fabric-sweep --drain --confirm` (or `extra`): (exit code, stdout, json)."""
    out = tmp_path / f"{name}.json"
    cmd = ["salloc", "--partition=vc", f"--nodes={len(NODES)}", "--exclusive", "--no-kill",
           "--time=10", f"--job-name=sweep-{name}", str(BIN / "fabric-sweep"),
           "--launcher", "slurm", "--seed", str(seed), "--nmsg", "300", "--pair-timeout", "40",
           "--json", str(out), "--no-pairs", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600,
                          cwd=tmp_path)
    (tmp_path / f"{name}.log").write_text(proc.stdout + "\n--- stderr\n" + proc.stderr)
    assert out.exists(), f"no sweep JSON; exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.returncode, proc.stdout, json.loads(out.read_text())


def drained(env: dict) -> dict[str, str]:
    """Node -> its Slurm reason, for the nodes in a DRAIN state."""
    out = subprocess.run(["scontrol", "-o", "show", "node"], capture_output=True, text=True,
                         env=env, timeout=60).stdout
    found = {}
    for line in out.splitlines():
        name = re.search(r"NodeName=(\S+)", line)
        state = re.search(r"State=(\S+)", line)
        if name and state and "DRAIN" in state.group(1):
            why = re.search(r"Reason=(.*?)(?: \[|$)", line)
            found[name.group(1)] = why.group(1) if why else ""
    return found


def resume(env: dict, nodes) -> None:
    for node in nodes:
        subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"],
                       capture_output=True, text=True, env=env, timeout=60)


def test_node_at_0_65_is_named_and_drained_alone(cluster, tmp_path):
    state, env = cluster
    vcluster(state, "degrade", "node03", "130mbit")
    try:
        rc, out, data = sweep_and_drain(env, tmp_path, "degraded")
        now = drained(env)  # before `vcluster restore`, which resumes the node in Slurm
    finally:
        vcluster(state, "restore", "node03")
    try:
        lines = out.split("\nverdict:\n", 1)[1].splitlines()
        assert lines[0].startswith("suspect: node03 send "), out
        assert ", receive " in lines[0]
        assert lines[1].startswith("drain: scontrol update NodeName=node03 State=DRAIN "
                                   "'Reason=fabric-sweep: node03 send "), out
        assert len(lines) == 2 and rc == 1
        assert [s["node"] for s in data["suspects"]] == ["node03"]
        # the table agrees: node03 below the cut both ways, the others cleared
        table = {r["node"]: r for r in data["nodes_table"]}
        assert table["node03"]["status"] == "suspect"
        assert table["node03"]["send_ratio"] < 0.75 and table["node03"]["receive_ratio"] < 0.75
        assert all(table[n]["status"] == "ok" for n in NODES if n != "node03"), table
        assert list(now) == ["node03"], now
        assert now["node03"].startswith("fabric-sweep: node03 send ")
    finally:
        resume(env, NODES)


def test_healthy_sweep_drains_nothing(cluster, tmp_path):
    _state, env = cluster
    try:
        rc, out, data = sweep_and_drain(env, tmp_path, "healthy")
        assert out.rstrip().endswith("verdict:\nsuspects: none\ndrain: nothing to drain"), out
        assert rc == 0 and data["healthy"] is True
        assert drained(env) == {}
        # judged against Slurm's topology and the system's reference, neither given
        assert data["topology"].startswith("Slurm's") and len(data["uplinks"]) == 2
        assert data["expected"]["source"].endswith("the system's reference")
        assert data["level_unjudged"] is None
    finally:
        resume(env, NODES)


def test_switches_are_slurms_tree(cluster):
    state, env = cluster
    out = subprocess.run(["scontrol", "show", "topology"], capture_output=True, text=True,
                         env=env, timeout=60).stdout
    topo = parse_scontrol_topology(out)
    assert topo.switch_of() == {"node01": "sw1", "node02": "sw1", "node03": "sw2",
                                "node04": "sw2"}
    status = vcluster(state, "status").stdout
    assert "switch sw1: node01,node02; uplink to top unshaped" in status


def test_degraded_uplink_is_named_as_the_uplink(cluster, tmp_path):
    """Issue 27's case: a plain sweep (no --topology, no --expect) whose screening pairs all
    cross sw1's slow uplink (seed 1) took their rate as the cluster's level and said
    `suspects: none`. Slurm's topology is used by default: the uplink is named."""
    state, env = cluster
    vcluster(state, "degrade-uplink", "sw1", "50mbit")
    try:
        assert "uplink to top 50Mbit  <- degraded" in vcluster(state, "status").stdout
        rc, out, data = sweep_and_drain(env, tmp_path, "uplink", (), seed=1)
    finally:
        vcluster(state, "degrade-uplink", "sw1", "none")
    sw1 = {"node01", "node02"}
    # 4 nodes screen every pair: 2 of the 3 matchings cross the uplink
    crossing = [(p["src"] in sw1) != (p["dst"] in sw1) for p in data["pairs"]
                if p["kind"] == "screen"]
    assert (sum(crossing), len(crossing)) == (8, 12)
    lines = out.split("\nverdict:\n", 1)[1].splitlines()
    assert lines[0].startswith("suspect: uplink sw1<->sw2: "), out
    assert lines[0].endswith("; runs inside sw1 and sw2 healthy")
    # no node named against the cluster: every side's runs inside its switch at the level
    table = {r["node"]: r for r in data["nodes_table"]}
    assert all(t["send_ratio"] >= 0.75 and t["receive_ratio"] >= 0.75
               and t["status"] != "suspect" for t in table.values()), out
    # the one thing the bed may add: a side below the 4-node reference's -5 % band, named
    # as such (CI, 2026-12-03: node02->node01 and node04->node03 at 0.83-0.86x of the
    # reverse direction in both of their runs, a bed asymmetry 10 local sweeps never showed)
    below = re.compile(r"suspect: node0\d (send|receive) [\d.]+ Gbps: \d+% below the expected ")
    assert all(below.match(line) for line in lines[1:]), out
    assert rc == 1 and data["rounds_used"] <= 4
    assert [u["suspect"] for u in data["uplinks"]] == [True, True]
    assert data["topology"].startswith("Slurm's")


def test_with_the_topology_a_degraded_node_is_still_the_node(cluster, tmp_path):
    state, env = cluster
    vcluster(state, "degrade", "node03", "100mbit")
    try:
        rc, out, data = sweep_and_drain(env, tmp_path, "node", ("--topology", "slurm"))
    finally:
        vcluster(state, "restore", "node03")
    lines = out.split("\nverdict:\n", 1)[1].splitlines()
    assert len(lines) == 1 and lines[0].startswith("suspect: node03 send "), out
    assert rc == 1 and not any(u["suspect"] for u in data["uplinks"])

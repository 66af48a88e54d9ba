"""`fabric-sweep --expect-from REFERENCE`: a uniform drop of every link is named.

Without a reference the sweep weighs each node against the cluster's median: every link 30 %
slower is `suspects: none`, exit 0. With the calibrated reference of one tx/rx stream it says
the cluster level is below the reference, names the nodes, and exits 1. Black-box: the
installed console script on the simulated launcher.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).parent / "fabric-sweep")
NODES = [f"node{i:02d}" for i in range(1, 17)]
SIM = ["node[01-16]", "--launcher", "sim", "--no-pairs"]

def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *argv], capture_output=True, text=True, timeout=120)


def uniform(factor: float) -> list[str]:
    return [a for n in NODES for a in ("--sim-slow", f"{n}={factor}")]


@pytest.mark.parametrize("seed", ["1", "2"])
def test_uniform_drop_is_missed_without_and_named_with_a_reference(tmp_path, sim_reference, seed):
    ref = sim_reference()
    without = run(*SIM, *uniform(0.7), "--seed", seed)
    assert without.returncode == 0, without.stdout[-800:] + without.stderr[-800:]
    assert without.stdout.rstrip().endswith("suspects: none")

    out = tmp_path / "sweep.json"
    proc = run(*SIM, *uniform(0.7), "--seed", seed, "--expect-from", str(ref), "--json",
               str(out))
    assert proc.returncode == 1, proc.stdout[-800:] + proc.stderr[-800:]
    verdict = proc.stdout.split("\nverdict:\n", 1)[1].splitlines()
    assert verdict[0].startswith("below reference: cluster level 0.")
    assert "below the expected 1 Gbps (sim.yaml TxRxTest paired mpi stream_gbps, lower " \
           "bound -15.0%)" in verdict[0]
    named = {line.split()[1] for line in verdict[1:] if line.startswith("suspect: ")}
    assert named == set(NODES)
    data = json.loads(out.read_text())
    assert data["healthy"] is False and data["expected"]["value"] == 1.0
    assert data["notes"] == [verdict[0]]
    assert {r["status"] for r in data["nodes_table"]} == {"below reference"}


def test_healthy_cluster_at_its_reference_is_clean(tmp_path, sim_reference):
    ref = sim_reference()
    for seed in ("1", "2", "3"):
        proc = run(*SIM, "--seed", seed, "--expect-from", str(ref))
        assert proc.returncode == 0, proc.stdout[-800:]
        assert proc.stdout.rstrip().endswith("suspects: none")
        assert "expected 1.00 Gbps per run from sim.yaml" in proc.stdout


def test_one_node_below_its_reference_is_named_not_its_partners(tmp_path, sim_reference):
    """node03 18 % slow: within the relative sweep's 25 % practical cut, so it is named only
    against the reference; its partners' runs with it are explained by node03."""
    ref = sim_reference()
    rel = run(*SIM, "--seed", "1", "--sim-slow", "node03=0.82")
    assert rel.returncode == 0 and rel.stdout.rstrip().endswith("suspects: none")
    proc = run(*SIM, "--seed", "1", "--sim-slow", "node03=0.82", "--expect-from", str(ref))
    assert proc.returncode == 1, proc.stdout[-800:]
    verdict = proc.stdout.split("\nverdict:\n", 1)[1].splitlines()
    assert [v.split()[1] for v in verdict] == ["node03"], verdict
    assert verdict[0].startswith("suspect: node03 send 0.8")


@pytest.mark.parametrize(
    "extra, first_line",
    [
        (["--expect", "1.0"], "give --expect or --expect-from, not both"),
        (["--test", "osu_bw"], "--expect-from holds tx/rx streams' references: it needs "
                               "--test txrx"),
        (["--msg-size", "4096"], "measured with msg_size=65536, the sweep uses 4096 (give "
                                 "--msg-size 65536)"),
        (["--method", "rdma"], "TxRxTest paired rdma host stream_gbps on sim: no such "
                               "reference"),
        (["--expect-system", "other"], "system key 'sim' does not match the file's system "
                                       "'other'"),
    ],
)
def test_refusals(tmp_path, sim_reference, extra, first_line):
    proc = run(*SIM, "--expect-from", str(sim_reference()), *extra)
    err = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stdout[-500:] + proc.stderr[-500:]
    assert len(err) == 1 and err[0].startswith("fabric-sweep: error: "), proc.stderr
    assert first_line in err[0], err[0]
    assert proc.stdout == ""


def test_refuses_a_missing_file_and_a_bound_that_cannot_fail(tmp_path, sim_reference):
    proc = run(*SIM, "--expect-from", str(tmp_path / "none.yaml"))
    assert proc.returncode == 2 and "no such file" in proc.stderr
    proc = run(*SIM, "--expect-system", "sim")
    assert proc.returncode == 2 and "--expect-system needs --expect-from" in proc.stderr
    loose = sim_reference(lower="null")
    proc = run(*SIM, "--expect-from", str(loose))
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr

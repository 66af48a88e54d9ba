"""fabric-sweep end to end: simulation, real concurrent processes with timeouts, real MPI."""

from __future__ import annotations

import json
import shutil
import sys
import time

import pytest

from fabrictest.sweep.cli import main
from fabrictest.sweep.core import run_sweep
from fabrictest.sweep.runners import CommandRunner
from fabrictest.sweep.schedule import Round


def test_cli_simulation_json(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    rc = main(["node[01-08]", "--launcher", "sim", "--sim-slow", "node05=0.25", "--seed", "3",
               "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 1
    assert text.strip().splitlines()[-1].startswith("suspect: node05 median ")
    data = json.loads(out.read_text())
    assert data["kind"] == "fabrictest-sweep"
    assert data["rounds_used"] == 3
    assert [s["node"] for s in data["suspects"]] == ["node05"]
    assert len(data["pairs"]) == 9 and len(data["nodes_table"]) == 8


def test_cli_no_suspects_exit_zero(capsys):
    assert main(["n[1-6]", "--launcher", "sim", "--seed", "1", "--no-pairs"]) == 0
    assert capsys.readouterr().out.strip().endswith("suspects: none")


def test_cli_needs_nodes(capsys, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    monkeypatch.delenv("SLURM_NODELIST", raising=False)
    assert main(["--launcher", "sim"]) == 2
    assert "SLURM_JOB_NODELIST" in capsys.readouterr().err


SCRIPT = r"""
import sys, time
a, b = sys.argv[1:3]
if "hang" in (a, b):
    time.sleep(600)
if "dead" in (a, b):
    sys.exit("connection refused")
rate = 0.05 if "slow" in (a, b) else 0.19
time.sleep(0.2)
print(f"INFO:__main__:Rank 0 receiver from transmitter 0, data rate is {rate} Gbps")
"""


class FakeTxrx:
    unit = "Gbps"
    name = "fake"

    def parse(self, text):
        from fabrictest.sweep.runners import Txrx

        return Txrx().parse(text)


class ScriptRunner(CommandRunner):
    def command(self, pair):
        return [sys.executable, "-c", SCRIPT, *pair]


def test_concurrent_pairs_and_timeouts_never_hang():
    runner = ScriptRunner(FakeTxrx(), pair_timeout=3)
    rnd = Round(0, "screen", [("a", "b"), ("c", "hang"), ("dead", "d")])
    t0 = time.monotonic()
    res = runner.run_round(rnd)
    assert time.monotonic() - t0 < 15  # concurrent, and the hung pair was killed
    by = {(r.a, r.b): r for r in res}
    assert by["a", "b"].status == "ok" and by["a", "b"].value == pytest.approx(0.19)
    assert by["c", "hang"].status == "timeout"
    assert by["dead", "d"].status == "failed" and "connection refused" in by["dead", "d"].detail


def test_sweep_over_processes_names_slow_and_hung_nodes():
    nodes = ["n1", "n2", "slow", "n4", "n5", "hang"]
    res = run_sweep(nodes, ScriptRunner(FakeTxrx(), pair_timeout=3), seed=4)
    assert sorted(res.suspects) == ["hang", "slow"]
    lines = res.verdict.lines()
    assert any(x.startswith("suspect: hang unreachable (") for x in lines)
    assert any(x.startswith("suspect: slow median 0.05") for x in lines)


@pytest.mark.mpi
def test_real_txrx_pairs_on_this_host(tmp_path, capsys):
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH")
    out = tmp_path / "s.json"
    rc = main(["n[1-4]", "--launcher", "mpirun", "--all-local", "--nmsg", "200",
               "--pair-timeout", "120", "--seed", "1", "--json", str(out)])
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert all(p["status"] == "ok" and p["value"] > 0 for p in data["pairs"]), text
    assert rc in (0, 1)  # the verdict on one shared host is noise; the chain must work
    assert text.strip().splitlines()[-1].startswith(("suspects: none", "suspect: "))


def test_slurm_step_command_pins_each_pair_to_its_nodes(monkeypatch):
    from fabrictest.sweep.runners import SlurmRunner, Txrx

    monkeypatch.setenv("FABRIC_SWEEP_SRUN_ARGS", "--mpi=pmix")
    r = SlurmRunner(Txrx(exe="txrx", timeout=55), pair_timeout=60, srun_args=["--quiet"])
    cmd = r.command(("node01", "node03"))
    assert cmd[:4] == ["srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1"]
    assert "--nodelist=node01,node03" in cmd and "--exact" in cmd and "--overlap" in cmd
    assert "--time=2" in cmd and "--mpi=pmix" in cmd and "--quiet" in cmd
    i = cmd.index("txrx")
    assert cmd[i:i + 5] == ["txrx", "--nrx", "1", "--nlink", "1"]
    assert cmd[-2:] == ["--timeout", "55"]


def test_mpirun_command_one_rank_per_host():
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH")
    from fabrictest import mpirun as mpilaunch
    from fabrictest.sweep.runners import LocalRunner, Txrx

    r = LocalRunner(Txrx(exe="txrx"), host_map={"n1": "10.0.0.1"})
    cmd = r.command(("n1", "n2"))
    assert cmd[:3] == ["mpirun", "-np", "2"]
    if mpilaunch.flavour() == "openmpi":
        assert "--map-by" in cmd and cmd[cmd.index("--map-by") + 1] == "node"
        assert "10.0.0.1:2,n2:2" in cmd
    local = LocalRunner(Txrx(exe="txrx"), all_local=True).command(("n1", "n2"))
    assert "--host" not in local and "-hosts" not in local

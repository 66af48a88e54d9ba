"""fabric-sweep end to end: simulation, real concurrent processes with timeouts, real MPI,
the plan and progress on stderr, Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fabrictest.sweep.cli import main
from fabrictest.sweep.core import run_sweep
from fabrictest.sweep.runners import CommandRunner
from fabrictest.sweep.runs import Round

EXE = str(Path(sys.executable).parent / "fabric-sweep")


def test_cli_simulation_json(tmp_path, capsys):
    out = tmp_path / "sweep.json"
    rc = main(["node[01-08]", "--launcher", "sim", "--sim-slow", "node05=0.25", "--seed", "3",
               "--json", str(out), "-q"])
    text = capsys.readouterr().out
    assert rc == 1
    assert text.strip().splitlines()[-1].startswith("suspect: node05 send 0.2")
    data = json.loads(out.read_text())
    assert data["kind"] == "fabrictest-sweep" and data["version"] == 2
    # 8 nodes screen 4 matchings (at least 32 runs, schedule.MIN_SCREEN_RUNS)
    assert data["rounds_used"] == 4 and data["max_rounds"] == 8
    assert [s["node"] for s in data["suspects"]] == ["node05"]
    assert len(data["pairs"]) == 32 and len(data["nodes_table"]) == 8  # 16 pairs x 2 ways
    assert all({"a", "b", "src", "dst", "status", "value"} <= set(p) for p in data["pairs"])
    row = {r["node"]: r for r in data["nodes_table"]}["node05"]
    assert row["status"] == "suspect" and row["send_state"] == "slow"
    assert data["figures"]["node05_send"][0] < 0.5 * data["figures"]["cluster_level"][0]


def test_cli_no_suspects_exit_zero(capsys):
    assert main(["n[1-6]", "--launcher", "sim", "--seed", "1", "--no-pairs", "-q"]) == 0
    assert capsys.readouterr().out.strip().endswith("suspects: none")


def test_cli_needs_nodes(capsys, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    monkeypatch.delenv("SLURM_NODELIST", raising=False)
    assert main(["--launcher", "sim"]) == 2
    assert "SLURM_JOB_NODELIST" in capsys.readouterr().err


def test_sim_specs_from_a_file_and_by_direction(tmp_path, capsys):
    faults = tmp_path / "slow.txt"
    faults.write_text("# one-direction faults\nnode0[2-3]=0.5:tx\n\nnode07=0.5:rx  # a port\n")
    down = tmp_path / "down.txt"
    down.write_text("node11:rx\n")
    rc = main(["node[01-16]", "--launcher", "sim", "--seed", "2", "--sim-slow", f"@{faults}",
               "--sim-slow", "node09=0.3", "--sim-down", f"@{down}", "--no-pairs", "-q"])
    lines = capsys.readouterr().out.strip().split("verdict:\n", 1)[1].splitlines()
    assert rc == 1
    got = {line.split()[1]: line for line in lines}
    assert set(got) == {"node02", "node03", "node07", "node09", "node11"}, lines
    assert "pairs slow sending, receiving ok" in got["node02"]
    assert "pairs slow sending, receiving ok" in got["node03"]
    assert got["node07"].startswith("suspect: node07 receive 0.")
    assert "pairs slow receiving, sending ok" in got["node07"]
    assert re.search(r"\((\d)/\1 pairs slow sending, (\d)/\2 slow receiving;", got["node09"])
    assert got["node11"].startswith("suspect: node11 unreachable receiving (")


def test_plan_and_progress_on_stderr_before_the_verdict():
    proc = subprocess.run(
        [EXE, "node[01-16]", "--launcher", "sim", "--seed", "3", "--sim-sigma", "0.28",
         "--sim-slow", "node04=0.5", "--sim-pair-seconds", "0.05", "--max-rounds", "5"],
        capture_output=True, text=True, timeout=60)
    err = proc.stderr.splitlines()
    assert proc.returncode in (0, 1), proc.stderr
    assert err[0] == "fabric-sweep: 16 nodes: node[01-16]; simulation (sigma 0.28)"
    assert err[1].startswith(
        "fabric-sweep: plan: 16 nodes, 8 pairs per screening round, both directions of each "
        "(16 runs); 2 screening rounds planned, at most 5 rounds")
    assert "estimated wall time 0.2 s for the planned rounds, 0.5 s at most" in err[1]
    rounds = [e for e in err if " done: " in e]
    assert rounds[0].startswith("fabric-sweep: round 0 (screen) done: 8 pairs, 16 runs")
    extra = [e for e in err if "(extra, " in e]
    assert all("ambiguous after" in e for e in extra)
    data_rounds = len(rounds)
    assert 2 <= data_rounds <= 5 and len(extra) == data_rounds - 2


def test_ctrl_c_prints_the_verdict_so_far():
    proc = subprocess.Popen(
        [EXE, "node[01-08]", "--launcher", "sim", "--seed", "1", "--sim-slow", "node02=0.25",
         "--sim-pair-seconds", "1", "--rounds", "8", "--no-pairs"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # progress lines tell where the sweep is
        line = proc.stderr.readline()
        seen.append(line)
        if "round 1 (screen) done" in line or not line:
            break
    assert "round 1 (screen) done" in seen[-1], seen
    # round 2 under way (2 s: both directions of 1 s), and 6 more planned: a loaded host that
    # runs this test late still finds the sweep measuring (with 4 rounds it had ended, exit 1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    # during round 2, or just after round 1 when the signal beat the next round's start
    m = re.search(r"^verdict so far \(interrupted \(Ctrl-C\) (during round [2-7]|after round [1-6])"
                  r"\):\n", out, re.M)
    assert m, out
    verdict = out[m.end():]
    assert verdict.splitlines()[0].startswith("suspect: node02 send 0.2"), out


SCRIPT = r"""
import sys, time
src, dst = sys.argv[1:3]
if "hang" in (src, dst):
    time.sleep(600)
if "dead" in (src, dst):
    sys.exit("connection refused")
slow = "slow" in (src, dst) or src == "slowtx" or dst == "slowrx"
rate = 0.05 if slow else 0.19
time.sleep(0.2)
for line in ("elapsed time is 1.0 seconds", f"data rate is {rate} Gbps", "message missed is 0",
             "message received is 500", "message total is 500", "message loss rate is 0.0"):
    print(f"INFO:__main__:Rank 0 receiver from transmitter 0, {line}")
print("INFO:__main__:Rank 0 transmitter elapsed time is 1.0 seconds")
print(f"INFO:__main__:Rank 0 transmitter data rate is {rate} Gbps")
"""


class FakeTxrx:
    unit = "Gbps"
    name = "fake"
    sender_rank = 1

    def parse(self, text):
        from fabrictest.sweep.measure import Txrx

        return Txrx().parse(text)


class ScriptRunner(CommandRunner):
    def command(self, src, dst):
        return [sys.executable, "-c", SCRIPT, src, dst], None


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_concurrent_pairs_and_timeouts_never_hang():
    runner = ScriptRunner(FakeTxrx(), pair_timeout=3)
    names = ["a", "b", "c", "hang", "dead", "d"]
    rnd = Round(0, "screen", [0, 2, 4], [1, 3, 5], names)
    t0 = time.monotonic()
    runs = runner.run_round(rnd)
    assert time.monotonic() - t0 < 20  # concurrent, and the hung runs were killed
    by = {(names[s], names[d]): (st, v, runs.details.get(i, ""))
          for i, (s, d, st, v) in enumerate(zip(runs.src, runs.dst, runs.status, runs.value,
                                                strict=True))}
    assert by["a", "b"][0] == 0 and by["a", "b"][1] == pytest.approx(0.19)
    assert by["b", "a"][0] == 0
    assert by["c", "hang"][0] == 2 and by["hang", "c"][0] == 2  # timeout, both ways
    assert by["dead", "d"][0] == 1 and "connection refused" in by["dead", "d"][2]


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_sweep_over_processes_names_slow_and_hung_nodes_by_direction():
    nodes = ["n1", "n2", "slow", "n4", "n5", "hang", "slowtx", "n8"]
    res = run_sweep(nodes, ScriptRunner(FakeTxrx(), pair_timeout=3), seed=4)
    assert sorted(res.suspects) == ["hang", "slow", "slowtx"]
    assert res.suspect_sides() == {("hang", "send"), ("hang", "receive"), ("slow", "send"),
                                   ("slow", "receive"), ("slowtx", "send")}
    lines = res.verdict.lines()
    assert any(x.startswith("suspect: hang unreachable (") for x in lines)
    assert any(x.startswith("suspect: slowtx send 0.05") and "receiving ok" in x
               for x in lines)


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_ctrl_c_kills_the_runs_in_flight_and_keeps_what_completed():
    nodes = ["n1", "n2", "n3", "n4", "hang", "n6"]
    runner = ScriptRunner(FakeTxrx(), pair_timeout=60)
    timer = threading.Timer(4.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        res = run_sweep(nodes, runner, seed=1, rounds=2)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < 20  # the hung run was killed, not waited for
    assert res.interrupted and res.stop_reason.startswith("interrupted (Ctrl-C) during round")
    assert res.verdict.lines()[-1].startswith(("suspect", "suspects: none so far",
                                               "undecided", "failed run"))
    statuses = set(res.table.status.tolist())
    assert 3 in statuses  # the killed runs are "interrupted", not evidence
    assert not runner._procs


@pytest.mark.mpi
def test_real_txrx_pairs_on_this_host(tmp_path, capsys):
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH")
    out = tmp_path / "s.json"
    rc = main(["n[1-4]", "--launcher", "mpirun", "--all-local", "--nmsg", "200",
               "--pair-timeout", "120", "--seed", "1", "--json", str(out), "-q",
               "--max-rounds", "3"])
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert all(p["status"] == "ok" and p["value"] > 0 for p in data["pairs"]), text
    assert len(data["pairs"]) >= 8  # 2 rounds x 2 pairs x 2 directions
    assert rc in (0, 1)  # the verdict on one shared host is noise; the chain must work
    assert text.strip().splitlines()[-1].startswith(("suspects: none", "suspect: ",
                                                     "undecided: "))


def test_slurm_step_places_each_rank_on_its_node(monkeypatch):
    from fabrictest.sweep.measure import Txrx
    from fabrictest.sweep.runners import SlurmRunner

    monkeypatch.setenv("FABRIC_SWEEP_SRUN_ARGS", "--mpi=pmix")
    r = SlurmRunner(Txrx(exe="txrx", timeout=55), pair_timeout=60, srun_args=["--quiet"])
    cmd, env = r.command("node03", "node01")  # node03 sends: txrx rank 1 on node03
    assert cmd[:4] == ["srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1"]
    assert "--nodelist=node01,node03" in cmd and "--distribution=arbitrary" in cmd
    assert Path(env["SLURM_HOSTFILE"]).read_text() == "node01\nnode03\n"
    assert "--exact" in cmd and "--overlap" in cmd
    assert "--time=2" in cmd and "--mpi=pmix" in cmd and "--quiet" in cmd
    i = cmd.index("txrx")
    assert cmd[i:i + 5] == ["txrx", "--nrx", "1", "--nlink", "1"]
    assert cmd[-2:] == ["--timeout", "55"]
    # a run whose ranks landed elsewhere is not counted
    assert r._placement("fabric-sweep-rank 0 node01\nfabric-sweep-rank 1 node03\n",
                        "node03", "node01") == ""
    assert "expected" in r._placement("fabric-sweep-rank 0 node03\nfabric-sweep-rank 1 "
                                      "node01\n", "node03", "node01")


def test_mpirun_command_puts_the_receiver_first():
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH")
    from fabrictest import mpirun as mpilaunch
    from fabrictest.sweep.measure import OsuBw, Txrx
    from fabrictest.sweep.runners import LocalRunner

    r = LocalRunner(Txrx(exe="txrx"), host_map={"n1": "10.0.0.1"})
    cmd, _env = r.command("n2", "n1")  # n2 sends, n1 receives (txrx rank 0 receives)
    assert cmd[:3] == ["mpirun", "-np", "2"]
    if mpilaunch.flavour() == "openmpi":
        assert "--map-by" in cmd and cmd[cmd.index("--map-by") + 1] == "node"
        assert "10.0.0.1:2,n2:2" in cmd
        osu, _ = LocalRunner(OsuBw(exe="osu_bw")).command("n2", "n1")  # osu_bw: rank 0 sends
        assert "n2:2,n1:2" in osu
    local, _ = LocalRunner(Txrx(exe="txrx"), all_local=True).command("n1", "n2")
    assert "--host" not in local and "-hosts" not in local


def test_too_few_rounds_to_name_a_slow_node_is_not_a_pass(capsys):
    # one round, no extra: a 0.25x node has a single run each way, too few to be named, and
    # that must not read "suspects: none"
    rc = main(["n[1-8]", "--launcher", "sim", "--rounds", "1", "--max-rounds", "1",
               "--sim-slow", "n3=0.25", "--seed", "2", "--no-pairs", "-q"])
    lines = capsys.readouterr().out.split("verdict:\n", 1)[1].splitlines()
    assert rc == 1
    assert "undecided: n3 send (0.2" in "\n".join(lines)
    assert all(line.startswith("undecided: ") for line in lines)
    assert main(["n[1-8]", "--launcher", "sim", "--rounds", "1", "--max-rounds", "1",
                 "--seed", "2", "--no-pairs", "-q"]) == 0

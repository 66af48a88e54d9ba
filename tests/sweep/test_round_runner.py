"""A round as one job step per direction (round_runner.py, txrx/pairs.py): the same runs and
verdict as a step per run, a hung or dead pair charged to its pair, 2 steps per round, and the
srun / mpirun command lines that place rank i on its node."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from fabrictest.sweep.cli import main
from fabrictest.sweep.core import run_sweep
from fabrictest.sweep.measure import Txrx
from fabrictest.sweep.round_runner import RoundStepRunner
from fabrictest.sweep.runners import CommandRunner
from fabrictest.sweep.runs import FAILED, OK, TIMEOUT, Round

# the nodes of both fakes: slow both ways, slow sending, hung, dead, and healthy ones
NODES = ["n1", "n2", "slow", "n4", "n5", "hang", "slowtx", "n8", "n9", "dead"]

RATE = r"""
def rate(src, dst):
    return 0.05 if "slow" in (src, dst) or src == "slowtx" else 0.19

def lines(rate):
    out = [f"INFO:__main__:Rank 0 receiver from transmitter 0, {x}" for x in (
        "elapsed time is 1.0 seconds", f"data rate is {rate} Gbps", "message missed is 0",
        "message received is 500", "message total is 500", "message loss rate is 0.0")]
    return out, ["INFO:__main__:Rank 0 transmitter elapsed time is 1.0 seconds",
                 f"INFO:__main__:Rank 0 transmitter data rate is {rate} Gbps"]

def every_pair_says(by_rank):  # each pair's lines, as txrx.pairs prints a whole step
    p = len(by_rank) // 2
    for i in range(p):
        rx, tx = lines(rate(by_rank[p + i], by_rank[i]))
        print("\n".join([f"fabric-sweep-pair {i} r: {x}" for x in rx]
                        + [f"fabric-sweep-pair {i} t: {x}" for x in tx]))
"""

# one run: what the per-run runner launches
PER_RUN = RATE + r"""
import sys, time
src, dst = sys.argv[1:3]
if "hang" in (src, dst):
    time.sleep(600)
if "dead" in (src, dst):
    sys.exit("connection refused")
rx, tx = lines(rate(src, dst))
print("\n".join(rx + tx))
"""

# one step: txrx.pairs' output for every pair of it (rank i on argv[i]), a hung pair's rank
# ended by its watchdog, a dead one's partner with its ERROR line
PER_ROUND = RATE + r"""
import sys
by_rank = sys.argv[1:]
p = len(by_rank) // 2
for i in range(p):
    dst, src = by_rank[i], by_rank[p + i]
    if "hang" in (src, dst):
        print(f"fabric-sweep-pair {i} r: ERROR:__main__:nothing arrived for 2 s")
        print(f"fabric-sweep-pair {i} t: ERROR:__main__:no result within 3 s (rank of pair {i})")
        continue
    if "dead" in (src, dst):
        print(f"fabric-sweep-pair {i} r: ERROR:__main__:connection refused")
        continue
    rx, tx = lines(rate(src, dst))
    print("\n".join([f"fabric-sweep-pair {i} r: {x}" for x in rx]
                    + [f"fabric-sweep-pair {i} t: {x}" for x in tx]))
"""


class FakeTxrx(Txrx):
    @property
    def name(self) -> str:
        return "fake"


class PerRun(CommandRunner):
    def command(self, src, dst):
        return [sys.executable, "-c", PER_RUN, src, dst], None


class PerRound(RoundStepRunner):
    script = PER_ROUND

    def command_for(self, rnd, half, by_rank):
        return [sys.executable, "-c", self.script, *by_rank], None


def _by_run(res):
    return {(r.round, r.src, r.dst): (r.status, r.value) for r in res.table.runs()}


@pytest.mark.proc  # the runners start the stand-in steps
def test_one_step_per_round_gives_the_per_run_verdict_with_two_steps_a_round():
    per_run = PerRun(FakeTxrx(), pair_timeout=3)
    per_round = PerRound(FakeTxrx(), pair_timeout=3)
    a = run_sweep(NODES, per_run, seed=4)
    b = run_sweep(NODES, per_round, seed=4)
    assert _by_run(a) == _by_run(b)  # every run: same pair, direction, state and figure
    assert a.verdict.lines() == b.verdict.lines()
    assert sorted(b.suspects) == ["dead", "hang", "slow", "slowtx"]
    assert b.suspect_sides() >= {("slowtx", "send"), ("slow", "send"), ("slow", "receive")}
    assert per_run.steps == len(a.table)  # a step per run
    assert per_round.steps == 2 * len(b.rounds)  # a step per round and direction
    statuses = {(r.src, r.dst): r.status for r in b.table.runs()}
    assert {s for (x, y), s in statuses.items() if "hang" in (x, y)} == {"timeout"}
    assert {s for (x, y), s in statuses.items() if "dead" in (x, y)} == {"failed"}


@pytest.mark.proc  # the runners start the stand-in steps
def test_full_duplex_gives_the_same_runs_in_one_step_a_round():
    """Both directions of a pair at once: the same runs, figures and verdict as two steps a
    round, one step for a round of reverse lanes, two where an extra round's lane has two
    partners; steps <= 2 x rounds + 2 in both modes."""
    half = PerRound(FakeTxrx(), pair_timeout=3)
    full = PerRound(FakeTxrx(), pair_timeout=3, duplex="full")
    a = run_sweep(NODES, half, seed=4)
    b = run_sweep(NODES, full, seed=4)
    assert _by_run(a) == _by_run(b) and a.verdict.lines() == b.verdict.lines()
    assert half.steps == 2 * len(a.rounds) <= 2 * len(a.rounds) + 2
    want = sum(len(full.steps_of(r.lanes())) for r in b.rounds)
    assert full.steps == want <= 2 * len(b.rounds) + 2
    reverse = [r for r in b.rounds if all(s == f[::-1] for f, s in r.lanes())]
    assert reverse and full.steps == len(reverse) + 2 * (len(b.rounds) - len(reverse))
    assert full.steps < half.steps
    print(f"steps: half {half.steps}, full {full.steps}, rounds {len(b.rounds)}")


def test_full_duplex_keeps_a_lane_with_two_partners_in_two_steps():
    r = RoundStepRunner(Txrx(exe="txrx"), duplex="full")
    lanes = [(("a", "b"), ("b", "a")), (("c", "x"), ("d", "x"))]  # x received twice
    assert r.steps_of(lanes) == [[("a", "b"), ("c", "x"), ("b", "a")], [("d", "x")]]
    assert r.steps_of(lanes[:1]) == [[("a", "b"), ("b", "a")]]
    rows = ["ab", "cx", "ba", "dx"]  # in the order of the steps
    assert r._lane_order(rows, lanes) == ["ab", "ba", "cx", "dx"]


def test_srun_step_in_full_duplex_holds_two_ranks_a_node(monkeypatch):
    monkeypatch.delenv("FABRIC_SWEEP_SRUN_ARGS", raising=False)
    r = RoundStepRunner(Txrx(exe="txrx"), launcher="slurm", pair_timeout=60, duplex="full")
    rnd = Round(1, "screen", [0], [1], ["n1", "n2"])
    cmd, env = r.command_for(rnd, 0, ["n2", "n1", "n1", "n2"])  # n1->n2 and n2->n1 at once
    assert cmd[1:4] == ["--nodes=2", "--ntasks=4", "--ntasks-per-node=2"]
    assert Path(env["SLURM_HOSTFILE"]).read_text() == "n2\nn1\nn1\nn2\n"


@pytest.mark.parametrize("args", [["--step-per", "run"], ["--launcher", "mpirun"]])
def test_full_duplex_refused_where_it_cannot_place_its_ranks(capsys, args):
    rc = main(["n[1-4]", "--duplex", "full", *args])
    err = capsys.readouterr().err
    assert rc == 2 and "--duplex full" in err and "Traceback" not in err

@pytest.mark.proc  # the runners start the stand-in steps
def test_a_step_that_dies_or_hangs_fails_its_pairs_not_the_sweep():
    names = ["a", "b", "c", "d"]
    rnd = Round(1, "screen", [0, 2], [1, 3], names)
    dies = PerRound(FakeTxrx(), pair_timeout=1)
    dies.script = "import sys; print('fabric-sweep-pair 1 r: half'); sys.exit(7)"
    runs = dies.run_round(rnd)
    assert runs.status.tolist() == [FAILED] * 4
    assert "no output from its pair (step exit 7)" in runs.details[0]
    assert "no transmitter output" in runs.details[2]
    hangs = PerRound(FakeTxrx(), pair_timeout=1)
    hangs.step_grace = 1.0
    hangs.script = "import time; time.sleep(600)"
    runs = hangs.run_round(rnd)
    assert runs.status.tolist() == [TIMEOUT] * 4 and "ended at its limit" in runs.details[1]
    assert not hangs._procs


@pytest.mark.proc  # the runners start the stand-in steps
def test_a_pair_on_the_wrong_nodes_is_not_counted():
    names = ["a", "b", "c", "d"]
    rnd = Round(1, "screen", [0, 2], [1, 3], names)
    r = PerRound(FakeTxrx(), pair_timeout=3)
    # step 1: a->b and c->d; ranks 0,1 receive on b,d; 2,3 send from a,c. Rank 3 landed on a.
    swapped = RATE + PER_ROUND.split(RATE, 1)[1] + (
        "\nprint('fabric-sweep-rank 0 b'); print('fabric-sweep-rank 1 d')"
        "\nprint('fabric-sweep-rank 2 c'); print('fabric-sweep-rank 3 a')")
    r.script = swapped
    runs = r.run_round(rnd)
    assert runs.status[0] == FAILED and "expected a->b" in runs.details[0]
    assert runs.status[2] == FAILED


ABORTS = RATE + r"""
import sys
by_rank = sys.argv[1:]
for r, node in enumerate(by_rank):
    if node != "down":
        print(f"fabric-sweep-rank {r} {node}")
if "down" in by_rank:  # srun aborts the whole step: no pair says anything
    sys.exit(233)
every_pair_says(by_rank)
"""


@pytest.mark.proc  # the runners start the stand-in steps
def test_a_step_aborted_for_a_node_that_cannot_start_is_run_again_without_it():
    names = ["a", "down", "c", "d", "e", "f"]
    r = PerRound(FakeTxrx(), pair_timeout=3)
    r.script = ABORTS
    runs = r.run_round(Round(1, "screen", [0, 2, 4], [1, 3, 5], names))
    assert runs.status.tolist() == [FAILED, FAILED, OK, OK, OK, OK]
    assert runs.details[0].startswith("down did not start its rank (step exit 233)")
    assert r.steps == 4  # each direction: the aborted step, then the others' pairs again


TORN = RATE + r"""
import sys
by_rank = sys.argv[1:]
p = len(by_rank) // 2
for i in range(p):
    if "dead" in (by_rank[i], by_rank[p + i]):
        print(f"fabric-sweep-pair {i} r: ERROR:__main__:MPI error with the transmitter of pair {i}")
if any("dead" in x for x in by_rank):  # MPICH's Hydra: one rank killed, every rank ended
    sys.exit(9)
every_pair_says(by_rank)
"""


@pytest.mark.proc  # the runners start the stand-in steps
def test_pairs_silenced_by_a_torn_down_step_are_measured_again_without_the_failed_one():
    names = ["a", "b", "dead", "d", "e", "f"]
    r = PerRound(FakeTxrx(), pair_timeout=3)
    r.script = TORN
    runs = r.run_round(Round(1, "screen", [0, 2, 4], [1, 3, 5], names))
    assert runs.status.tolist() == [OK, OK, FAILED, FAILED, OK, OK], runs.details
    assert "MPI error with the transmitter" in runs.details[2]
    assert r.steps == 4  # each direction: the torn step, then the silenced pairs again


# MPICH's pip wheel under `srun --mpi=pmix` (the vcluster's MpiDefault), as recorded there:
# every rank aborts in MPI_Init; under `--mpi=none` every rank is a world of 1
NO_PMIX = r"""
import sys
for r, node in enumerate(sys.argv[1:]):
    print(f"fabric-sweep-rank {r} {node}")
    print("Abort(68830480): Fatal error in internal_Init_thread: Internal MPI error!, error stack:")
    print("MPIR_pmi_init(225)..............: ")
    print("check_MPIR_CVAR_PMI_VERSION(167):  Runtime environment uses unsupported PMI version "
          "PMIx. Aborting.")
print(f"srun: error: {sys.argv[1]}: task 0: Exited with exit code 16")
sys.exit(16)
"""
NO_PMI = r"""
import sys
for r, node in enumerate(sys.argv[1:]):
    print(f"fabric-sweep-rank {r} {node}")
    print(f"ERROR:__main__:--pairs {len(sys.argv[1:]) // 2} needs {len(sys.argv[1:])} ranks, got 1")
sys.exit(2)
"""


@pytest.mark.proc  # the runner starts the stand-in steps
@pytest.mark.parametrize(("script", "rc", "says"), [
    (NO_PMIX, 16, "MPI_Init failed on every rank: this MPI has no PMIx (srun's --mpi=)"),
    (NO_PMI, 2, "every rank started as a world of 1, not 6: the MPI found no PMI from srun"),
])
def test_an_mpi_that_cannot_start_under_srun_is_one_line_naming_the_pmi(script, rc, says):
    """Every pair failed at once (no retry, no wait), its detail one line naming what is
    missing and what to give srun, not the tail of MPICH's error stack."""
    r = PerRound(FakeTxrx(), pair_timeout=30)
    r.script = script
    rows = r._step(Round(1, "screen", [0, 2, 4], [1, 3, 5], NODES[:6]), 0,
                   [("n1", "n2"), ("slow", "n4"), ("n5", "hang")])
    assert [x[0] for x in rows] == [FAILED] * 3 and r.steps == 1
    for x in rows:
        assert x[3].startswith(f"no output from its pair (step exit {rc}): {says}"), x[3]
        assert "--srun-arg=--mpi=pmi2" in x[3] and "\n" not in x[3]
        assert x[2] < 10  # at once, not at the pairs' limit

@pytest.mark.proc  # the runner starts the stand-in steps
def test_the_fault_follows_its_pair_into_a_step_run_again():
    """--fault-pair names a pair by its index in the step: pair e->f is index 2 of the torn step
    and index 1 of the step that measures the silenced pairs again."""
    seen = []

    class Recording(PerRound):
        def command_for(self, rnd, half, by_rank):
            argv = self.pairs_argv(len(by_rank) // 2)
            seen.append(argv[argv.index("--fault-pair") + 1])
            return super().command_for(rnd, half, by_rank)

    r = Recording(FakeTxrx(), pair_timeout=3, fault_pair=2)
    r.script = TORN
    r._step(Round(1, "screen", [0, 2, 4], [1, 3, 5], ["a", "b", "dead", "d", "e", "f"]), 0,
            [("a", "b"), ("dead", "d"), ("e", "f")])
    assert seen == ["2", "1"]

def test_srun_step_places_rank_i_on_its_node_and_keeps_going_when_one_dies(monkeypatch):
    monkeypatch.setenv("FABRIC_SWEEP_SRUN_ARGS", "--mpi=pmix")
    r = RoundStepRunner(Txrx(exe="txrx", timeout=55), launcher="slurm", pair_timeout=60)
    rnd = Round(3, "screen", [0, 2], [1, 3], ["n1", "n2", "n3", "n4"])
    cmd, env = r.command_for(rnd, 0, ["n2", "n4", "n1", "n3"])  # n1->n2, n3->n4
    assert cmd[:4] == ["srun", "--nodes=4", "--ntasks=4", "--ntasks-per-node=1"]
    assert "--distribution=arbitrary" in cmd and "--kill-on-bad-exit=0" in cmd
    assert "--mpi=pmix" in cmd and "--time=3" in cmd  # 60 s + 30 s grace, in minutes, +1
    assert Path(env["SLURM_HOSTFILE"]).read_text() == "n2\nn4\nn1\nn3\n"
    i = cmd.index("fabrictest.txrx.pairs")
    assert cmd[i + 1:i + 5] == ["--pairs", "2", "--limit", "60"]
    assert "--nrx" in cmd[i:] and cmd[-2:] == ["--timeout", "55"]


def test_mpirun_step_lists_the_hosts_in_rank_order_and_survives_a_dead_rank():
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH")
    from fabrictest import mpirun as mpilaunch

    r = RoundStepRunner(Txrx(exe="txrx"), host_map={"n1": "10.0.0.1"})
    rnd = Round(1, "screen", [0], [1], ["n1", "n2"])
    cmd, _ = r.command_for(rnd, 0, ["n2", "n1"])
    assert cmd[:3] == ["mpirun", "-np", "2"]
    if mpilaunch.flavour() == "openmpi":
        assert "n2:2,10.0.0.1:2" in cmd and "--enable-recovery" in cmd
        assert cmd[cmd.index("--map-by") + 1] == "node"


def test_step_per_round_refuses_osu_bw(capsys):
    rc = main(["n[1-4]", "--launcher", "mpirun", "--test", "osu_bw", "--osu-bw", sys.executable,
               "--step-per", "round"])
    err = capsys.readouterr().err
    assert rc == 2 and "--step-per round" in err and "Traceback" not in err


@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.parametrize("fault", ["stall", "die"])
def test_real_pairs_job_charges_a_stalled_or_dead_rank_to_its_pair_only(fault):
    """Three pairs in one mpirun job; pair 1's transmitter stalls or dies (txrx's --fault)
    mid-stream while the others stream: pair 1 has no figure, pairs 0 and 2 keep theirs, and
    the step ends within the pairs' limit."""
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH")
    m = Txrx(nmsg=400, timeout=4, extra=["--fault", f"{fault}:1:50"])
    r = RoundStepRunner(m, all_local=True, pair_timeout=12, fault_pair=1)
    names = ["a", "b", "c", "d", "e", "f"]
    runs = r._step(Round(1, "screen", [0, 2, 4], [1, 3, 5], names), 0,
                   [("a", "b"), ("c", "d"), ("e", "f")])
    want = TIMEOUT if fault == "stall" else FAILED
    assert [x[0] for x in runs] == [OK, want, OK], runs
    assert runs[0][1] > 0 and runs[2][1] > 0
    if fault == "stall":
        assert "no result within 12 s" in runs[1][3]
    assert runs[1][2] < 12 + r.step_grace

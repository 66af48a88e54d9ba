"""The all-to-many degradation checks each catch the fault they exist for, on real MPI runs (2
ranks as 2 nodes, as the suite runs them on local), with AllToManyScalingTest's own verdicts
(scenario_math):

* within a run: healthy runs of `alltomany -n 32 -r 30` pass it 10 times of 10; runs whose
  posting cost per iteration grows from iteration 17 on (`-i 17:USEC`, USEC chosen so that the
  time per iteration doubles from 2 to 32 iterations) fail it 10 times of 10;
* across runs (the all-to-many (Cori) notes' table): 10 rounds of healthy runs of 2, 8, 16 and
  32 iterations pass it at local's limit (alltomany_max_run_growth); runs of 16 and 32
  iterations slowed in every iteration (`-i 1:USEC`, which no run shows within itself) beside
  each round's healthy 2- and 8-iteration runs fail it 10 times of 10.

Measured on the shared 2-core host: see docs/c-programs.md; each run prints its figures
(pytest -s)."""

from __future__ import annotations

import statistics

import pytest
from alltomany_trials import partition_run_limit, run_across_trials, run_trials

pytestmark = [pytest.mark.mpi, pytest.mark.slow, pytest.mark.timing]


def _launch(mpirun, c_build):
    def launch(argv: list[str]) -> str:
        return mpirun(2, [c_build / "alltomany", *argv], timeout=120, check=True).stdout
    return launch


def test_healthy_runs_pass_and_a_2x_growth_fails(mpirun, c_build):
    trials = run_trials(_launch(mpirun, c_build), nprocs=2, ppn=1, count=10)
    print("\n" + trials.shown())
    assert trials.passing(trials.healthy) == trials.healthy, trials.shown()
    assert trials.passing(trials.faulty) == [], trials.shown()
    # it is the growth the check is claimed to catch, not a far larger one
    assert 1.6 <= statistics.median(f.end_to_end for f in trials.faulty) <= 3.0, trials.shown()


def test_healthy_rounds_pass_across_runs_and_slowed_runs_fail(mpirun, c_build):
    trials = run_across_trials(_launch(mpirun, c_build), nprocs=2, ppn=1, count=10,
                               limit=partition_run_limit("local"))
    print("\n" + trials.shown())
    assert trials.passing(trials.healthy) == trials.healthy, trials.shown()
    assert trials.passing(trials.faulty) == [], trials.shown()


def test_injection_is_refused_when_it_makes_no_sense(mpirun, c_build):
    for bad in ("17", "0:10", "17:0", "x:1", "17:-5", "17:nan", "17:inf", "17:1e9", "17:2x"):
        proc = mpirun(2, [c_build / "alltomany", "-n", 2, "-i", bad], timeout=60)
        assert proc.returncode == 2, (bad, proc.stdout, proc.stderr)
        assert "-i expects K:USEC" in proc.stderr and f"not '{bad}'" in proc.stderr, proc.stderr
    proc = mpirun(2, [c_build / "alltomany", "-n", 2, "-r", 0], timeout=60)
    assert proc.returncode == 2 and "-r expects a number of repetitions" in proc.stderr

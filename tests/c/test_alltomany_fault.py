"""The all-to-many degradation check catches the fault it exists for, on real MPI runs: healthy
runs of `alltomany -n 32 -r 30` (2 ranks as 2 nodes, as the suite runs it on local) pass it 10
times of 10, and runs whose posting cost per iteration grows from iteration 17 on (`-i 17:USEC`,
USEC chosen so that the time per iteration doubles from 2 to 32 iterations) fail it 10 times of
10. The verdict is AllToManyScalingTest's own (scenario_math.scaling, MAX_GROWTH).

Measured on the shared 2-core host (2026-11-24): see docs/c-programs.md; each run prints its
figures (pytest -s)."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

from fabrictest.parsers.alltomany import missing, parse_alltomany

# the suite's pure arithmetic (no ReFrame): the check's own verdict
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "reframe_tests"))
from scenario_math import MAX_GROWTH, Scaling, scaling  # noqa: E402

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

TRIALS = 10
REPS = 30
FEW, MANY, FROM = 2, 32, 17  # the check's iteration counts; the fault from iteration 17 on


def _trial(mpirun, c_build, inject: str | None = None) -> tuple[Scaling, float]:
    """One `-n 32 -r 10` run: the check's figures, and the median time per iteration over the
    first 2 iterations."""
    argv = [c_build / "alltomany", "-p", 1, "-b", 32, "-n", MANY, "-r", REPS]
    if inject:
        argv += ["-i", inject]
    proc = mpirun(2, argv, timeout=120, check=True)
    summary = parse_alltomany(proc.stdout)
    assert missing(summary, iterations=MANY, nprocs=2, repetitions=REPS) == []
    reps = [(t.cumulative("end_to_end"), t.cumulative("irecv")) for t in summary.times]
    return scaling(reps, FEW, MANY), statistics.median(e[FEW] / FEW for e, _ in reps)


def _shown(figures: list[Scaling]) -> str:
    return ", ".join(f"{f.end_to_end:.2f}+-{f.end_to_end_noise:.2f}/{f.irecv:.2f}+-{f.irecv_noise:.2f}"
                     for f in figures)


def test_healthy_runs_pass_and_a_2x_growth_fails(mpirun, c_build):
    healthy_runs = [_trial(mpirun, c_build) for _ in range(TRIALS)]
    healthy = [f for f, _ in healthy_runs]
    print(f"\nhealthy (end-to-end/irecv growth +- noise): {_shown(healthy)}")
    assert [f for f in healthy if f.problem(MAX_GROWTH, FEW, MANY)] == [], _shown(healthy)

    # the delay that doubles the time per iteration from 2 to 32 iterations: 16 delayed
    # iterations of 32 add d/2 per iteration to a growth g0 of the per-iteration time b2
    g0 = statistics.median(f.end_to_end for f in healthy)
    b2 = statistics.median(few for _, few in healthy_runs)
    usec = round(2 * b2 * (2.0 - g0) * 1e6, 3)
    faulty = [_trial(mpirun, c_build, f"{FROM}:{usec}")[0] for _ in range(TRIALS)]
    print(f"-i {FROM}:{usec} (b2 {b2 * 1e6:.2f} us, g0 {g0:.2f}): {_shown(faulty)}")
    assert all(f.problem(MAX_GROWTH, FEW, MANY) for f in faulty), _shown(faulty)
    # it is the growth the check is claimed to catch, not a far larger one
    assert 1.6 <= statistics.median(f.end_to_end for f in faulty) <= 3.0, _shown(faulty)


def test_injection_is_refused_when_it_makes_no_sense(mpirun, c_build):
    for bad in ("17", "0:10", "17:0", "x:1", "17:-5", "17:nan", "17:inf", "17:1e9", "17:2x"):
        proc = mpirun(2, [c_build / "alltomany", "-n", 2, "-i", bad], timeout=60)
        assert proc.returncode == 2, (bad, proc.stdout, proc.stderr)
        assert "-i expects K:USEC" in proc.stderr and f"not '{bad}'" in proc.stderr, proc.stderr
    proc = mpirun(2, [c_build / "alltomany", "-n", 2, "-r", 0], timeout=60)
    assert proc.returncode == 2 and "-r expects a number of repetitions" in proc.stderr

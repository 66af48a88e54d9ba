"""Trials of the all-to-many degradation checks on real runs of `alltomany` (any launcher), each
judged by AllToManyScalingTest's own verdicts (scenario_math): rounds of healthy runs of 2, 8,
16 and 32 iterations; runs of 32 iterations with a posting delay from iteration 17 on that
doubles the time per iteration from 2 to 32 iterations (the check within a run); runs of 16 and
32 iterations slowed from their first iteration, beside the round's healthy 2- and 8-iteration
runs (the check across runs, the notes' table). Used on local (tests/c) and on the vcluster
(tests/vcluster)."""

from __future__ import annotations

import runpy
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fabrictest.parsers.alltomany import missing, parse_alltomany, per_iteration

# the suite's pure arithmetic (no ReFrame): the checks' own verdicts
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reframe_tests"))
from scenario_math import (  # noqa: E402
    MAX_GROWTH,
    AcrossRuns,
    RunLevel,
    Scaling,
    across_runs,
    run_level,
    scaling,
)

REPS = 30
FEW, MANY, FROM = 2, 32, 17  # the check's iteration counts; the fault from iteration 17 on
SHORT, LONG = (2, 8), (16, 32)  # the runs compared across

#: runs `alltomany ARGS...` on the launcher's ranks and returns its stdout
Launch = Callable[[list[str]], str]


def partition_run_limit(system: str) -> float:
    """The partition's ``alltomany_max_run_growth`` (config/reframe/systems/<system>.py), else
    the default the family takes (MAX_GROWTH)."""
    config = runpy.run_path(str(ROOT / "config" / "reframe" / "systems" / f"{system}.py"))
    extras = config["system"]["partitions"][0]["extras"]
    return float(extras.get("alltomany_max_run_growth", MAX_GROWTH))


@dataclass
class Trials:
    """The check within a run: healthy and faulty 32-iteration runs."""

    healthy: list[Scaling]
    faulty: list[Scaling]
    usec: float  # the injected delay per iteration from iteration 17 on

    def shown(self) -> str:
        def row(figures):
            return ", ".join(f"{f.end_to_end:.2f}+-{f.end_to_end_noise:.2f}/"
                             f"{f.irecv:.2f}+-{f.irecv_noise:.2f}" for f in figures)
        return (f"within a run, healthy (end-to-end/posting-irecv growth +- noise): "
                f"{row(self.healthy)}\n-i {FROM}:{self.usec}: {row(self.faulty)}")

    def passing(self, figures: list[Scaling]) -> list[Scaling]:
        return [f for f in figures if f.problem(MAX_GROWTH, FEW, MANY) is None]


@dataclass
class RunTrials:
    """The check across runs: healthy rounds, and rounds with their longer runs slowed."""

    healthy: list[AcrossRuns]
    faulty: list[AcrossRuns]
    usec: float  # the delay per iteration of every iteration of the 16- and 32-iteration runs
    limit: float

    def shown(self) -> str:
        def runs(figures):
            return ", ".join(f"{f.end_to_end:.2f}/{f.irecv:.2f}" for f in figures)
        return (f"across runs (limit {self.limit:g}x), healthy (end-to-end/posting-irecv): "
                f"{runs(self.healthy)}\n-i 1:{self.usec} in the 16- and 32-iteration runs: "
                f"{runs(self.faulty)}")

    def passing(self, figures: list[AcrossRuns]) -> list[AcrossRuns]:
        return [f for f in figures if f.problem(self.limit) is None]


def run(launch: Launch, nprocs: int, ppn: int, iterations: int, reps: int,
        inject: str | None = None):
    """One `-n ITERATIONS -r REPS` run, whole: its summary block."""
    argv = ["-p", str(ppn), "-b", "32", "-n", str(iterations), "-r", str(reps)]
    summary = parse_alltomany(launch(argv + (["-i", inject] if inject else [])))
    assert missing(summary, iterations=iterations, nprocs=nprocs, repetitions=reps) == []
    return summary


def level(summary) -> RunLevel:
    return run_level(summary.iterations, per_iteration(summary, "end_to_end"),
                     per_iteration(summary, "irecv"))


def trial(launch: Launch, nprocs: int, ppn: int, inject: str | None = None,
          reps: int = REPS) -> tuple[Scaling, float]:
    """One `-n 32 -r REPS` run: the check's figures, and the median time per iteration over
    the first 2 iterations."""
    summary = run(launch, nprocs, ppn, MANY, reps, inject)
    reps = [(t.cumulative("end_to_end"), t.cumulative("irecv")) for t in summary.times]
    return scaling(reps, FEW, MANY), statistics.median(e[FEW] / FEW for e, _ in reps)


def run_trials(launch: Launch, nprocs: int, ppn: int, count: int, reps: int = REPS) -> Trials:
    """``count`` healthy runs, then ``count`` with the delay that doubles the time per
    iteration: 16 delayed iterations of 32 add d/2 per iteration to the healthy growth g0 of
    the per-iteration time b2, so d = 2 b2 (2 - g0). ``reps`` repetitions a run."""
    healthy_runs = [trial(launch, nprocs, ppn, reps=reps) for _ in range(count)]
    healthy = [f for f, _ in healthy_runs]
    g0 = statistics.median(f.end_to_end for f in healthy)
    b2 = statistics.median(few for _, few in healthy_runs)
    usec = round(2 * b2 * (2.0 - g0) * 1e6, 3)
    faulty = [trial(launch, nprocs, ppn, f"{FROM}:{usec}", reps)[0] for _ in range(count)]
    return Trials(healthy, faulty, usec)


def run_across_trials(launch: Launch, nprocs: int, ppn: int, count: int, limit: float,
                      reps: int = REPS, faulty_reps: int | None = None) -> RunTrials:
    """``count`` rounds of healthy runs of 2, 8, 16 and 32 iterations (``reps`` repetitions
    each); then, beside each round's healthy 2- and 8-iteration runs, runs of 16 and 32
    iterations (``faulty_reps``, default ``reps``) slowed in every iteration by twice the limit
    times the short runs' median level, so that they are about 2 x limit + 1 times slower."""
    rounds = [[level(run(launch, nprocs, ppn, n, reps)) for n in (*SHORT, *LONG)]
              for _ in range(count)]
    healthy = [across_runs(levels) for levels in rounds]
    base = statistics.median(min(lv.end_to_end for lv in levels if lv.iterations in SHORT)
                             for levels in rounds)
    usec = round(2 * limit * base * 1e6, 3)
    faulty = []
    for levels in rounds:
        slowed = [level(run(launch, nprocs, ppn, n, faulty_reps or reps, f"1:{usec}"))
                  for n in LONG]
        faulty.append(across_runs([lv for lv in levels if lv.iterations in SHORT] + slowed))
    return RunTrials(healthy, faulty, usec, limit)

"""Trials of the all-to-many degradation check on real runs of `alltomany` (any launcher):
healthy runs, then runs with a posting delay that doubles the time per iteration from 2 to 32
iterations, each judged by AllToManyScalingTest's own verdict (scenario_math.scaling,
MAX_GROWTH). Used on local (tests/c) and on the vcluster (tests/vcluster)."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fabrictest.parsers.alltomany import missing, parse_alltomany

# the suite's pure arithmetic (no ReFrame): the check's own verdict
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reframe_tests"))
from scenario_math import MAX_GROWTH, Scaling, scaling  # noqa: E402

REPS = 30
FEW, MANY, FROM = 2, 32, 17  # the check's iteration counts; the fault from iteration 17 on

#: runs `alltomany ARGS...` on the launcher's ranks and returns its stdout
Launch = Callable[[list[str]], str]


@dataclass
class Trials:
    healthy: list[Scaling]
    faulty: list[Scaling]
    usec: float  # the injected delay per iteration from iteration 17 on

    def shown(self) -> str:
        def row(figures):
            return ", ".join(f"{f.end_to_end:.2f}+-{f.end_to_end_noise:.2f}/"
                             f"{f.irecv:.2f}+-{f.irecv_noise:.2f}" for f in figures)
        return (f"healthy (end-to-end/posting-irecv growth +- noise): {row(self.healthy)}\n"
                f"-i {FROM}:{self.usec}: {row(self.faulty)}")

    def passing(self, figures: list[Scaling]) -> list[Scaling]:
        return [f for f in figures if f.problem(MAX_GROWTH, FEW, MANY) is None]


def trial(launch: Launch, nprocs: int, ppn: int, inject: str | None = None
          ) -> tuple[Scaling, float]:
    """One `-n 32 -r 30` run: the check's figures, and the median time per iteration over the
    first 2 iterations."""
    argv = ["-p", str(ppn), "-b", "32", "-n", str(MANY), "-r", str(REPS)]
    summary = parse_alltomany(launch(argv + (["-i", inject] if inject else [])))
    assert missing(summary, iterations=MANY, nprocs=nprocs, repetitions=REPS) == []
    reps = [(t.cumulative("end_to_end"), t.cumulative("irecv")) for t in summary.times]
    return scaling(reps, FEW, MANY), statistics.median(e[FEW] / FEW for e, _ in reps)


def run_trials(launch: Launch, nprocs: int, ppn: int, count: int) -> Trials:
    """``count`` healthy runs, then ``count`` with the delay that doubles the time per
    iteration: 16 delayed iterations of 32 add d/2 per iteration to the healthy growth g0 of
    the per-iteration time b2, so d = 2 b2 (2 - g0)."""
    healthy_runs = [trial(launch, nprocs, ppn) for _ in range(count)]
    healthy = [f for f, _ in healthy_runs]
    g0 = statistics.median(f.end_to_end for f in healthy)
    b2 = statistics.median(few for _, few in healthy_runs)
    usec = round(2 * b2 * (2.0 - g0) * 1e6, 3)
    faulty = [trial(launch, nprocs, ppn, f"{FROM}:{usec}")[0] for _ in range(count)]
    return Trials(healthy, faulty, usec)

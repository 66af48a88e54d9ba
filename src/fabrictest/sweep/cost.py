"""What a sweep's rounds cost on Slurm: step launches, waves, the look after each round.

The simulator measures nothing but the statistics, so its rounds figure hides the scheduler.
Here a sweep's wall time and its job steps are predicted for the two ways of launching a
round (the figures below are written once, with where they come from):

* ``per run`` (today's runners.py): every run is its own ``srun`` step; a round's lanes start
  ``max_concurrent`` at a time (waves), each lane two runs one after the other, each run
  paying a step launch; slurmctld creates steps one at a time, so a round also takes at least
  its step count times one launch. Steps per sweep: twice the pairs of every round (Slurm's
  ``MaxStepCount`` is 40,000 a job by default: at 100,000 nodes the first round reaches it).
* ``per round`` (issue 41 item 2): one MPI step per direction over the round's nodes, every
  pair inside it at once; its launch fans out over Slurm's tree of ``TreeWidth`` daemons, one
  launch time per level. Steps per sweep: 2 per round.

Both add ``ROUND_SYNC_S`` per round: the sweep waits for the round's last run and decides
before the next round starts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: one empty ``srun`` step, start to end: 0.297 s for a counter snapshot measured at 2.16x an
#: empty step (bench/bench_counters.py, vcluster of 4 nodes, 2026-11-24: 0.137 s)
STEP_LAUNCH_S = 0.297 / 2.16
#: Slurm's default ``TreeWidth`` (slurm.conf): the fan-out of a step's launch over its nodes
TREE_WIDTH = 50
#: Slurm's default ``MaxStepCount`` (slurm.conf): job steps one job may start
MAX_STEP_COUNT = 40_000
#: the wait for a round's last run and the look after it (an assumption: the simulator's own
#: decision at 100,000 nodes takes well under a second on one core)
ROUND_SYNC_S = 1.0


@dataclass(frozen=True)
class Cost:
    """A predicted sweep: seconds, job steps, and the round whose steps pass MaxStepCount."""

    seconds: float
    steps: int
    over_steps_at: int | None  # round index (0-based) where MaxStepCount is passed, or None

    def text(self, hms) -> str:
        over = ("" if self.over_steps_at is None else
                f", past MaxStepCount {MAX_STEP_COUNT:,} in round {self.over_steps_at}")
        return f"{hms(self.seconds)} ({self.steps:,} steps{over})"


def _tree_levels(nodes: int) -> int:
    return max(1, math.ceil(math.log(max(nodes, 2), TREE_WIDTH)))


def per_run(pairs: Sequence[int], run_s: float, max_concurrent: int) -> Cost:
    """One ``srun`` step per run (both directions of a lane one after the other)."""
    seconds, steps, over = 0.0, 0, None
    for r, p in enumerate(pairs):
        if p <= 0:
            continue
        waves = math.ceil(p / max(1, min(max_concurrent, p)))
        launch_bound = 2 * p * STEP_LAUNCH_S  # slurmctld creates steps one at a time
        seconds += max(waves * 2 * (run_s + STEP_LAUNCH_S), launch_bound) + ROUND_SYNC_S
        steps += 2 * p
        if over is None and steps > MAX_STEP_COUNT:
            over = r
    return Cost(seconds, steps, over)


def per_round(pairs: Sequence[int], run_s: float) -> Cost:
    """One MPI step per direction over the round's nodes, every pair inside it at once."""
    seconds, steps = 0.0, 0
    for p in pairs:
        if p <= 0:
            continue
        seconds += 2 * (run_s + _tree_levels(2 * p) * STEP_LAUNCH_S) + ROUND_SYNC_S
        steps += 2
    return Cost(seconds, steps, None if steps <= MAX_STEP_COUNT else 0)


__all__ = ["MAX_STEP_COUNT", "ROUND_SYNC_S", "STEP_LAUNCH_S", "TREE_WIDTH", "Cost",
           "per_round", "per_run"]

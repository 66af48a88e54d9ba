"""Each job's expected seconds, and where the figure comes from.

A case ReFrame runs itself (``local``: no job, a ``true`` judging other cases' runs) costs
nothing: ``local (no job)``, 0 s. Otherwise, in order of preference:

* ``measured``: the case's run time in a ReFrame run report of this system given with
  ``--from-run REPORT`` (``time_run``: the job's own time, submission to end);
* ``sweep cost``: for the sweep, ``fabric-sweep``'s own prediction of its rounds on Slurm
  (:mod:`fabrictest.sweep.cost`, one MPI step per direction and round, the screening
  rounds its job script gives ``fabric-sweep`` (``--rounds``), every node paired), at
  ``--pair-seconds`` per run;
* ``time limit``: the family's own default, the time its job asks Slurm for (``#SBATCH
  --time``): an upper bound, the figure a maintenance window is booked with.

No reference file records how long a case ran (``measured_with`` holds the shaping variables'
values: sizes, counts, repetitions, not seconds), so a plan without ``--from-run`` is a plan of
time limits; the table says so job by job.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sweep import cost
from .jobs import Job

#: one counter snapshot on every node of a job: 2.16 empty steps (sweep/cost.py, measured by
#: bench/bench_counters.py)
SNAPSHOT_S = 2.16 * cost.STEP_LAUNCH_S
#: seconds of one sweep run unless --pair-seconds says (bench/bench_sweep.py's 10 s per run)
DEFAULT_PAIR_SECONDS = 10.0


@dataclass(frozen=True)
class Expected:
    seconds: float
    source: str  # "measured", "sweep cost", "time limit"
    over_limit: bool = False  # the figure exceeds what the job asks Slurm for


def sweep_seconds(nodes: int, rounds: int, pair_seconds: float) -> float:
    """The sweep's planned rounds over ``nodes`` nodes (every node paired in each)."""
    return cost.per_round([nodes // 2] * rounds, pair_seconds).seconds


def expected(job: Job, measured: dict[str, float], pair_seconds: float,
             sweep_rounds: int) -> Expected | None:
    """``job``'s expected seconds (None: nothing says, the job has no time limit)."""
    limit = job.limit_s
    if job.case.local:
        return Expected(0.0, "local (no job)")
    if job.case.name in measured:
        secs, source = measured[job.case.name], "measured"
    elif job.step == "sweep":
        secs, source = sweep_seconds(job.nodes, sweep_rounds, pair_seconds), "sweep cost"
    elif limit is not None:
        return Expected(limit, "time limit")
    else:
        return None
    return Expected(secs, source, over_limit=limit is not None and secs > limit)


def counters_seconds(job: Job) -> float:
    """The counter snapshots' share of ``job`` (stage 3): its snapshots, one step each."""
    return job.case.counter_snapshots * SNAPSHOT_S


__all__ = ["DEFAULT_PAIR_SECONDS", "SNAPSHOT_S", "Expected", "counters_seconds", "expected",
           "sweep_seconds"]

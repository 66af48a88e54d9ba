"""The plan's wall time: the jobs packed onto the partition's nodes, step after step.

A step starts when the one before it has ended (the notes' hierarchy: a local test means
nothing until every edge passed). Within a step, jobs start in the plan's order as soon as
their nodes are free (every benchmark job holds its nodes whole, ``--exclusive``) and fewer
than the partition's ``max_jobs`` are running (ReFrame's asynchronous policy): a job naming
its nodes waits for those, one that names none takes the first free ones in name order. This
is an idealised Slurm (no other users, no start-up time): the wall time of an empty machine.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from .jobs import STEPS, Job


@dataclass(frozen=True)
class Slot:
    job: Job
    seconds: float
    start: float
    end: float


def _pack(jobs: list[tuple[Job, float]], all_nodes: list[str], max_jobs: int,
          t0: float) -> list[Slot]:
    free = set(all_nodes)
    order = {n: i for i, n in enumerate(all_nodes)}
    running: list[tuple[float, int, list[str]]] = []
    slots: list[Slot] = []
    pending = list(jobs)
    now, seq = t0, 0
    while pending:
        started = False
        for i, (job, secs) in enumerate(pending):
            if len(running) >= max(1, max_jobs):
                break
            if job.nodelist is not None:
                want = [n for n in job.nodelist if n in order]
                if len(want) < len(job.nodelist) or not free.issuperset(want):
                    continue
            else:
                if len(free) < job.nodes:
                    continue
                want = sorted(free, key=order.__getitem__)[:job.nodes]
            free.difference_update(want)
            heapq.heappush(running, (now + secs, seq, want))
            seq += 1
            slots.append(Slot(job, secs, now, now + secs))
            pending.pop(i)
            started = True
            break
        if started:
            continue
        if not running:  # nothing runs and nothing fits: a job larger than the machine
            job, secs = pending.pop(0)
            slots.append(Slot(job, secs, now, now + secs))
            now += secs
            continue
        now, _s, nodes = heapq.heappop(running)
        free.update(nodes)
    return slots


def schedule(jobs: list[tuple[Job, float]], all_nodes: list[str], max_jobs: int) -> list[Slot]:
    """Every job's start and end (seconds from the plan's start), step after step."""
    slots: list[Slot] = []
    t = 0.0
    for step, _stage in STEPS:
        mine = [(j, s) for j, s in jobs if j.step == step]
        if not mine:
            continue
        packed = _pack(mine, all_nodes, max_jobs, t)
        slots.extend(packed)
        t = max(s.end for s in packed)
    return slots


__all__ = ["Slot", "schedule"]

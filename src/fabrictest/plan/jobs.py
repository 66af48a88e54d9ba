"""The dry run's cases as the acceptance's jobs, each in its stage and step of the Slingshot
acceptance notes' order: stage 1 the pre-flight (NIC health on every node); stage 2 the
performance, hierarchical: edge (nodes of one switch), local (one group), global (across
groups), bisection (across the top), then the sweep over every node; stage 3 the counters,
read around every multi-node job of stage 2 (their snapshots are in each job's script).

A job's step comes from its nodes: the node list its script names (``#SBATCH --nodelist``),
held against the topology's node sets (the same ``derive_node_sets`` the families use); a job
that names no nodes (Slurm chooses) by its node count: what fits in a switch, in a group, or
more. The health family, the bisection and the sweep are their own steps. A case ReFrame runs
itself (``local``: AllToManyScalingTest's judgement over the AllToManyTest runs) goes in the
last step of the cases it depends on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..parsers.hostlists import expand
from ..parsers.node_sets import NodeSets
from .dry_run import Case

#: the notes' order: (step, stage)
STEPS = (("preflight", 1), ("edge", 2), ("local", 2), ("global", 2), ("bisection", 2),
         ("sweep", 2))
STAGE_OF = dict(STEPS)
PREFLIGHT_FAMILIES = ("NicHealthTest",)
BISECTION_FAMILIES = ("BisectionTest",)
SWEEP_FAMILIES = ("SweepTest",)


@dataclass
class Job:
    case: Case
    step: str
    nodes: int
    nodelist: list[str] | None  # the nodes its script names; None: Slurm chooses
    limit_s: float | None  # the time it asks for (#SBATCH --time, else the case's limit)
    slurm: bool

    @property
    def stage(self) -> int:
        return STAGE_OF[self.step]

    def node_set(self) -> str:
        if self.case.local:
            return "local (no allocation)"
        return self.case.sbatch.get("nodelist") or f"any {self.nodes}"


def parse_time(text: str) -> float | None:
    """Slurm's ``--time`` (``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``) in
    seconds; None for anything else."""
    days, dash, rest = text.strip().rpartition("-")
    try:
        parts = [float(p) for p in rest.split(":")]
        day_s = float(days) * 86400 if dash else 0.0
    except ValueError:
        return None
    if dash:  # after a day count: hours first
        weights = (3600, 60, 1)
    else:
        weights = {1: (60,), 2: (60, 1), 3: (3600, 60, 1)}.get(len(parts), ())
    if not weights or len(parts) > len(weights) or any(p < 0 for p in parts):
        return None
    secs = day_s + sum(p * w for p, w in zip(parts, weights, strict=False))
    return secs if math.isfinite(secs) else None


def _nodes(case: Case) -> int:
    if case.local:  # ReFrame runs it itself: it holds no node of the partition
        return 0
    if "nodes" in case.sbatch:
        return int(case.sbatch["nodes"].split("-")[-1])
    if case.tasks_per_node:
        return max(1, math.ceil(case.num_tasks / case.tasks_per_node))
    return 1


def _step(case: Case, nodes: int, named: list[str] | None, sets: NodeSets) -> str:
    if case.family in PREFLIGHT_FAMILIES or "preflight" in case.tags:
        return "preflight"
    if case.family in SWEEP_FAMILIES:
        return "sweep"
    if case.family in BISECTION_FAMILIES:
        return "bisection"
    switch, group = sets.sets.get("switch"), sets.sets.get("group")
    if named is not None:
        chosen = set(named)
        if switch and chosen <= set(switch):
            return "edge"
        if group and chosen <= set(group):
            return "local"
        return "global"
    if nodes <= (len(switch) if switch else 2):
        return "edge"
    if group and nodes <= len(group):
        return "local"
    return "global"


def job_of(case: Case, sets: NodeSets) -> Job:
    """``case`` as a job of the plan."""
    nodes = _nodes(case)
    text = case.sbatch.get("nodelist")
    named = expand(text, "--nodelist") if text else None
    limit = parse_time(case.sbatch["time"]) if "time" in case.sbatch else case.time_limit_s
    return Job(case=case, step=_step(case, nodes, named, sets), nodes=nodes, nodelist=named,
               limit_s=limit, slurm=bool(case.sbatch))


def follow_dependencies(jobs: list[Job]) -> list[Job]:
    """Each local job in the latest step of the jobs it depends on (it runs after them)."""
    rank = {step: i for i, (step, _stage) in enumerate(STEPS)}
    step_of = {j.case.unique_name: j.step for j in jobs if j.case.unique_name}
    for j in jobs:
        steps = [step_of[d] for d in j.case.depends_on if d in step_of]
        if j.case.local and steps:
            j.step = max(steps, key=rank.__getitem__)
    return jobs


def ordered(jobs: list[Job]) -> list[Job]:
    """The notes' order of steps; within a step, the dry run's order."""
    rank = {step: i for i, (step, _stage) in enumerate(STEPS)}
    return sorted(jobs, key=lambda j: rank[j.step])  # stable


__all__ = ["STAGE_OF", "STEPS", "Job", "follow_dependencies", "job_of", "ordered",
           "parse_time"]

"""The plan as a text table and as JSON (``--json FILE``).

``--json`` never writes over a file the plan did not write: an existing path is replaced only
when it is a regular file holding a plan (``"format": "fabrictest-plan/1"``); anything else (a
user's file, a link, a device) is refused before the dry run starts. The file is written whole
(``fabrictest.sweep.outfile``: a temporary file beside it, renamed over it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..sweep.outfile import OutputPathError, target_problem, write_whole
from .jobs import STEPS
from .minutes import Expected
from .schedule import Slot

FORMAT = "fabrictest-plan/1"
#: the acceptance's goal: its three stages in this much wall time (issue 42)
GOAL_S = 2 * 3600.0


@dataclass
class Plan:
    system: str
    topology: str
    nodes: int
    dry_run_s: float
    slots: list[Slot]
    expected: dict[str, Expected]  # case name -> its expected figure
    counters_s: dict[str, float]  # case name -> its counter snapshots' seconds
    unplanned: list[str]  # cases with no figure at all

    def wall_s(self) -> float:
        return max((s.end for s in self.slots), default=0.0)

    def node_hours(self, slots=None) -> float:
        return sum(s.job.nodes * s.seconds for s in (self.slots if slots is None else slots)) \
            / 3600

    def steps(self) -> list[dict]:
        out = []
        for step, stage in STEPS:
            mine = [s for s in self.slots if s.job.step == step]
            if mine:
                out.append({"step": step, "stage": stage, "jobs": len(mine),
                            "node_hours": self.node_hours(mine),
                            "wall_s": max(s.end for s in mine) - min(s.start for s in mine)})
        return out

    def dominant(self) -> tuple[dict, Slot]:
        step = max(self.steps(), key=lambda d: d["wall_s"])
        job = max(self.slots, key=lambda s: s.job.nodes * s.seconds)
        return step, job


def _hm(seconds: float) -> str:
    m = int(round(seconds / 60))
    return f"{m // 60}h{m % 60:02d}" if m >= 60 else f"{m} min"


def text(plan: Plan) -> str:
    rows = [("#", "stage", "step", "job", "nodes", "node set", "min", "from", "start")]
    for i, s in enumerate(plan.slots, 1):
        e = plan.expected[s.job.case.name]
        note = e.source + (" (over its limit)" if e.over_limit else "")
        rows.append((str(i), str(s.job.stage), s.job.step, s.job.case.name, str(s.job.nodes),
                     s.job.node_set(), f"{s.seconds / 60:.1f}", note, _hm(s.start)))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    right = {0, 4, 6}
    lines = [f"fabric-plan: {plan.system}, {plan.nodes:,} nodes ({plan.topology}); job list "
             f"from reframe --dry-run ({plan.dry_run_s:.0f} s)"]
    for r in rows:
        lines.append("  ".join(v.rjust(w) if c in right else v.ljust(w)
                               for c, (v, w) in enumerate(zip(r, widths, strict=True))).rstrip())
    lines.append("")
    for d in plan.steps():
        lines.append(f"stage {d['stage']} {d['step']:<9} {d['jobs']:3d} jobs  "
                     f"{d['node_hours']:10,.1f} node-hours  wall {_hm(d['wall_s'])}")
    counters = sum(plan.counters_s.values())
    snapshots = sum(s.job.case.counter_snapshots for s in plan.slots)
    lines.append(f"stage 3 counters  {snapshots} snapshots around the multi-node jobs, "
                 f"{counters / 60:.1f} min inside them")
    wall = plan.wall_s()
    sources: dict[str, int] = {}
    for e in plan.expected.values():
        sources[e.source] = sources.get(e.source, 0) + 1
    step, job = plan.dominant()
    lines.append(f"total: {len(plan.slots)} jobs, {plan.node_hours():,.1f} node-hours, wall "
                 f"time {_hm(wall)} against the goal of {_hm(GOAL_S)} "
                 f"({'fits' if wall <= GOAL_S else f'{wall / GOAL_S:.1f}x over'}); minutes "
                 "from " + ", ".join(f"{k} ({v})" for k, v in sorted(sources.items())))
    lines.append(f"dominates: the {step['step']} step ({_hm(step['wall_s'])} of "
                 f"{_hm(wall)} wall), the most node-hours: {job.job.case.name} "
                 f"({job.job.nodes:,} nodes x {job.seconds / 60:.0f} min = "
                 f"{job.job.nodes * job.seconds / 3600:,.0f} node-hours)")
    if plan.unplanned:
        lines.append(f"not planned (no time limit, no measurement): {', '.join(plan.unplanned)}")
    return "\n".join(lines) + "\n"


def to_dict(plan: Plan) -> dict:
    step, job = plan.dominant()
    return {
        "format": FORMAT, "system": plan.system, "topology": plan.topology,
        "nodes": plan.nodes, "dry_run_s": plan.dry_run_s,
        "jobs": [{"stage": s.job.stage, "step": s.job.step, "job": s.job.case.name,
                  "family": s.job.case.family, "nodes": s.job.nodes,
                  "node_set": s.job.node_set(), "seconds": s.seconds,
                  "source": plan.expected[s.job.case.name].source,
                  "over_limit": plan.expected[s.job.case.name].over_limit,
                  "limit_s": s.job.limit_s, "counter_snapshots": s.job.case.counter_snapshots,
                  "counters_s": plan.counters_s[s.job.case.name],
                  "start_s": s.start, "end_s": s.end} for s in plan.slots],
        "steps": plan.steps(),
        "total": {"jobs": len(plan.slots), "node_hours": plan.node_hours(),
                  "wall_s": plan.wall_s(), "goal_s": GOAL_S,
                  "dominant_step": step["step"], "dominant_job": job.job.case.name},
        "unplanned": plan.unplanned,
    }


def json_target_problem(path: str) -> str | None:
    """Why ``--json path`` must not be written, or None (see the module docstring)."""
    problem = target_problem(path)
    if problem:
        return problem
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError):
        return "exists and is not a plan fabric-plan wrote: not replaced"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return "exists and is not a plan fabric-plan wrote: not replaced"
    return None


def write_json(plan: Plan, path: str) -> None:
    problem = json_target_problem(path)
    if problem:
        raise OutputPathError(problem)

    def write(fh):
        json.dump(to_dict(plan), fh, indent=1)
        fh.write("\n")

    write_whole(path, write)


__all__ = ["FORMAT", "GOAL_S", "Plan", "json_target_problem", "text", "to_dict", "write_json"]

"""The sweep: screening rounds, then extra rounds for what is still ambiguous.

`rounds` screening matchings (default 2) measure every node with new partners, both
directions of every pair. After each round from then on, every node-direction is weighed
(estimate.py): cleared, slow, unreachable, or ambiguous. Ambiguous ones are measured again,
each with a cleared partner it has not met, in extra rounds, until none is ambiguous or
`max_rounds` (default 8) are used; each extra round says why it runs. Ctrl-C stops the sweep
with the verdict on what was measured so far.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from . import cost
from .estimate import (
    AMBIGUOUS,
    CLEARED,
    SLOW,
    UNREACHABLE,
    Evidence,
    Level,
    VerdictParams,
    estimate_level,
    weigh,
)
from .expectation import Expectation
from .outfile import write_whole
from .runners import RoundInterrupted, Runner
from .runs import OK, Round, RunTable
from .schedule import extra_round, screening_count, screening_rounds
from .topology import attribute, inside_round, link_round, uplink_regions, without
from .verdict import DIRS, Suspect, Verdict, decide, row_dict

DEFAULT_ROUNDS = 2
DEFAULT_MAX_ROUNDS = 8
#: times the fastest pair, above the rest but in doubt, is measured again (upper.top_pair):
#: each adds its two runs to the pair's mean
PAIR_AGAIN_MAX = 3


@dataclass
class SweepResult:
    nodes: list[str]
    rounds: list[Round]
    table: RunTable
    evidence: Evidence
    verdict: Verdict
    unit: str
    measurement: str
    seconds: float
    planned_rounds: int
    max_rounds: int
    params: VerdictParams = field(default_factory=VerdictParams)
    interrupted: bool = False
    stop_reason: str = ""
    expected: Expectation | None = None  # the reference rate the sides are held against
    uplinks: list = field(default_factory=list)  # topology.UplinkReport, with a topology
    #: why the level was held against no reference ('' when it was: expected)
    unjudged: str = ""
    topology_note: str = ""  # where the topology came from, or why there is none

    @property
    def level(self) -> Level:
        return self.verdict.level

    @property
    def suspects(self) -> list[str]:
        return [s.node for s in self.verdict.suspects]

    def suspect_sides(self) -> set[tuple[str, str]]:
        """(node, 'send'|'receive') of every named side."""
        return {(s.node, d) for s in self.verdict.suspects for d in s.directions}

    def figures(self) -> dict[str, tuple[float, str]]:
        """Every figure the sweep measured, by name, for ReFrame's perflog and the report:
        the cluster level; per node its own figure (the lower of its two directions) and
        each direction (`NODE_send`, `NODE_recv`); per directed pair `a->b` (median of its
        runs); the rounds used and the numbers of suspects, failed runs and undecided."""
        u = self.unit
        out: dict[str, tuple[float, str]] = {}
        if self.level.center is not None:
            out["cluster_level"] = (float(self.level.center), u)
        for row in self.verdict.table:
            if row.figure is not None:
                out[row.node] = (float(row.figure), u)
            for side, tag in ((row.send, "send"), (row.receive, "recv")):
                if side is not None and side.figure is not None:
                    out[f"{row.node}_{tag}"] = (float(side.figure), u)
        t = self.table
        ok = t.status == OK
        key = t.src[ok] * len(self.nodes) + t.dst[ok]
        vals = t.value[ok]
        uniq, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
        med = np.zeros(uniq.size)
        np.add.at(med, inv, vals)  # one run per directed pair, as a rule: its value
        for g in np.flatnonzero(counts > 1).tolist():  # repeats: the median
            med[g] = float(np.median(vals[inv == g]))
        n = len(self.nodes)
        for k, v in zip(uniq.tolist(), med.tolist(), strict=True):
            out[f"{self.nodes[k // n]}->{self.nodes[k % n]}"] = (v, u)
        out["rounds_used"] = (float(len(self.rounds)), "rounds")
        out["suspects"] = (float(len(self.verdict.suspects)), "nodes")
        out["failed_runs"] = (float(len(self.verdict.failed_runs)), "count")
        out["undecided"] = (float(len(self.verdict.undecided)), "count")
        return out

    def to_dict(self) -> dict:
        v = self.verdict
        lv = asdict(v.level)
        lv.update(screen_cut=math.exp(v.level.cut), design_cut=math.exp(v.level.design),
                  cut_limit=v.level.limit(v.level.cut))
        return {
            "kind": "fabrictest-sweep",
            "version": 2,
            "nodes": self.nodes,
            "unit": self.unit,
            "measurement": self.measurement,
            "seconds": round(self.seconds, 3),
            "planned_rounds": self.planned_rounds,
            "max_rounds": self.max_rounds,
            "rounds_used": len(self.rounds),
            "rounds": [r.to_dict() for r in self.rounds],
            "stop_reason": self.stop_reason,
            "interrupted": self.interrupted,
            "level": lv,
            "params": asdict(self.params),
            "pairs": [r.to_dict() for r in self.table.runs()],  # one entry per run: a -> b
            "nodes_table": [row_dict(row) for row in v.table],
            "suspects": [asdict(s) | {"line": s.line(v.level, v.unit)} for s in v.suspects],
            "failed_runs": v.failed_runs,
            "undecided": [list(u) for u in v.undecided],
            "expected": self.expected.to_dict() if self.expected else None,
            "level_unjudged": self.unjudged or None,
            "topology": self.topology_note or None,
            "notes": v.notes,
            "uplinks": [asdict(u) for u in self.uplinks],
            "healthy": v.healthy,
            "verdict": v.lines(),
            "figures": {name: list(fig) for name, fig in self.figures().items()},
        }

    def write_json(self, path: str) -> None:
        """Written whole or not at all (a reader never sees half a file), and never in place
        of a link or a special file (outfile.py)."""
        # indented for a small cluster; compact (json's fast encoder) for a large one
        indent = 1 if len(self.nodes) <= 200 else None

        def write(fh):
            json.dump(self.to_dict(), fh, indent=indent)
            fh.write("\n")

        write_whole(path, write)


def plan_text(n: int, runner: Runner, rounds: int, max_rounds: int) -> str:
    """The cost of the sweep before it starts: nodes, pairs, rounds, wall time."""
    pairs = n // 2
    waves = math.ceil(pairs / max(1, min(runner.max_concurrent, pairs or 1)))
    per_run = runner.pair_duration()
    limit = runner.run_limit()
    text = (f"plan: {n} nodes, {pairs} pairs per screening round, both directions of each "
            f"({2 * pairs} runs); {rounds} screening rounds planned, at most {max_rounds} "
            "rounds (extra rounds only for ambiguous nodes)")
    if per_run is not None:
        one = waves * 2 * per_run
        text += (f"; estimated wall time {_hms(one * rounds)} for the planned rounds, "
                 f"{_hms(one * max_rounds)} at most")
        planned = [pairs] * rounds
        text += (f"; on Slurm (cost.py) the planned rounds take "
                 f"{cost.per_run(planned, per_run, runner.max_concurrent).text(_hms)} as one "
                 f"step per run, {cost.per_round(planned, per_run).text(_hms)} as one step "
                 "per round")
    else:
        text += "; wall time estimated after the first round (or give --pair-seconds)"
    if limit is not None:
        text += f"; bounded by {_hms(waves * 2 * limit * max_rounds)} (every run to its limit)"
    return text


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.3g} s" if seconds < 10 else f"{s} s"
    h, rem = divmod(s, 3600)
    return f"{h}:{rem // 60:02d}:{rem % 60:02d}" if h else f"{rem // 60}:{rem % 60:02d}"


def why_ambiguous(table: RunTable, ev: Evidence, limit: int = 3) -> str:
    """Why sides are still ambiguous, by cause, with a few examples."""
    amb = np.flatnonzero(ev.state == AMBIGUOUS)
    lv = ev.level
    causes: dict[str, list[int]] = {}
    for i in amb.tolist():
        if ev.unconfirmed[i]:
            c = "named but not yet confirmed with a cleared partner"
        elif ev.charged[i]:
            c = "had a failed run"
        elif ev.k[i] == 0:
            c = "have no clean run yet (every partner slow)"
        elif ev.mean[i] < lv.cut:
            c = f"look slow (< {math.exp(lv.cut):.2f}x) but are not yet significant"
        else:
            c = f"are not yet clear of a drop to {math.exp(ev.design):.2f}x"
        causes.setdefault(c, []).append(i)
    parts = []
    for c, sides in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        ex = []
        for i in sides[:limit]:
            node, d = table.nodes[i // 2], DIRS[i % 2]
            ratio = "-" if ev.k[i] == 0 else f"{math.exp(ev.mean[i]):.2f}x"
            ex.append(f"{node} {d} {ratio} over {ev.k[i]} clean runs")
        parts.append(f"{len(sides)} {c} (e.g. {'; '.join(ex)})")
    return "; ".join(parts)


def run_sweep(
    nodes: Sequence[str],
    runner: Runner,
    *,
    rounds: int = DEFAULT_ROUNDS,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    seed: int | None = None,
    params: VerdictParams | None = None,
    expect: float | None = None,
    expected: Expectation | None = None,
    say: Callable[[str], None] | None = None,
    with_table: bool = True,
    topology=None,
) -> SweepResult:
    """The whole sweep; `say` gets the plan and a line per round (progress). `expect`: the
    level the sides are weighed against (default: the runs' median); `expected`: a reference
    rate every side must also reach (a uniform drop of every link is named too)."""
    say = say or (lambda _m: None)
    params = params or VerdictParams()
    nodes = list(nodes)
    rounds = screening_count(len(nodes), rounds, max_rounds)
    max_rounds = max(max_rounds, rounds)
    t0 = time.monotonic()
    table = RunTable(nodes)
    plan = screening_rounds(nodes, rounds, seed=seed, reserve=max_rounds - rounds)
    # matchings held back: more screening when the level is in doubt (one pair far above
    # every other run: a slow majority, or two fast nodes?)
    plan, reserve = plan[:rounds], plan[rounds:]
    done: list[Round] = []
    interrupted, stop = False, ""
    level: Level | None = None
    ev: Evidence | None = None
    rng = np.random.default_rng(None if seed is None else seed + 7919)
    say(plan_text(len(nodes), runner, len(plan), max_rounds))
    r, measuring = 0, False
    repeats = 0  # times the one pair far above was measured again
    seen: Level | None = None  # the level of the last look (a slow link's runs left out)
    regions = None  # with slow uplinks: per node, which side of them it is on
    reports: list = []  # the links' reports of the last look
    inside_at = None  # the round inside the switches ran in (once, right after screening)
    try:
        for r in range(max_rounds):
            inside = None
            if r >= len(plan) and topology is not None and inside_at is None:
                inside_at = r
                inside = inside_round(r, table, topology, None if seed is None else seed + r)
            elif topology is not None and inside_at is not None and r == inside_at + 1:
                # beyond a tree: the links' evidence
                inside = link_round(r, table, topology, reports,
                                    None if seed is None else seed + r)
            if r < len(plan):
                rnd = plan[r]
            elif inside is not None:
                rnd = inside
                say(f"round {r} (extra, {len(rnd)} pairs): {rnd.reason}")
            elif reserve and seen is not None and seen.in_doubt and not seen.upper.again:
                # (the top pair in doubt is measured again itself, below: another
                # matching never pairs its two nodes again)
                rnd = reserve.pop(0)
                rnd.index, rnd.reason = r, (
                    f"{seen.upper.runs} runs at about "
                    f"{seen.upper.center / seen.upper.below:.2f}x the level, more than "
                    "noise puts there: one more screening matching, to tell a slow majority "
                    "from noise") if seen.upper.suggested else (
                    f"{'–'.join(seen.upper.nodes[:2])} run at "
                    f"{seen.upper.center / seen.upper.below:.2f}x every other run with each "
                    "other: one more screening matching, to tell a slow majority from two "
                    "fast nodes")
                say(f"round {r} (screen, {len(rnd)} pairs): {rnd.reason}")
                # weighed again with it, from scratch: what was cleared against the old level
                # is not cleared against the new one
                level, ev, seen = None, None, None
            elif len(nodes) == 2:  # one pair: measuring it again cannot tell which node
                stop = "2 nodes: one pair, measured both ways (more rounds cannot tell which)"
                break
            elif seen is not None and seen.in_doubt and not seen.upper.suggested and (
                    (seen.upper.runs == 1 and repeats == 0)
                    or (seen.upper.again and repeats < PAIR_AGAIN_MAX)):
                # one run far above the rest and no matching left: that pair again, both
                # ways (4 nodes, 3 slow: the healthy node's run to the one slow only
                # sending is the only healthy run; a second says which); or the fastest
                # pair above the rest, in doubt: again, up to PAIR_AGAIN_MAX times
                repeats += 1
                i, j = (nodes.index(x) for x in seen.upper.nodes[:2])
                once = "ran once" if seen.upper.runs == 1 else (
                    f"averaged over its {seen.upper.runs} runs")
                rnd = Round(r, "screen", np.array([i]), np.array([j]), nodes, reason=(
                    f"{'–'.join(seen.upper.nodes[:2])} {once} at "
                    f"{seen.upper.center / seen.upper.below:.2f}x every other run: that "
                    "pair again, to tell the healthy level from a lucky run"))
                say(f"round {r} (screen, 1 pair): {rnd.reason}")
                level, ev, seen = None, None, None
            else:
                rnd, stop = _next_round(r, nodes, table, ev, rng, regions)
                if rnd is None:
                    break
                say(f"round {r} (extra, {len(rnd)} pairs): {rnd.reason}")
            t_round = time.monotonic()
            measuring = True
            try:
                runs = runner.run_round(rnd)
            except RoundInterrupted as err:
                if len(err.runs.src):
                    table.add(rnd, err.runs)
                    done.append(rnd)
                raise KeyboardInterrupt from None
            table.add(rnd, runs)
            done.append(rnd)
            measuring = False
            if r + 1 >= len(plan):
                again = repeats < PAIR_AGAIN_MAX
                level = level or estimate_level(table, params, expect, budget=max_rounds,
                                                looks=max_rounds - len(plan) + 1,
                                                pair_again=again)
                _used, seen, ev, reports, _lines = _look(
                    table, level, params, topology, False, None if ev is None else ev.state,
                    expect, max_rounds, max_rounds - len(plan) + 1, again)
                regions = uplink_regions(topology, nodes, reports)
            say(_progress(r, rnd, runs, time.monotonic() - t_round, time.monotonic() - t0,
                          len(plan), max_rounds, ev if r + 1 >= len(plan) else None))
        else:
            stop = f"--max-rounds {max_rounds} reached"
    except KeyboardInterrupt:
        interrupted = True
        stop = f"interrupted (Ctrl-C) {'during' if measuring else 'after'} round {r}"
    if level is None:
        level = estimate_level(table, params, expect, budget=max_rounds,
                               looks=max_rounds - len(plan) + 1,
                               pair_again=repeats < PAIR_AGAIN_MAX)
    used, level, ev, reports, lines = _look(
        table, level, params, topology, True, None if ev is None else ev.state, expect,
        max_rounds, max_rounds - len(plan) + 1, repeats < PAIR_AGAIN_MAX)
    verdict = decide(used, ev, runner.unit, interrupted=interrupted, with_table=with_table,
                     expected=expected)
    verdict.suspects[:0] = [Suspect(node=line.split(":")[1].strip(), kind="uplink", sides=[],
                                    text=line) for line in lines]
    return SweepResult(
        nodes=nodes, rounds=done, table=table, evidence=ev, verdict=verdict,
        unit=runner.unit, measurement=runner.describe(), seconds=time.monotonic() - t0,
        planned_rounds=len(plan), max_rounds=max_rounds, params=params,
        interrupted=interrupted, stop_reason=stop, expected=expected, uplinks=reports,
    )


def _look(table, level, params, topology, final, before, expect, budget, looks,
          pair_again=True):
    """One look at the runs so far: (the runs the nodes are weighed on, their level, the
    evidence, the uplink reports, the suspect uplinks' lines). With a topology, the runs a
    slow uplink explains are left out of the nodes' evidence (topology.py)."""
    if topology is not None:
        reports, lines, explained = attribute(table, topology, level.center, level.cut)
        if lines or explained.any():  # a suspect link, or links slower by their LinkSpeed
            rest = without(table, explained)
            lv = estimate_level(rest, params, expect, budget=budget, looks=looks,
                                pair_again=pair_again)
            return rest, lv, weigh(rest, lv, params, final=final, before=before), reports, lines
    else:
        reports = []
    return table, level, weigh(table, level, params, final=final, before=before), reports, []


def _next_round(r, nodes, table, ev, rng, regions=None) -> tuple[Round | None, str]:
    """The extra round r for the ambiguous sides, or (None, why the sweep stops)."""
    amb = np.flatnonzero(ev.state == AMBIGUOUS)
    if amb.size == 0:
        return None, f"every node-direction decided after {r} rounds"
    amb_nodes = np.unique(amb // 2)
    cleared = ev.state.reshape(-1, 2) == CLEARED
    good = np.setdiff1d(np.flatnonzero(cleared.all(axis=1)), amb_nodes)
    # partners for a doubtful send side (a cleared receive) and a doubtful receive side
    helpers = {d: np.setdiff1d(np.flatnonzero(cleared[:, 1 - d]), np.union1d(good, amb_nodes))
               for d in (0, 1)}
    reason = (f"{amb.size} node-directions ambiguous after {r} rounds: "
              + why_ambiguous(table, ev) + "; measuring them again with cleared partners")
    met = table.partners_of(amb_nodes)
    seed = int(rng.integers(1 << 31))
    # a node with one side in doubt spends both runs of its lane on that side
    sides = (ev.state == AMBIGUOUS).reshape(-1, 2)[amb_nodes]
    one_way = {int(n): int(np.flatnonzero(s)[0]) for n, s in zip(
        amb_nodes.tolist(), sides, strict=True) if s.sum() == 1}
    if regions is None:
        rnd = extra_round(r, nodes, amb_nodes, good, met, seed=seed, reason=reason,
                          one_way=one_way, helpers=helpers)
    else:  # partners on the same side of every slow uplink: runs it does not explain away
        parts = [extra_round(r, nodes, amb_nodes[regions[amb_nodes] == g],
                             good[regions[good] == g], met, seed=seed + i, reason=reason,
                             one_way=one_way,
                             helpers={d: h[regions[h] == g] for d, h in helpers.items()})
                 for i, g in enumerate(np.unique(regions[amb_nodes]).tolist())]
        rnd = Round(r, "extra", *(np.concatenate([p.a for p in parts]),
                                  np.concatenate([p.b for p in parts])), nodes, reason=reason,
                    s2=np.concatenate([p.second()[0] for p in parts]),
                    d2=np.concatenate([p.second()[1] for p in parts]))
    if len(rnd) == 0:
        return None, f"no partner left for the {amb.size} ambiguous node-directions"
    return rnd, ""


def _progress(r, rnd, runs, secs, total, planned, max_rounds, ev) -> str:
    failed = int((runs.status != OK).sum())
    text = (f"round {r} ({rnd.kind}) done: {len(rnd)} pairs, {len(runs.src)} runs, "
            f"{failed} failed, {secs:.1f} s; {r + 1} rounds used ({planned} planned, at most "
            f"{max_rounds}), {total:.1f} s in all")
    if ev is not None:
        amb = int((ev.state == AMBIGUOUS).sum())
        named = int(((ev.state == SLOW) | (ev.state == UNREACHABLE)).sum())
        text += f"; {named} node-directions named, {amb} ambiguous"
        if amb and r + 1 < max_rounds:
            text += f"; at most {max_rounds - r - 1} more rounds (each ~{_hms(secs)} at most)"
    elif r + 1 < planned:
        text += f"; about {_hms(secs * (planned - r - 1))} to the end of screening"
    return text


__all__ = ["SweepResult", "plan_text", "run_sweep"]

"""The sweep: screening rounds, then confirmation of suspects against known-good partners.

Rounds are fixed in advance: `rounds` screening matchings (default 2) and `confirm` rounds
(default 1) that run only when there is something to confirm, plus at most one extra round
when there are more suspects than good partners. One slow node among N is thus isolated in
3 rounds whatever N, instead of the N-1 rounds of an all-pairs matrix.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from .runners import Runner
from .schedule import Round, confirmation_round, pairs_met, screening_rounds
from .verdict import (
    Level,
    PairResult,
    Verdict,
    VerdictParams,
    decide,
    estimate_level,
    screening_candidates,
)


@dataclass
class SweepResult:
    nodes: list[str]
    rounds: list[Round]
    results: list[PairResult]
    verdict: Verdict
    unit: str
    measurement: str
    seconds: float
    planned_rounds: int
    params: VerdictParams = field(default_factory=VerdictParams)

    @property
    def level(self) -> Level:
        return self.verdict.level

    @property
    def suspects(self) -> list[str]:
        return [s.node for s in self.verdict.suspects]

    def figures(self) -> dict[str, tuple[float, str]]:
        """Every figure the sweep measured, by name, for ReFrame's perflog and the report:
        the cluster level, each node's own figure, each pair's figure (`a<->b`, the median when
        it was measured more than once); counts of suspects and failed pairs."""
        out: dict[str, tuple[float, str]] = {}
        if self.level.center is not None:
            out["cluster_level"] = (float(self.level.center), self.unit)
        for row in self.verdict.table:
            if row.figure is not None:
                out[row.node] = (float(row.figure), self.unit)
        by_pair: dict[str, list[float]] = {}
        for r in self.results:
            if r.ok:
                by_pair.setdefault("<->".join(sorted((r.a, r.b))), []).append(r.value)
        for name, vals in by_pair.items():
            out[name] = (float(statistics.median(vals)), self.unit)
        out["rounds_used"] = (float(len(self.rounds)), "rounds")
        out["suspects"] = (float(len(self.verdict.suspects)), "nodes")
        out["failed_pairs"] = (float(len(self.verdict.failed_pairs)), "count")
        return out

    def to_dict(self) -> dict:
        v = self.verdict
        return {
            "kind": "fabrictest-sweep",
            "version": 1,
            "nodes": self.nodes,
            "unit": self.unit,
            "measurement": self.measurement,
            "seconds": round(self.seconds, 3),
            "planned_rounds": self.planned_rounds,
            "rounds_used": len(self.rounds),
            "rounds": [asdict(r) for r in self.rounds],
            "level": asdict(v.level),
            "params": asdict(self.params),
            "pairs": [r.to_dict() for r in self.results],
            "nodes_table": [asdict(row) for row in v.table],
            "suspects": [asdict(s) for s in v.suspects],
            "failed_pairs": [r.to_dict() for r in v.failed_pairs],
            "healthy": v.healthy,
            "verdict": v.lines(),
            "figures": {name: list(fig) for name, fig in self.figures().items()},
        }

    def write_json(self, path: str) -> None:
        """Written whole or not at all: a reader never sees half a file."""
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(self.to_dict(), fh, indent=1)
                fh.write("\n")
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def run_sweep(
    nodes: Sequence[str],
    runner: Runner,
    *,
    rounds: int = 2,
    confirm: int = 1,
    seed: int | None = None,
    params: VerdictParams | None = None,
    expect: float | None = None,
    log: Callable[[str], None] | None = None,
) -> SweepResult:
    log = log or (lambda _m: None)
    params = params or VerdictParams()
    nodes = list(nodes)
    t0 = time.monotonic()
    plan = screening_rounds(nodes, rounds, seed=seed)
    done: list[Round] = []
    results: list[PairResult] = []
    for rnd in plan:
        log(f"round {rnd.index}: screening, {len(rnd.pairs)} pairs"
            + (f", {','.join(rnd.idle)} idle" if rnd.idle else ""))
        results += runner.run_round(rnd)
        done.append(rnd)

    level = estimate_level(results, params, expect)
    candidates, good = screening_candidates(nodes, results, level)
    log(f"level {level.center} {runner.unit} (spread {level.sigma:.3f}); "
        f"candidates: {','.join(candidates) or 'none'}")
    n_conf = {s: 0 for s in candidates}

    def confirm_round(order: list[str]) -> bool:
        rnd, _left = confirmation_round(len(done), order, good, pairs_met(done))
        if not rnd.pairs:
            return False
        log(f"round {rnd.index}: confirmation, {len(rnd.pairs)} pairs")
        results.extend(runner.run_round(rnd))
        done.append(rnd)
        for _g, s in rnd.pairs:
            n_conf[s] += 1
        return True

    if candidates and good:
        for _ in range(confirm):
            # candidates with the fewest confirmations first, in case good nodes run short
            if not confirm_round(sorted(candidates, key=lambda s: n_conf[s])):
                break
        missing = [s for s in candidates if n_conf[s] == 0]
        if missing:  # more suspects than good partners: one extra round, no more
            confirm_round(missing)
    verdict = decide(nodes, results, level, candidates, runner.unit)
    return SweepResult(
        nodes=nodes,
        rounds=done,
        results=results,
        verdict=verdict,
        unit=runner.unit,
        measurement=runner.describe(),
        seconds=time.monotonic() - t0,
        planned_rounds=len(plan) + confirm,
        params=params,
    )

"""From pair figures to a verdict: which nodes are slow or unreachable, with the evidence.

A pair figure is limited by the slower of its two nodes, so one slow pair blames two nodes.
Over several rounds the slow node keeps getting slow pairs while each of its partners also
gets fast ones; confirmation against known-good partners then settles it.

Levels are robust: the cluster level is the median of the pairs that involve no clearly slow
node, the spread is the median absolute deviation of log figures (so a 2-3x noisy machine and a
steady 5% one both get sensible cuts), and a pair is slow when it is both `z` spreads and at
least `min_drop` below the level. A pair that fails or times out is `failed`: evidence that a
node is unreachable, never a hang.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

OK, FAILED, TIMEOUT = "ok", "failed", "timeout"


@dataclass
class PairResult:
    """One measurement of one pair in one round."""

    round: int
    kind: str  # "screen" or "confirm"
    a: str
    b: str
    status: str  # ok | failed | timeout
    value: float | None = None
    seconds: float = 0.0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK and self.value is not None

    def other(self, node: str) -> str:
        return self.b if node == self.a else self.a

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class VerdictParams:
    z_screen: float = 2.0  # a screening pair is slow below level * exp(-z_screen * sigma)
    z_confirm: float = 3.0  # a confirmation pair is slow below level * exp(-z_confirm * sigma)
    min_drop: float = 0.2  # ...and in any case at least this fraction below the level
    sigma_floor: float = 0.03  # never trust a spread below 3%
    sigma_small: float = 0.1  # spread assumed when fewer than `min_clean` pairs are clean
    min_clean: int = 8
    clearly_slow: float = 0.5  # nodes whose best pair is below this x the level are left out


@dataclass
class Level:
    """The cluster's level and spread, and the cuts derived from them."""

    center: float | None
    sigma: float
    screen_cut: float  # ratio to center below which a screening pair is slow
    confirm_cut: float
    clean_pairs: int
    source: str  # "pairs" or "expect"

    def screen_limit(self) -> float | None:
        return None if self.center is None else self.center * self.screen_cut

    def confirm_limit(self) -> float | None:
        return None if self.center is None else self.center * self.confirm_cut


def _mad_sigma(logs: Sequence[float]) -> float:
    if len(logs) < 2:
        return 0.0
    med = statistics.median(logs)
    return 1.4826 * statistics.median(abs(x - med) for x in logs)


def estimate_level(
    results: Iterable[PairResult],
    params: VerdictParams = VerdictParams(),
    expect: float | None = None,
) -> Level:
    """The level and spread of healthy pairs, from the screening rounds."""
    screen = [r for r in results if r.kind == "screen"]
    ok = [r for r in screen if r.ok and r.value > 0]
    best: dict[str, float] = {}
    for r in ok:
        for n in (r.a, r.b):
            best[n] = max(best.get(n, 0.0), r.value)
    center = None
    sigma = params.sigma_small
    clean: list[float] = []
    if best:
        # A healthy node's best pair is healthy unless every partner it met was slow; start
        # from the upper quartile of the nodes' best pairs so that even a third of slow nodes
        # does not drag the level down, then refine once with the level and spread found.
        maxima = sorted(best.values())
        c0 = expect or maxima[(3 * (len(maxima) - 1)) // 4]
        cut = params.clearly_slow
        for _ in range(2):
            bad = {n for n, v in best.items() if v < cut * c0}
            clean = [r.value for r in ok if r.a not in bad and r.b not in bad]
            center = statistics.median(clean) if clean else c0
            sigma = _mad_sigma([math.log(v / center) for v in clean]) if clean else 0.0
            if len(clean) < params.min_clean:
                sigma = max(sigma, params.sigma_small)
            sigma = max(sigma, params.sigma_floor)
            c0 = expect or center
            cut = min(params.clearly_slow, math.exp(-params.z_screen * sigma))
    sigma = max(sigma, params.sigma_floor)
    if expect:
        center = expect
    floor_drop = -math.log(1.0 - params.min_drop)
    return Level(
        center=center,
        sigma=sigma,
        screen_cut=math.exp(-max(params.z_screen * sigma, floor_drop)),
        confirm_cut=math.exp(-max(params.z_confirm * sigma, floor_drop)),
        clean_pairs=len(clean),
        source="expect" if expect else "pairs",
    )


def pair_state(r: PairResult, level: Level) -> str:
    """'ok', 'slow' or 'failed' for one pair, with the cut of its round's kind."""
    if not r.ok:
        return "failed"
    limit = level.screen_limit() if r.kind == "screen" else level.confirm_limit()
    if limit is not None and r.value < limit:
        return "slow"
    return "ok"


def by_node(results: Iterable[PairResult]) -> dict[str, list[PairResult]]:
    out: dict[str, list[PairResult]] = defaultdict(list)
    for r in results:
        out[r.a].append(r)
        out[r.b].append(r)
    return out


def screening_candidates(
    nodes: Sequence[str], results: Sequence[PairResult], level: Level
) -> tuple[list[str], list[str]]:
    """(candidates, good): nodes whose every screening pair was slow or failed (or that were
    never measured), and the others, best first (all pairs fine, then fastest pair)."""
    per = by_node(r for r in results if r.kind == "screen")
    candidates, good = [], []
    rank: dict[str, tuple[int, float]] = {}
    for n in nodes:
        states = [pair_state(r, level) for r in per.get(n, [])]
        if not states or all(s != "ok" for s in states):
            candidates.append(n)
        else:
            # one fine pair clears a node: a pair is never faster than its slower node
            good.append(n)
            best = max(r.value for r, s in zip(per[n], states, strict=True) if s == "ok")
            rank[n] = (len(states) - states.count("ok"), -best)
    good.sort(key=lambda n: rank[n])
    return candidates, good


@dataclass
class Suspect:
    node: str
    kind: str  # "slow" or "unreachable"
    median: float | None
    pairs: int
    bad: int  # slow or failed pairs
    failed: int
    confirmed_with: list[str] = field(default_factory=list)
    confirmed: bool = True
    note: str = ""

    def line(self, level: Level, unit: str) -> str:
        if self.confirmed_with:
            conf = f"confirmed with {','.join(self.confirmed_with)}"
        else:
            conf = f"not confirmed: {self.note or 'no known-good partner'}"
        if self.kind == "unreachable":
            return f"suspect: {self.node} unreachable ({self.bad}/{self.pairs} pairs failed, {conf})"
        extra = f", {self.failed} failed" if self.failed else ""
        return (
            f"suspect: {self.node} median {_fmt(self.median)} {unit} vs cluster "
            f"{_fmt(level.center)} {unit} ({self.bad}/{self.pairs} pairs slow{extra}, {conf})"
        )


@dataclass
class NodeRow:
    node: str
    pairs: int
    ok: int
    slow: int
    failed: int
    median: float | None
    min: float | None
    max: float | None
    ratio: float | None  # figure / cluster level
    status: str  # ok | suspect | unreachable | cleared | unmeasured
    partners: list[str] = field(default_factory=list)
    figure: float | None = None  # median of its pairs with partners that are not suspects


@dataclass
class Verdict:
    level: Level
    unit: str
    suspects: list[Suspect]
    table: list[NodeRow]
    # pairs that gave no figure although neither of their nodes is a suspect: never
    # "suspects: none" while a measurement is missing
    failed_pairs: list[PairResult] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not self.suspects and not self.failed_pairs

    def lines(self) -> list[str]:
        if self.healthy:
            return ["suspects: none"]
        out = [s.line(self.level, self.unit) for s in self.suspects]
        for r in self.failed_pairs:
            why = " ".join((r.detail or r.status).split())[:160]
            out.append(f"failed pair: {r.a},{r.b} in round {r.round} ({r.status}: {why}); "
                       "both nodes fine with other partners")
        return out


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(v)))))
    return f"{v:.{min(digits, 6)}f}"


def decide(
    nodes: Sequence[str],
    results: Sequence[PairResult],
    level: Level,
    candidates: Sequence[str],
    unit: str,
) -> Verdict:
    """The verdict: a candidate is a suspect when its confirmation pairs are bad too."""
    per = by_node(results)
    cand = set(candidates)
    suspects: list[Suspect] = []
    table: list[NodeRow] = []
    for n in nodes:
        rs = per.get(n, [])
        states = [pair_state(r, level) for r in rs]
        vals = [r.value for r in rs if r.ok]
        med = statistics.median(vals) if vals else None
        n_slow = states.count("slow")
        n_failed = states.count("failed")
        status = "ok" if rs else "unmeasured"
        if n in cand:
            conf = [r for r in rs if r.kind == "confirm"]
            conf_states = [pair_state(r, level) for r in conf]
            if conf and any(s == "ok" for s in conf_states):
                status = "cleared"
            else:
                kind = "unreachable" if rs and n_failed == len(rs) else "slow"
                if not rs:
                    kind, note = "unreachable", "never measured"
                else:
                    note = "" if conf else "no known-good partner"
                s = Suspect(
                    node=n,
                    kind=kind,
                    median=med,
                    pairs=len(rs),
                    bad=n_slow + n_failed,
                    failed=n_failed,
                    confirmed_with=[r.other(n) for r in conf],
                    confirmed=bool(conf),
                    note=note,
                )
                suspects.append(s)
                status = "unreachable" if kind == "unreachable" else "suspect"
        table.append(
            NodeRow(
                node=n,
                pairs=len(rs),
                ok=states.count("ok"),
                slow=n_slow,
                failed=n_failed,
                median=med,
                min=min(vals) if vals else None,
                max=max(vals) if vals else None,
                ratio=(med / level.center) if (med is not None and level.center) else None,
                status=status,
                partners=[r.other(n) for r in rs],
            )
        )
    # A node's own figure leaves out the pairs it shared with a suspect (which only show the
    # suspect), unless it is a suspect itself or has no other pair.
    bad = {x.node for x in suspects}
    for row in table:
        rs = [r for r in per.get(row.node, []) if r.ok]
        own = [r.value for r in rs if r.other(row.node) not in bad]
        vals = own if (own and row.node not in bad) else [r.value for r in rs]
        row.figure = statistics.median(vals) if vals else None
        row.ratio = (row.figure / level.center) if (vals and level.center) else None
    failed = [r for r in results if not r.ok and r.a not in bad and r.b not in bad]
    return Verdict(level=level, unit=unit, suspects=suspects, table=table, failed_pairs=failed)

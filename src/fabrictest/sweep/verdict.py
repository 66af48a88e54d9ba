"""From the side states to what the user reads: suspects by direction, with their evidence.

    suspect: node042 send 0.48 Gbps vs cluster 0.99 Gbps (3/3 pairs slow sending, receiving ok;
             confirmed with node17)
    suspect: node03 send 0.048 Gbps, receive 0.049 Gbps vs cluster 0.19 Gbps (2/2 pairs slow
             sending, 2/2 slow receiving; confirmed with node01,node04)
    suspect: node02 unreachable (2/2 pairs failed sending, 2/2 failed receiving; confirmed ...)
    failed run: node01->node03 in round 1 (timeout: ...); neither node fails with other partners
    undecided: node07 receive (no clean run: every partner was slow or failed)
    suspects: none

`suspects: none` only when nothing else is said: a run that gave no figure and a side the
sweep could not decide are never swallowed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from .estimate import (
    BORDERLINE,
    CLEARED,
    SLOW,
    STATE,
    UNDECIDED,
    UNMEASURED,
    UNREACHABLE,
    Evidence,
    Level,
)
from .runs import FAILED, OK, STATUS, TIMEOUT, RunTable

DIRS = ("send", "receive")
GERUND = ("sending", "receiving")


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(v)))))
    return f"{v:.{min(digits, 6)}f}"


@dataclass
class SideReport:
    """One direction of one node."""

    direction: str  # send | receive
    state: str  # ok | slow | unreachable | borderline | undecided | ambiguous | unmeasured
    figure: float | None  # geometric mean of its clean runs
    ratio: float | None
    runs: int
    clean: int
    slow: int
    failed: int


@dataclass
class Suspect:
    node: str
    kind: str  # "slow", "unreachable", or "slow/unreachable" (one direction each)
    sides: list[SideReport]
    confirmed_with: list[str] = field(default_factory=list)

    @property
    def directions(self) -> list[str]:
        return [s.direction for s in self.sides if s.state in ("slow", "unreachable")]

    def line(self, level: Level, unit: str) -> str:
        bad = [s for s in self.sides if s.state in ("slow", "unreachable")]
        good = [s for s in self.sides if s not in bad]
        heads, counts = [], []
        if all(s.state == "unreachable" for s in bad) and len(bad) == 2:
            heads.append("unreachable")
        else:
            for s in bad:
                if s.state == "unreachable":
                    heads.append(f"unreachable {GERUND[DIRS.index(s.direction)]}")
                else:
                    heads.append(f"{s.direction} {fmt(s.figure)} {unit}")
        for s in bad:
            g = GERUND[DIRS.index(s.direction)]
            if s.state == "unreachable":
                counts.append(f"{s.failed}/{s.runs} pairs failed {g}")
            else:
                extra = f", {s.failed} failed" if s.failed else ""
                counts.append(f"{s.slow + s.failed}/{s.runs} pairs slow {g}{extra}")
        for s in good:
            counts.append(f"{GERUND[DIRS.index(s.direction)]} {s.state}")
        if len(counts) == 2 and len(bad) == 2:
            counts[1] = counts[1].replace(" pairs ", " ")
        conf = (f"confirmed with {','.join(self.confirmed_with)}" if self.confirmed_with
                else "not confirmed: no known-good partner")
        vs = "" if heads == ["unreachable"] or all(h.startswith("unreach") for h in heads) \
            else f" vs cluster {fmt(level.center)} {unit}"
        return f"suspect: {self.node} {', '.join(heads)}{vs} ({', '.join(counts)}; {conf})"


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
    figure: float | None  # the node's own figure: the lower of its two sides'
    ratio: float | None
    status: str  # ok | suspect | unreachable | borderline | undecided | unmeasured
    send: SideReport | None = None
    receive: SideReport | None = None
    partners: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    level: Level
    unit: str
    suspects: list[Suspect]
    table: list[NodeRow]
    failed_runs: list[dict] = field(default_factory=list)  # runs no suspect explains
    undecided: list[tuple[str, str, str]] = field(default_factory=list)  # node, side, why
    interrupted: bool = False

    @property
    def healthy(self) -> bool:
        return not (self.suspects or self.failed_runs or self.undecided or self.interrupted)

    def lines(self, limit: int = 50) -> list[str]:
        """The verdict; past `limit` failed runs (or undecided sides) a count stands for the
        rest (the JSON has them all)."""
        out = [s.line(self.level, self.unit) for s in self.suspects]
        for r in self.failed_runs[:limit]:
            why = " ".join((r["detail"] or r["status"]).split())[:160]
            out.append(f"failed run: {r['src']}->{r['dst']} in round {r['round']} "
                       f"({r['status']}: {why}); neither node fails with other partners")
        if len(self.failed_runs) > limit:
            out.append(f"failed run: {len(self.failed_runs) - limit} more (see --json)")
        for node, side, why in self.undecided[:limit]:
            out.append(f"undecided: {node} {side} ({why})")
        if len(self.undecided) > limit:
            out.append(f"undecided: {len(self.undecided) - limit} more (see --json)")
        if not out:
            out.append("suspects: none so far (interrupted)" if self.interrupted
                       else "suspects: none")
        return out


def _side(ev: Evidence, i: int) -> SideReport:
    fig = ev.figure(i)
    c = ev.level.center
    return SideReport(direction=DIRS[i % 2], state=STATE[ev.state[i]], figure=fig,
                      ratio=(fig / c) if (fig is not None and c) else None, runs=int(ev.runs[i]),
                      clean=int(ev.k[i]), slow=int(ev.slow[i]), failed=int(ev.failed[i]))


def _confirmers(table: RunTable, ev: Evidence, node: int) -> list[str]:
    """Cleared partners of the node's evidence runs (the other side of each such run)."""
    names = table.nodes
    out: list[str] = []
    send = (table.src == node) & (ev.clean_src | ~np.isfinite(ev.x))
    recv = (table.dst == node) & (ev.clean_dst | ~np.isfinite(ev.x))
    for j in np.flatnonzero(send):
        if ev.state[2 * table.dst[j] + 1] == CLEARED:
            out.append(names[table.dst[j]])
    for j in np.flatnonzero(recv):
        if ev.state[2 * table.src[j]] == CLEARED:
            out.append(names[table.src[j]])
    return sorted(set(out))


def decide(table: RunTable, ev: Evidence, unit: str, interrupted: bool = False,
           with_table: bool = True) -> Verdict:
    names = table.nodes
    level = ev.level
    n = len(names)
    state = ev.state.reshape(n, 2)
    named = (state == SLOW) | (state == UNREACHABLE)
    suspects: list[Suspect] = []
    for i in np.flatnonzero(named.any(axis=1)):
        sides = [_side(ev, 2 * i), _side(ev, 2 * i + 1)]
        kinds = {s.state for s in sides if s.state in ("slow", "unreachable")}
        suspects.append(Suspect(node=names[i], kind="/".join(sorted(kinds)), sides=sides,
                                confirmed_with=_confirmers(table, ev, int(i))))
    undecided = []
    for i in np.flatnonzero(((state == UNDECIDED) | (state == UNMEASURED)).any(axis=1)):
        for d in (0, 1):
            st = state[i, d]
            if st == UNMEASURED:
                undecided.append((names[i], DIRS[d], "never measured"))
            elif st == UNDECIDED:
                why = ("every run failed once, no second chance" if ev.charged[2 * i + d]
                       else "no clean run: every partner was slow or failed")
                undecided.append((names[i], DIRS[d], why))
    # failed runs that no named side explains
    status = table.status
    fail = (status == FAILED) | (status == TIMEOUT) | ((status == OK) & ~(table.value > 0))
    flat_named = named.reshape(-1)
    explained = flat_named[2 * table.src] | flat_named[2 * table.dst + 1]
    failed_runs = [table.run(int(j)).to_dict() for j in np.flatnonzero(fail & ~explained)]
    rows = node_table(table, ev) if with_table else []
    return Verdict(level=level, unit=unit, suspects=suspects, table=rows,
                   failed_runs=failed_runs, undecided=undecided, interrupted=interrupted)


def node_table(table: RunTable, ev: Evidence) -> list[NodeRow]:
    """One row per node (vectorised statistics; the per-side reports as objects)."""
    names = table.nodes
    n = len(names)
    state = ev.state.reshape(n, 2)
    ok = table.status == OK
    rows = []
    # per node: all OK runs either direction
    node_of = np.concatenate([table.src[ok], table.dst[ok]])
    vals = np.concatenate([table.value[ok], table.value[ok]])
    order = np.argsort(node_of, kind="stable")
    node_sorted, vals_sorted = node_of[order], vals[order]
    bounds = np.searchsorted(node_sorted, np.arange(n + 1))
    # partners: the receiver of each run it sent (every pair runs both ways)
    porder = np.argsort(table.src, kind="stable")
    psorted = table.dst[porder]
    pbounds = np.searchsorted(table.src[porder], np.arange(n + 1))
    pairs = np.bincount(table.src, minlength=n) + np.bincount(table.dst, minlength=n)
    for i in range(n):
        v = vals_sorted[bounds[i]:bounds[i + 1]]
        partners = [names[j] for j in dict.fromkeys(psorted[pbounds[i]:pbounds[i + 1]].tolist())]
        send, recv = _side(ev, 2 * i), _side(ev, 2 * i + 1)
        figs = [s.figure for s in (send, recv) if s.figure is not None]
        fig = min(figs) if figs else None
        st = state[i]
        if (st == UNREACHABLE).any():
            status = "unreachable" if not (st == SLOW).any() else "suspect"
        elif (st == SLOW).any():
            status = "suspect"
        elif ((st == UNDECIDED) | (st == UNMEASURED)).any():
            status = "undecided" if pairs[i] else "unmeasured"
        elif (st == BORDERLINE).any():
            status = "borderline"
        elif (st == CLEARED).all():
            status = "ok"
        else:
            status = "ambiguous"
        c = ev.level.center
        rows.append(NodeRow(
            node=names[i], pairs=int(pairs[i]) // 2 if pairs[i] else 0,
            ok=int(v.size), slow=send.slow + recv.slow, failed=send.failed + recv.failed,
            median=float(np.median(v)) if v.size else None,
            min=float(v.min()) if v.size else None, max=float(v.max()) if v.size else None,
            figure=fig, ratio=(fig / c) if (fig is not None and c) else None, status=status,
            send=send, receive=recv, partners=partners))
    return rows


def row_dict(row: NodeRow) -> dict:
    d = asdict(row)
    for side in ("send", "receive"):
        s = d.pop(side) or {}
        for key in ("state", "figure", "ratio", "runs", "clean", "slow", "failed"):
            d[f"{side}_{key}"] = s.get(key)
    return d


__all__ = ["Verdict", "Suspect", "NodeRow", "SideReport", "decide", "fmt", "STATUS"]

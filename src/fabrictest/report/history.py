"""Each figure's history over stored sessions, its change points, and the verdict on them.

A figure is a test case (its display name: test, scenario and other parameters), its
system:partition+environ and a performance variable (a size, a link or a node is in the
name: `bw_1048576`, `stream_node03_to_node01_gbps`, `node_node03_rx_gbps`). Its series is
one value per session (the median of a session's reruns), in the order the sessions ran.
The change points come from :mod:`.changepoints`; a figure regressed when its most recent
change point is in the bad direction (:mod:`.direction`) and the level it ends on is beyond
the tolerance from the level before the run of bad steps that ends there (so a slow drift
of small steps counts as a whole).

Pure: records and sessions in, histories out.
"""

from __future__ import annotations

import datetime as _dt
import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from . import changepoints as cp
from .direction import LOWER, better
from .refformat import session_record
from .results import PerfRecord, ResultsError

#: default tolerance of `fabric-report history`: a confirmed step this large in the bad
#: direction fails the gate
TOLERANCE = 0.03


@dataclass
class Point:
    session: str
    time: float | None
    date: str
    extras: dict
    value: float
    nodes: str


@dataclass
class Change:
    """A change point, for the report: where it happened and what it did."""

    index: int  # 0-based position in the series
    session: str
    date: str
    extras: dict
    before: float
    after: float
    step: float
    confidence: float
    nodes: str  # the nodes before -> after, when the allocation moved there


@dataclass
class FigureHistory:
    test: str
    sysenv: str
    pvar: str
    unit: str
    points: list[Point]
    noise: float | None = None
    changes: list[Change] = field(default_factory=list)
    outliers: list[int] = field(default_factory=list)
    #: ok | REGRESSED | improved | changed | moved (a bad step within the tolerance) | few
    status: str = "ok"
    #: the change over the latest run of steps in one direction (level after / before - 1)
    total: float | None = None
    since: int | None = None  # where that run of steps began (0-based)
    note: str = ""
    #: sessions in which the figure's test ran without giving it a value (failed): left out
    no_value: int = 0

    @property
    def name(self) -> str:
        return f"{self.test} {self.pvar}"

    def to_dict(self) -> dict:
        return {
            "test": self.test, "system": self.sysenv, "figure": self.pvar, "unit": self.unit,
            "status": self.status, "total": self.total, "note": self.note,
            "no_value": self.no_value,
            "noise": self.noise, "outliers": [self.points[i].session for i in self.outliers],
            "sessions": [{"session": p.session, "date": p.date, "extras": p.extras,
                          "value": p.value, "nodes": p.nodes} for p in self.points],
            "change_points": [vars(c) for c in self.changes],
        }


def session_times(records: Sequence[PerfRecord], sessions: Mapping[str, dict]
                  ) -> dict[str, tuple[float | None, str, dict]]:
    """session -> (start time, date text, --session-extras): from ReFrame's session_info
    where there is one, else the earliest completion time of its test cases (perflogs)."""
    first: dict[str, float] = {}
    for r in records:
        if r.time is not None and math.isfinite(r.time):
            first[r.session] = min(first.get(r.session, r.time), r.time)
    out = {}
    for s in {r.session for r in records}:
        info = sessions.get(s)
        if info:
            rec = session_record(info)
            t = info.get("time_start_unix")
            t = float(t) if isinstance(t, (int, float)) else first.get(s)
            out[s] = (t, str(rec.get("date") or ""), dict(rec.get("extras") or {}))
        else:
            t = first.get(s)
            date = (_dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                    if t is not None else "")
            out[s] = (t, date, {})
    return out


def refuse_non_finite(records: Sequence[PerfRecord]) -> None:
    """One line naming the first value that is not a finite number."""
    for r in records:
        if r.value is not None and not math.isfinite(r.value):
            raise ResultsError(f"{r.test} {r.pvar}: value {r.value} in session "
                               f"{r.session or r.source} is not a finite number")


def series(records: Sequence[PerfRecord], sessions: Mapping[str, dict]) -> list[FigureHistory]:
    """One history per figure: its sessions in the order they ran (records without a time
    keep the order they were read in), one value per session."""
    refuse_non_finite(records)
    when = session_times(records, sessions)
    order = {s: i for i, s in enumerate(dict.fromkeys(r.session for r in records))}

    def key(s: str):
        t = when[s][0]
        return (0 if t is not None else 1, t if t is not None else 0.0, order[s])

    by: dict[tuple, dict[str, list[PerfRecord]]] = defaultdict(lambda: defaultdict(list))
    empty: dict[tuple, set[str]] = defaultdict(set)  # sessions where the figure had no value
    for r in records:
        if r.value is not None:
            by[(r.test, r.sysenv, r.pvar)][r.session].append(r)
        else:
            empty[(r.test, r.sysenv, r.pvar)].add(r.session)
    out = []
    for (test, sysenv, pvar), per in sorted(by.items()):
        pts = []
        for s in sorted(per, key=key):
            rs = per[s]
            t, date, extras = when[s]
            pts.append(Point(s, t, date, extras, statistics.median(r.value for r in rs),
                             rs[-1].nodes_expr))
        h = FigureHistory(test, sysenv, pvar, per[next(iter(per))][0].unit, pts)
        h.no_value = len(empty[(test, sysenv, pvar)] - set(per))
        out.append(h)
    return out


def judge(h: FigureHistory, tolerance: float = TOLERANCE) -> FigureHistory:
    """Change points of the figure and its status."""
    if len(h.points) < cp.MIN_SESSIONS:
        h.status = "few"
        h.note = f"{len(h.points)} sessions, {cp.MIN_SESSIONS} needed"
        h.note += f", no value in {h.no_value} more" if h.no_value else ""
        return h
    seg = cp.segment([p.value for p in h.points])
    h.noise, h.outliers = seg.noise, seg.outliers
    for c in seg.points:
        prev, here = h.points[c.index - 1], h.points[c.index]
        nodes = f"{prev.nodes} -> {here.nodes}" if prev.nodes != here.nodes else ""
        h.changes.append(Change(c.index, here.session, here.date, here.extras, c.before,
                                c.after, c.step, c.confidence, nodes))
    notes = []
    if h.outliers:
        notes.append("outlier" + ("s" if len(h.outliers) > 1 else "") + " at "
                     + ", ".join(f"#{i + 1}" for i in h.outliers) + " (not a change)")
    if h.changes:
        last = h.changes[-1]
        up = last.after > last.before
        run = h.changes
        first = len(run) - 1
        while first > 0 and (run[first - 1].after > run[first - 1].before) == up:
            first -= 1
        h.since = run[first].index
        base = run[first].before
        h.total = ((last.after - base) / abs(base) if base
                   else math.copysign(math.inf, last.after - base))
        direction = better(h.unit, h.pvar)
        if direction is None:
            h.status = "changed"
        else:
            bad = up if direction == LOWER else not up
            if not bad:
                h.status = "improved"
            elif abs(h.total) > tolerance:
                h.status = "REGRESSED"
            else:
                h.status = "moved"
        steps = len(run) - first
        notes.insert(0, f"{100 * h.total:+.1f}% since #{h.since + 1}"
                     + (f" in {steps} steps" if steps > 1 else ""))
    if h.no_value:
        notes.append(f"no value in {h.no_value} sessions (left out)")
    h.note = "; ".join(notes)
    return h


def verdict(histories: Sequence[FigureHistory], unreadable: int, tolerance: float
            ) -> tuple[str, int]:
    """The closing line and the exit status: 1 when a figure's latest change point is a
    regression beyond the tolerance, 2 when no figure has enough sessions, else 0."""
    judged = [h for h in histories if h.status != "few"]
    n_sessions = len({p.session for h in histories for p in h.points})
    if not judged:
        most = max((len(h.points) for h in histories), default=0)
        return (f"nothing to judge: {len(histories)} figures over {n_sessions} sessions, "
                f"the longest history has {most} sessions, {cp.MIN_SESSIONS} needed"), 2
    bad = [h for h in judged if h.status == "REGRESSED"]
    n_cp = sum(len(h.changes) for h in judged)
    with_cp = sum(bool(h.changes) for h in judged)
    few = len(histories) - len(judged)
    line = (f"history of {len(judged)} figures over {n_sessions} sessions: {n_cp} change points "
            f"in {with_cp} figures, {len(bad)} regressed beyond {100 * tolerance:g}% at their "
            f"latest change point")
    extra = [f"{few} figures with fewer than {cp.MIN_SESSIONS} sessions not judged" if few
             else "", f"could not read {unreadable}"]
    line += "; " + ", ".join(x for x in extra if x)
    if bad:
        names = [f"{h.name} {100 * h.total:+.1f}% at {h.changes[-1].session[:8]}" for h in bad]
        line += ": " + ", ".join(names[:20]) + (f" and {len(names) - 20} more"
                                                if len(names) > 20 else "")
    return line, (1 if bad else 0)


def _extras_text(extras: Mapping) -> str:
    return ",".join(f"{k}={v}" for k, v in extras.items()) or "-"


def render(histories: Sequence[FigureHistory], show_all: bool = False) -> str:
    """One row per change point (and, with `show_all`, one per figure without any)."""
    head = ["test", "system", "figure", "unit", "n", "noise", "at", "session", "date",
            "extras", "before", "after", "step", "sure", "status"]
    body = []
    for h in histories:
        noise = "-" if h.noise is None else f"±{100 * h.noise:.1f}%"
        status = h.status + (f" ({h.note})" if h.note else "")
        if not h.changes:
            if show_all or h.outliers:
                body.append([h.test, h.sysenv, h.pvar, h.unit, str(len(h.points)), noise,
                             "-", "-", "-", "-", "-", "-", "-", "-", status])
            continue
        for k, c in enumerate(h.changes):
            last = k == len(h.changes) - 1
            body.append([h.test, h.sysenv, h.pvar, h.unit, str(len(h.points)), noise,
                         f"#{c.index + 1}", c.session[:8], c.date[:19],
                         _extras_text(c.extras) + (f" nodes {c.nodes}" if c.nodes else ""),
                         f"{c.before:.4g}", f"{c.after:.4g}", f"{100 * c.step:+.1f}%",
                         f"{100 * c.confidence:.1f}%", status if last else "earlier"])
    if not body:
        return "no change point in any figure\n"
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=False)]
    lines = ["  ".join(x.ljust(w) for x, w in zip(head, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(x.ljust(w) for x, w in zip(b, widths, strict=True)).rstrip()
              for b in body]
    return "\n".join(lines) + "\n"

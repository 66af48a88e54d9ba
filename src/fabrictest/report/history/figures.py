"""Each figure's history over stored sessions, its change points, and how each is judged.

A figure is a test case (its display name: test, scenario and other parameters), its
system:partition+environ and a performance variable (a size, a link or a node is in the
name: `bw_1048576`, `stream_node03_to_node01_gbps`, `node_node03_rx_gbps`). Its series is
one value per session (the median of a session's reruns), in the order the sessions ran.
The change points come from :mod:`.changepoints`; they cut the series into levels. A figure
regressed when its latest level is worse, beyond the tolerance, than the last stable level
before its first regression: the earliest level that every later level is worse than (the
bad direction from :mod:`fabrictest.report.records.direction`). So a slow drift of small steps counts as a whole, and
a partial recovery is still a regression (-20 % then +5 % is 16 % below). A latest session
beyond the tolerance and the noise from its level is reported at once ("latest session X %
below, not yet confirmed"), before a change point can be placed. Counts (unit `count`)
follow the count rule (:mod:`fabrictest.report.records.counts`). A figure is one unit: values in other units of its
dimension are converted (:mod:`fabrictest.report.records.units`), other dimensions refused.

Pure: records and sessions in, histories out; the verdict over them and their table are
:mod:`.summary`'s.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fabrictest.report.history import changepoints as cp
from fabrictest.report.history import shift
from fabrictest.report.records import counts, units
from fabrictest.report.records.direction import HIGHER, better
from fabrictest.report.records.refformat import session_record
from fabrictest.report.records.results import PerfRecord, ResultsError

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
    #: the verdict rests on the latest sessions alone (not yet a level)
    unconfirmed: bool = False
    #: the latest sessions the sustained-drop test named (0: none, 1: the latest alone)
    shift_runs: int = 0
    #: the smallest drop this figure's noise lets the test name within 3 runs, when that is
    #: more than the tolerance (else None)
    blind_below: float | None = None
    #: sessions read after its last value (it is absent from them: :mod:`.vanished`)
    absent_latest: int = 0

    @property
    def name(self) -> str:
        return f"{self.test} {self.pvar}"

    def to_dict(self) -> dict:
        return {
            "test": self.test, "system": self.sysenv, "figure": self.pvar, "unit": self.unit,
            "status": self.status, "total": self.total, "note": self.note,
            "no_value": self.no_value, "unconfirmed": self.unconfirmed,
            "shift_runs": self.shift_runs, "blind_below": self.blind_below,
            "absent_latest": self.absent_latest,
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

    rank = {s: i for i, s in enumerate(sorted(when, key=key))}  # the sessions' order, once

    by: dict[tuple, dict[str, list[PerfRecord]]] = defaultdict(lambda: defaultdict(list))
    empty: dict[tuple, set[str]] = defaultdict(set)  # sessions where the figure had no value
    for r in records:
        if r.value is not None:
            by[(r.test, r.sysenv, r.pvar)][r.session].append(r)
        else:
            empty[(r.test, r.sysenv, r.pvar)].add(r.session)
    out = []
    for (test, sysenv, pvar), per in sorted(by.items()):
        order_s = sorted(per, key=rank.__getitem__)
        unit = units.common([r.unit for s in order_s for r in per[s]],
                            f"{test} {pvar}")  # the newest's
        pts = []
        for s in order_s:
            rs = per[s]
            t, date, extras = when[s]
            vals = [r.value if r.unit == unit else units.convert(r.value, r.unit, unit)
                    for r in rs]
            pts.append(Point(s, t, date, extras,
                             vals[0] if len(vals) == 1 else statistics.median(vals),
                             rs[-1].nodes_expr))
        h = FigureHistory(test, sysenv, pvar, unit, pts)
        h.no_value = len(empty[(test, sysenv, pvar)] - set(per))
        out.append(h)
    return out


def _pct(fraction: float) -> str:
    """`16.0%`; never rounded to a whole loss it is not (0.999999 is `99.9999%`)."""
    text = f"{100 * fraction:.1f}"
    if text == "100.0" and fraction != 1:
        text = f"{100 * fraction:.6g}"
    return f"{text}%"


def _worse(a: float, b: float, direction: str) -> bool:
    return a < b if direction == HIGHER else a > b


def _rel(a: float, b: float) -> float:
    return (a - b) / abs(b) if b else math.copysign(math.inf, a - b) if a != b else 0.0


def judge(h: FigureHistory, tolerance: float = TOLERANCE) -> FigureHistory:
    """Change points of the figure and its status."""
    if len(h.points) < cp.MIN_SESSIONS:
        h.status = "few"
        h.note = f"too few runs to judge ({len(h.points)} of {cp.MIN_SESSIONS})"
        h.note += f", no value in {h.no_value} more" if h.no_value else ""
        return h
    values = [p.value for p in h.points]
    seg = cp.segment(values)
    h.noise, h.outliers = seg.noise, seg.outliers
    if seg.points and not shift.end_level_holds(values, seg.points[-1].index, seg.noise,
                                                [c.index for c in seg.points[:-1]],
                                                set(seg.outliers)):
        seg.points.pop()  # one extreme session on a short latest level: not yet a level
    for c in seg.points:
        prev, here = h.points[c.index - 1], h.points[c.index]
        nodes = f"{prev.nodes} -> {here.nodes}" if prev.nodes != here.nodes else ""
        h.changes.append(Change(c.index, here.session, here.date, here.extras, c.before,
                                c.after, c.step, c.confidence, nodes))
    notes = []
    if h.outliers:
        notes.append("outlier" + ("s" if len(h.outliers) > 1 else "") + " at "
                     + ", ".join(f"#{i + 1}" for i in h.outliers) + " (not a change)")
    direction = better(h.unit, h.pvar)
    if h.changes and not counts.is_count(h.unit):  # a count's steps from 0 are no per cent
        steps = _levels(h, direction, tolerance)
        notes.insert(0, f"{100 * h.total:+.1f}% since #{h.since + 1}"
                     + (f" in {steps} steps" if steps > 1 else ""))
    if counts.is_count(h.unit):
        _count_rule(h, notes)
    elif direction is not None and h.status != "REGRESSED":
        _sustained(h, direction, tolerance, notes)
        if h.status != "REGRESSED":
            _latest_session(h, direction, tolerance, notes)
        _blind(h, tolerance, notes)
    if h.no_value:
        notes.append(f"no value in {h.no_value} sessions (left out)")
    h.note = "; ".join(notes)
    return h


def _levels(h: FigureHistory, direction: str | None, tolerance: float) -> int:
    """Status, total change and its start from the levels the change points cut; returns
    the number of steps the total spans."""
    levels = [h.changes[0].before] + [c.after for c in h.changes]
    k = len(levels) - 1
    if direction is not None:
        # the last stable level before the first regression: the earliest level that every
        # later level is worse than
        base = next((j for j in range(k) if all(_worse(levels[i], levels[j], direction)
                                                for i in range(j + 1, k + 1))), None)
        if base is not None:
            h.since = h.changes[base].index
            h.total = _rel(levels[k], levels[base])
            h.status = "REGRESSED" if abs(h.total) > tolerance else "moved"
            return k - base
    # the latest run of steps in one direction (improvements; a figure with no better side)
    up = levels[k] > levels[k - 1]
    first = k - 1
    while first > 0 and (levels[first] > levels[first - 1]) == up:
        first -= 1
    h.since = h.changes[first].index
    h.total = _rel(levels[k], levels[first])
    h.status = "changed" if direction is None else "improved"
    return k - first


def _sustained(h: FigureHistory, direction: str, tolerance: float, notes: list[str]) -> None:
    """The latest 2-5 sessions worse than the level before them beyond the noise
    (:mod:`.shift`): named now, before the rank test can place the change point."""
    s = shift.latest_shift([p.value for p in h.points], direction == HIGHER, h.noise or 0.0,
                           [c.index for c in h.changes], set(h.outliers))
    if not shift.named(s, tolerance):
        return
    side = "below" if direction == HIGHER else "above"
    h.status, h.total, h.unconfirmed = "REGRESSED", s.drop, True
    h.since, h.shift_runs = len(h.points) - s.runs, s.runs
    notes.insert(0, f"latest {s.runs} sessions {_pct(abs(s.drop))} {side} the level before "
                    f"them ({s.z:.1f} x its error), not yet a change point")


def _blind(h: FigureHistory, tolerance: float, notes: list[str]) -> None:
    """Say which drop this noise lets the test see within 3 runs, when it is more than the
    tolerance: a figure too noisy for it is not silently 'ok'."""
    seen = shift.smallest_seen(h.noise or 0.0, tolerance)
    if seen > tolerance:
        h.blind_below = seen
        notes.append(f"at ±{100 * (h.noise or 0):.1f}% noise a drop of {_pct(tolerance)} is "
                     f"not seen within {shift.TARGET_RUNS} runs, {_pct(seen)} is")


def _latest_session(h: FigureHistory, direction: str, tolerance: float, notes: list[str]
                    ) -> None:
    """The latest session beyond the tolerance and the noise from the level it closes, in
    the bad direction: reported now (exit 1), before a second session can confirm it."""
    start = h.changes[-1].index if h.changes else 0
    level_of = [p.value for i, p in enumerate(h.points[start:-1], start)
                if i not in h.outliers]
    if not level_of:
        return
    level = statistics.median(level_of)
    latest = h.points[-1].value
    dev = _rel(latest, level)
    noise = h.noise or 0.0
    if (_worse(latest, level, direction) and abs(dev) > tolerance
            and abs(dev) > cp.SPIKE * noise):
        side = "below" if direction == HIGHER else "above"
        h.status, h.total, h.since, h.unconfirmed = "REGRESSED", dev, len(h.points) - 1, True
        h.shift_runs = 1
        notes.insert(0, f"latest session {_pct(abs(dev))} {side}, not yet confirmed")


def _count_rule(h: FigureHistory, notes: list[str]) -> None:
    """A count's latest sessions against the worst of the sessions before them: the longest
    run of latest sessions each past the count rule's limit of what came before it (a count
    that went from 0-1 to hundreds three sessions ago is REGRESSED, not "+inf %")."""
    values = [p.value for p in h.points]
    worst_before = list(itertools.accumulate(values, max))  # worst of values[:j + 1]
    least_after = list(itertools.accumulate(reversed(values), min))[::-1]  # of values[j:]
    start = next((j for j in range(1, len(values))
                  if least_after[j] > counts.limit([worst_before[j - 1]])), None)
    if start is None:
        return
    run = values[start:]
    _bad, words = counts.past_limit(values[:start], min(run))
    h.status, h.since, h.unconfirmed = "REGRESSED", start, True
    h.shift_runs = len(run)
    h.total = None
    what = ("latest session" if len(run) == 1
            else f"latest {len(run)} sessions, the least")
    notes.insert(0, f"{what} {words}")

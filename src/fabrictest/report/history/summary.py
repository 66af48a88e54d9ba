"""What `fabric-report history` says over the judged histories: the closing verdict line and
its exit status, and the table of change points."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from fabrictest.report.history import changepoints as cp
from fabrictest.report.history import shift
from fabrictest.report.history.figures import FigureHistory
from fabrictest.report.records import counts, units
from fabrictest.report.records.text_table import text_table
from fabrictest.report.records.words import counted


def verdict(histories: Sequence[FigureHistory], unreadable: int, tolerance: float
            ) -> tuple[str, int]:
    """The closing line and the exit status: 1 when a figure regressed (its latest level
    against the last stable one, or its latest session alone), 2 when no figure has enough
    sessions, else 0."""
    judged = [h for h in histories if h.status != "few"]
    n_sessions = len({p.session for h in histories for p in h.points})
    if not judged:
        most = max((len(h.points) for h in histories), default=0)
        return (f"too few runs to judge ({most} of {cp.MIN_SESSIONS}): "
                f"{counted(len(histories), 'figure')} over {counted(n_sessions, 'session')}, "
                f"the longest history has {most}"), 2
    bad = [h for h in judged if h.status == "REGRESSED"]
    n_cp = sum(len(h.changes) for h in judged)
    with_cp = sum(bool(h.changes) for h in judged)
    few = len(histories) - len(judged)
    pending = sum(h.unconfirmed for h in bad)
    line = (f"history of {counted(len(judged), 'figure')} over {counted(n_sessions, 'session')}: "
            f"{counted(n_cp, 'change point')} in {counted(with_cp, 'figure')}, {len(bad)} regressed beyond {100 * tolerance:g}%"
            + (f" ({pending} on the latest session"
               + ("s" if any(h.shift_runs > 1 for h in bad) else "")
               + " alone, not yet confirmed)" if pending else ""))
    blind = [h.blind_below for h in judged if h.blind_below is not None]
    extra = [f"{counted(few, 'figure')} with fewer than {cp.MIN_SESSIONS} sessions not judged" if few
             else "", f"{unreadable} unreadable entries" if unreadable else "",
             f"{counted(len(blind), 'figure')} too noisy to see a {100 * tolerance:g}% drop within "
             f"{shift.TARGET_RUNS} runs (they see {100 * min(blind):.1f}-{100 * max(blind):.1f}%)"
             if blind else ""]
    extra = [x for x in extra if x]
    line += ("; " + ", ".join(extra)) if extra else ""
    if bad:
        names = [_bad_name(h) for h in bad]
        line += "; regressed: " + ", ".join(names[:20]) + (f" and {len(names) - 20} more"
                                                           if len(names) > 20 else "")
    return line, (1 if bad else 0)


def _bad_name(h: FigureHistory) -> str:
    at = h.points[h.since].session[:8] if h.since is not None else "?"
    if counts.is_count(h.unit):
        return f"{h.name} count past the count rule since {at}"
    if h.unconfirmed and h.shift_runs > 1:
        return (f"{h.name} {100 * h.total:+.1f}% over the latest {h.shift_runs} sessions "
                f"since {at} (not yet a change point)")
    if h.unconfirmed:
        return f"{h.name} latest session {at} (not yet confirmed)"
    return f"{h.name} {100 * h.total:+.1f}% since {at}"


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
        head_row = [h.test, h.sysenv, h.pvar, h.unit, str(len(h.points)), noise]
        for k, c in enumerate(h.changes):
            last = k == len(h.changes) - 1 and not h.unconfirmed
            body.append([*head_row, f"#{c.index + 1}", c.session[:8], c.date[:19],
                         _extras_text(c.extras) + (f" nodes {c.nodes}" if c.nodes else ""),
                         units.fmt(c.before), units.fmt(c.after),
                         f"{100 * c.step:+.1f}%" if math.isfinite(c.step) else "from 0",
                         f"{100 * c.confidence:.1f}%", status if last else "earlier"])
        if h.unconfirmed:  # the latest sessions alone: their own row, at the first of them
            p = h.points[h.since]
            before = p.value / (1 + h.total) if h.total not in (None, -1.0) and \
                math.isfinite(h.total) else None
            body.append([*head_row, f"#{h.since + 1}", p.session[:8], p.date[:19],
                         _extras_text(p.extras), units.fmt(before), units.fmt(p.value),
                         "-" if h.total is None else f"{100 * h.total:+.1f}%", "-",
                         status])
        elif not h.changes and (show_all or h.outliers):
            body.append([*head_row, "-", "-", "-", "-", "-", "-", "-", "-", status])
    if not body:
        return "no change point in any figure\n"
    return text_table(head, body)

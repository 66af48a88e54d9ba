"""`fabric-report history`: a figure absent from the latest sessions is said, and fails.

A figure's series holds only the sessions that gave it a value; when its test stopped
running (another benchmark ran instead, the sessions recorded nothing, the latest sessions
ran on another system, the test failed without a value), its history ends where it was
healthy and the verdict would be "ok" on evidence that stopped. Here a judged figure whose
last value is older than the latest session read is counted: the sessions after it are
named and the exit status is 1, as `compare`'s figure missing from the target (unless
`--allow-missing`).

Only sessions ReFrame recorded (run reports, stored sessions: a UUID and a start time) are
ordered here; a perflog's job ids are one per test case, not a session of the suite.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from fabrictest.report.history.figures import FigureHistory
from fabrictest.report.records.results import PerfRecord


def _start(info: Mapping, times: Sequence[float]) -> float | None:
    t = info.get("time_start_unix")
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        return float(t)
    return min(times) if times else None


def latest_sessions(records: Sequence[PerfRecord], sessions: Mapping[str, dict],
                    system: str | None, wanted: Callable[[str], bool]) -> list[str]:
    """The sessions ReFrame recorded, in the order they started (untimed last, as read):
    those ``wanted`` keeps (--tag, --since) and, with ``system``, those that ran on it or
    recorded no figure at all (a session that recorded nothing holds no figure of any
    system)."""
    systems: dict[str, set[str]] = defaultdict(set)
    times: dict[str, list[float]] = defaultdict(list)
    for r in records:
        systems[r.session].add(r.system)
        if r.time is not None:
            times[r.session].append(r.time)
    keep = [s for s in sessions if wanted(s)
            and (system is None or not systems[s] or system in systems[s])]
    read = {s: i for i, s in enumerate(keep)}
    start = {s: _start(sessions[s], times[s]) for s in keep}
    return sorted(keep, key=lambda s: (start[s] is None, start[s] or 0.0, read[s]))


def mark(histories: Sequence[FigureHistory], ordered: Sequence[str],
         records: Sequence[PerfRecord]) -> list[FigureHistory]:
    """Set ``absent_latest`` (and a note) on each judged figure whose last value came before
    the latest of ``ordered``; returns those figures."""
    rank = {s: i for i, s in enumerate(ordered)}
    ran_on: dict[str, set[str]] = defaultdict(set)
    for r in records:
        ran_on[r.session].add(r.system)
    out = []
    for h in histories:
        if h.status == "few" or not h.points or h.points[-1].session not in rank:
            continue
        after = ordered[rank[h.points[-1].session] + 1:]
        if not after:
            continue
        h.absent_latest = len(after)
        system = h.sysenv.split(":")[0]
        where = sorted(set().union(*(ran_on[s] for s in after)))
        why = (f"; they ran on {', '.join(where)} only (select a system with --system)"
               if where and system not in where else "")
        first = f"since {after[0][:8]}" if len(after) > 1 else after[0][:8]
        note = (f"absent from the latest {_sessions(len(after))} ({first}): not measured "
                f"there{why}")
        h.note = f"{h.note}; {note}" if h.note else note
        out.append(h)
    return out


def _sessions(n: int) -> str:
    return "session" if n == 1 else f"{n} sessions"


def amend(line: str, status: int, absent: Sequence[FigureHistory], allowed: bool
          ) -> tuple[str, int]:
    """The verdict line and exit status with the figures absent from the latest sessions:
    named; exit 1 unless ``allowed`` (2, nothing judged, stays 2)."""
    if not absent or status == 2:
        return line, status
    names = [f"{h.name} (absent from the latest {_sessions(h.absent_latest)})"
             for h in absent]
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    n = len(absent)
    line += (f"; {n} figure{'s' if n > 1 else ''} absent from the latest sessions"
             + (" (allowed)" if allowed else "") + f": {shown}")
    return line, status if allowed else max(status, 1)

"""The figures earlier sessions measured and this acceptance run did not (pure).

``fabric-report history`` names a figure absent from the latest sessions
(:mod:`fabrictest.report.history.vanished`); the acceptance page does the same for its run
against the history it is given (``--history``, ``--history-report``): a figure that earlier
sessions of the run's systems measured and the run did not measure at all is missing evidence
(a family that stopped running, a size or scenario no longer asked for). It makes stage 2
incomplete, named among its gaps, unless ``--allow-missing`` (then it is listed and passes).
A figure or test that names a node is not counted: another node set measures other links.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from fabrictest.report.records.node_names import NodeIndex
from fabrictest.report.records.results import PerfRecord

#: figures named in the stage's one gap line (all of them are in the JSON twin)
NAMED = 5


def absent_figures(past: Sequence[PerfRecord], run: Sequence[PerfRecord],
                   run_sessions: Collection[str]) -> list[dict]:
    """One row per figure with a value in an earlier session (``past``, the run's own sessions
    left out) of one of the run's systems that no record of ``run`` holds: test, system,
    figure, unit, the sessions that measured it and the latest of them."""
    if not past:
        return []
    systems = {r.system for r in run}
    have = {(r.test, r.sysenv, r.pvar) for r in run}
    lists = {id(r.nodes): r.nodes for r in past}  # a case's figures share one node list
    index = NodeIndex({n for nodes in lists.values() for n in nodes})
    rows: dict[tuple, dict] = {}
    for r in past:
        key = (r.test, r.sysenv, r.pvar)
        if (r.value is None or r.session in run_sessions or r.system not in systems
                or key in have):
            continue
        row = rows.get(key)
        if row is None:
            if index.names_any(r.pvar) or index.names_any(r.test):
                continue
            row = rows[key] = {"test": r.test, "system": r.sysenv, "figure": r.pvar,
                               "unit": r.unit, "sessions": set(), "last_session": r.session,
                               "last_time": r.time}
        row["sessions"].add(r.session)
        if r.time is not None and (row["last_time"] is None or r.time > row["last_time"]):
            row["last_session"], row["last_time"] = r.session, r.time
    out = [{**row, "sessions": len(row["sessions"])} for row in rows.values()]
    return sorted(out, key=lambda row: (row["test"], row["system"], row["figure"]))


def gap(absent: Sequence[dict], allowed: bool) -> list[str]:
    """Stage 2's gap line for ``absent`` (none when there are none or they are allowed)."""
    if not absent or allowed:
        return []
    names = [f"{a['test']} {a['figure']}" for a in absent]
    n = len(names)
    return [f"{n} figure{'s' if n > 1 else ''} measured in earlier sessions and not in this "
            "run (--allow-missing accepts): " + ", ".join(names[:NAMED])
            + (f" and {n - NAMED} more" if n > NAMED else "")]

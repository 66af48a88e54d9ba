"""Plain-text output of a sweep: summary, per-node table, runs, then the verdict lines.

Up to `FULL_TABLE` nodes every node and every run is listed; above that only the nodes that
are not `ok` and their runs (the JSON always has everything).
"""

from __future__ import annotations

import math

import numpy as np

from .core import SweepResult
from .runs import OK
from .topology import report_lines
from .verdict import NodeRow, fmt

FULL_TABLE = 200


def _side(s) -> str:
    if s is None:
        return f"{'-':>9} {'-':>5} {'-':>5}"
    ratio = "-" if s.ratio is None else f"{s.ratio:.2f}"
    counts = f"{s.slow + s.failed}/{s.runs}"
    return f"{fmt(s.figure):>9} {ratio:>5} {counts:>5}"


def node_table(res: SweepResult) -> str:
    rows: list[NodeRow] = res.verdict.table
    shown = rows if len(rows) <= FULL_TABLE else [r for r in rows if r.status != "ok"]
    lines = [
        f"per-node figures ({res.unit}; send/receive = geometric mean of the runs with partners "
        "that are not slow themselves, ratio = that / cluster level, bad = slow or failed "
        "runs / runs)",
        f"{'node':<16} {'pairs':>5} {'send':>9} {'ratio':>5} {'bad':>5} {'receive':>9} "
        f"{'ratio':>5} {'bad':>5}  status",
    ]
    if len(shown) < len(rows):
        lines[0] += f"; {len(rows) - len(shown)} nodes ok, not listed"
    for row in shown:
        sides = []
        for s in (row.send, row.receive):
            if s is not None and s.state not in ("ok", "unmeasured"):
                sides.append(f"{s.direction} {s.state}")
        detail = f" ({', '.join(sides)})" if sides and row.status != "ok" else ""
        lines.append(f"{row.node:<16} {row.pairs:>5} {_side(row.send)} {_side(row.receive)}  "
                     f"{row.status}{detail}")
    return "\n".join(lines)


def run_table(res: SweepResult) -> str:
    t = res.table
    lv = res.level
    keep = np.ones(len(t), dtype=bool)
    note = ""
    if len(res.nodes) > FULL_TABLE:
        bad = {t.index[r.node] for r in res.verdict.table if r.status != "ok"}
        idx = np.array(sorted(bad), dtype=np.int64)
        keep = np.isin(t.src, idx) | np.isin(t.dst, idx) | (t.status != OK)
        note = "; only runs of nodes that are not ok, and failed runs"
    lines = [f"runs ({res.unit}; a->b: a sends, b receives{note})",
             f"{'round':>5} {'kind':<6} {'run':<34} {'figure':>10}  state"]
    cut = lv.limit(lv.cut)
    for j in np.flatnonzero(keep).tolist():
        r = t.run(j)
        if r.ok:
            state = "slow" if (cut is not None and r.value < cut) else "ok"
            fig = fmt(r.value)
        else:
            state, fig = r.status, "-"
        detail = f"  {' '.join(r.detail.split())[:100]}" if (r.detail and not r.ok) else ""
        lines.append(f"{r.round:>5} {r.kind:<6} {r.src + '->' + r.dst:<34} {fig:>10}  "
                     f"{state}{detail}")
    return "\n".join(lines)


def summary(res: SweepResult) -> str:
    lv = res.level
    ev = res.evidence
    u = res.unit
    screen = sum(1 for r in res.rounds if r.kind == "screen")
    lines = [
        f"sweep of {len(res.nodes)} nodes, {res.measurement}: {len(res.rounds)} rounds "
        f"({screen} screening + {len(res.rounds) - screen} extra; at most {res.max_rounds}), "
        f"{len(res.table)} runs, {res.seconds:.1f} s; stopped: {res.stop_reason}",
        f"cluster level {fmt(lv.center)} {u} from {lv.source} ({lv.clean_runs} clean screening "
        f"runs; {lv.left_out} node-directions left out as clearly slow; spread "
        f"{lv.sigma:.3f} in log per run, from {lv.spread_runs} runs)",
        f"a direction is named when its runs average below {fmt(lv.limit(lv.cut))} {u} "
        f"({math.exp(lv.cut):.2f}x) and significantly so (false discovery rate "
        f"{res.params.fdr:g} over {2 * len(res.nodes)} node-directions and {lv.looks} looks); "
        f"cleared when clear of {math.exp(ev.design):.2f}x",
    ]
    if res.expected is not None:
        e = res.expected
        lines.append(f"expected {fmt(e.value)} {e.unit} per run from {e.source}: a direction "
                     f"below {fmt(e.floor)} {e.unit} ({100 * e.lower:+.1f}%) is named too")
    else:
        lines.append(f"the cluster level is unjudged ({res.unjudged or 'no reference'}): "
                     "nodes are held against each other only, so a drop every pair shares "
                     "passes (give --expect or --expect-from)")
    if res.topology_note:
        lines.append(f"topology: {res.topology_note}")
    for rnd in res.rounds:
        if rnd.reason:
            lines.append(f"round {rnd.index}: {rnd.reason}")
    return "\n".join(lines)


def render(res: SweepResult, pairs: bool = True) -> str:
    parts = [summary(res), "", node_table(res)]
    if res.uplinks:
        parts += ["", *report_lines(res.uplinks)]
    if pairs:
        parts += ["", run_table(res)]
    head = "verdict:"
    if res.interrupted:
        head = f"verdict so far ({res.stop_reason}):"
    parts += ["", head, *res.verdict.lines()]
    return "\n".join(parts) + "\n"

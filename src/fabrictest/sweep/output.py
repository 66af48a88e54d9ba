"""Plain-text output of a sweep: per-node table, raw pair figures, then the verdict lines."""

from __future__ import annotations

from .core import SweepResult
from .verdict import _fmt, pair_state


def node_table(res: SweepResult) -> str:
    u = res.unit
    head = f"{'node':<16} {'pairs':>5} {'ok':>3} {'slow':>4} {'fail':>4} " \
           f"{'median':>10} {'min':>10} {'max':>10} {'figure':>10} {'ratio':>6}  status"
    lines = [f"per-node figures ({u}; figure = median of pairs with non-suspect partners, "
             "ratio = figure / cluster level)", head]
    for row in res.verdict.table:
        ratio = "-" if row.ratio is None else f"{row.ratio:.2f}"
        lines.append(
            f"{row.node:<16} {row.pairs:>5} {row.ok:>3} {row.slow:>4} {row.failed:>4} "
            f"{_fmt(row.median):>10} {_fmt(row.min):>10} {_fmt(row.max):>10} "
            f"{_fmt(row.figure):>10} {ratio:>6}  "
            f"{row.status}"
        )
    return "\n".join(lines)


def pair_table(res: SweepResult) -> str:
    u = res.unit
    lines = [f"pair figures ({u})", f"{'round':>5} {'kind':<8} {'pair':<34} {'figure':>10}  state"]
    for r in res.results:
        state = pair_state(r, res.level)
        fig = _fmt(r.value) if r.ok else r.status
        detail = f"  {r.detail[:100]}" if (r.detail and not r.ok) else ""
        lines.append(f"{r.round:>5} {r.kind:<8} {r.a + ',' + r.b:<34} {fig:>10}  {state}{detail}")
    return "\n".join(lines)


def summary(res: SweepResult) -> str:
    lv = res.level
    return (
        f"sweep of {len(res.nodes)} nodes, {res.measurement}: {len(res.rounds)} rounds "
        f"({sum(1 for r in res.rounds if r.kind == 'screen')} screening + "
        f"{sum(1 for r in res.rounds if r.kind == 'confirm')} confirmation; "
        f"planned at most {res.planned_rounds + 1}), {len(res.results)} pair measurements, "
        f"{res.seconds:.1f} s\n"
        f"cluster level {_fmt(lv.center)} {res.unit} from {lv.source} "
        f"({lv.clean_pairs} clean pairs, spread {lv.sigma:.3f}); slow below "
        f"{_fmt(lv.screen_limit())} {res.unit} when screening, "
        f"{_fmt(lv.confirm_limit())} {res.unit} when confirming"
    )


def render(res: SweepResult, pairs: bool = True) -> str:
    parts = [summary(res), "", node_table(res)]
    if pairs:
        parts += ["", pair_table(res)]
    parts += ["", "verdict:", *res.verdict.lines()]
    return "\n".join(parts) + "\n"

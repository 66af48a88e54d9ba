"""The acceptance page's tables and their cells: a status word, a table cut at MAX_ROWS (the
JSON twin lists every failing row, counts the passing), numbers, and the rows of checks, figures, nodes, impact factors
and congestion counters, shared by the failures and the folded rows."""

from __future__ import annotations

from collections.abc import Sequence

from fabrictest.report.page.markup import escape as _e
from fabrictest.report.records.units import fmt

#: rows per table on the page; failing rows come first and are never among those cut
MAX_ROWS = 300


def status_word(status: str) -> str:
    return f'<span class="st st-{_e(status)}">{_e(status.upper())}</span>'


def table(head: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = (),
           limit: int = MAX_ROWS) -> str:
    """``rows``: cells already escaped (a cell starting with ``<td`` is taken whole)."""
    body = []
    for i, row in enumerate(rows[:limit]):
        cls = classes[i] if i < len(classes) else ""
        cells = "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in row)
        body.append(f'<tr class="{cls}">{cells}</tr>')
    more = (f'<p class="note">{len(rows) - limit} more rows: the JSON twin lists every '
            "failing one and counts the passing ones.</p>"
            if len(rows) > limit else "")
    return ("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(body) + "</tbody></table>" + more)


def num_cell(v) -> str:
    return f"<td class=num>{_e(fmt(v))}</td>"


def int_cell(n: int) -> str:
    return f"<td class=num>{n:,}</td>"


def pct(ratio) -> str:
    return "-" if ratio is None else f"{100 * (ratio - 1):+.1f}%"


def check_rows(rows: Sequence[dict]) -> list[list[str]]:
    return [[_e(r["node"]), _e(r["nic"]), _e(r["check"]),
             "PASS" if r["ok"] else "<b>FAIL</b>", _e(r["found"]), _e(r["expected"]),
             _e(r["source"])] for r in rows]


CHECK_HEAD = ["node", "NIC/port", "check", "result", "found", "expected", "from"]


def figure_rows(figs: list[dict]) -> tuple[list, list]:
    rows, classes = [], []
    for r in figs:
        lo, hi = r["band"]
        rows.append([_e(r["set"]), _e(r["test"]), _e(r["nodes"]), _e(r["figure"]),
                     num_cell(r["value"]), _e(r["unit"]), num_cell(r["reference"]),
                     f"<td class=num>{pct(lo)} .. {pct(hi) if hi else '+inf'}</td>",
                     f"<td class=num>{r['ratio']:.3f}</td>",
                     "<b>FAIL</b>" if r["failing"] else "ok"])
        classes.append("fail" if r["failing"] else "")
    return rows, classes


FIGURE_HEAD = ["set", "test", "nodes", "figure", "value", "unit", "reference", "band",
                "ratio", "result"]


def short_nodes(nodes: Sequence[str], at_most: int = 12) -> str:
    return ", ".join(nodes[:at_most]) + (f" and {len(nodes) - at_most} more"
                                         if len(nodes) > at_most else "")


def node_rows(nodes: Sequence[dict]) -> tuple[list, list]:
    return ([[_e(f"{n['system']}:{n['node']}"), num_cell(n["tests"]), _e(n["changed"] or "none"),
              _e("; ".join(n["failures"] + n["unread"]) or "ok")] for n in nodes],
            ["fail" if n["failures"] else "incomplete" if n["unread"] else "" for n in nodes])


NODE_HEAD = ["node", "tests", "changed over the run", "verdict"]


def impact_table(impact: Sequence[dict]) -> str:
    return ("<p><b>Congestion impact</b> <span class=note>(victim isolated and beside the "
            "aggressors; impact above 1 is worse under load)</span></p>"
            + table(["test", "probe", "isolated", "loaded", "impact", "band", "status"],
                     [[_e(x["test"]), _e(x["probe"]), num_cell(x["isolated"]),
                       num_cell(x["loaded"]), num_cell(x["impact"]),
                       _e(f"{fmt(x['band'][0])} .. {fmt(x['band'][1])}"),
                       _e(x["status"])] for x in impact],
                     ["fail" if x["status"] == "fail" else "" for x in impact]))


def congestion_table(rows: Sequence[dict]) -> str:
    return ("<p><b>Congestion counters per node and test</b></p>"
            + table(["node", "counter", "test", "increase", "at most"],
                     [[_e(c["node"]), _e(c["counter"]), _e(c["test"]), num_cell(c["value"]),
                       num_cell(c["limit"])] for c in rows],
                     ["fail" if c["failing"] else "" for c in rows]))


# --- every row, folded ----------------------------------------------------------------------

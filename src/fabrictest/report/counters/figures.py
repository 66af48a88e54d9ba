"""The per-test counter figures (``counters_<node>_<counter>``, the increase during each
multi-node test): which node and counter a figure names, and their section of the html page."""

from __future__ import annotations

from collections.abc import Sequence

from fabrictest.counters.kinds import KINDS
from fabrictest.report.page.markup import escape as _e
from fabrictest.report.records.results import PerfRecord
from fabrictest.report.records.units import fmt as _n


def counter_figure(pvar: str) -> tuple[str, str] | None:
    """``counters_node03_port_xmit_wait`` -> ('node03', 'port_xmit_wait'); None otherwise."""
    if not pvar.startswith("counters_"):
        return None
    for name in sorted(KINDS, key=len, reverse=True):
        node = pvar[len("counters_"):-len(name) - 1]
        if pvar.endswith("_" + name) and node:
            return node, name
    return None


def counter_section(records: Sequence[PerfRecord]) -> str:
    """The congestion counters per node (the base's ``counters_<node>_<counter>`` figures, an
    increase during each test): per node and counter, the total over the tests and the test
    that saw the most. Empty when the results have none."""
    table: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for r in records:
        place = counter_figure(r.pvar)
        if place and r.value is not None:
            table.setdefault(place, []).append((r.value, r.test))
    if not table:
        return ""
    rows = "".join(
        f"<tr><td>{_e(node)}</td><td>{_e(name)}</td><td class=num>{_n(sum(v for v, _ in vals))}"
        f"</td><td class=num>{len(vals)}</td><td class=num>{_n(max(vals)[0])}</td>"
        f"<td>{_e(max(vals)[1])}</td></tr>"
        for (node, name), vals in sorted(table.items()))
    return ("<h2>Counters per node</h2><p class=note>Congestion counters read on every node "
            "before and after each multi-node test (docs/counters.md): their increase. Links "
            "that went down and error counters fail the test itself.</p><table><tr><th>node"
            "</th><th>counter</th><th>total</th><th>tests</th><th>most in one test</th><th>"
            "that test</th></tr>" + rows + "</table>")

"""The html report's counters per node: the base's counters_<node>_<counter> figures."""

from __future__ import annotations

from fabrictest.report.counters.figures import counter_figure, counter_section
from fabrictest.report.records.results import PerfRecord


def _rec(test, pvar, value):
    return PerfRecord(test=test, base="TxRxTest", system="vcluster", partition="nodes",
                      environ="openmpi", pvar=pvar, value=value, unit="count")


def test_counter_figures_are_split_into_node_and_counter():
    assert counter_figure("counters_node03_RetransSegs") == ("node03", "RetransSegs")
    assert counter_figure("counters_nid000006_port_xmit_wait") == ("nid000006", "port_xmit_wait")
    assert counter_figure("counters_node_3_rx_pause_ctrl_phy") == ("node_3", "rx_pause_ctrl_phy")
    assert counter_figure("stream_gbps") is None
    assert counter_figure("counters_node03_bytes") is None


def test_section_totals_per_node_and_names_the_worst_test():
    html = counter_section([
        _rec("paired many", "counters_node03_RetransSegs", 687),
        _rec("paired one", "counters_node01_RetransSegs", 1),
        _rec("bisection", "counters_node03_RetransSegs", 13),
        _rec("paired many", "stream_gbps", 0.19),
    ])
    assert "<h2>Counters per node</h2>" in html
    assert ("<tr><td>node03</td><td>RetransSegs</td><td class=num>700</td><td class=num>2</td>"
            "<td class=num>687</td><td>paired many</td></tr>") in html
    assert "<td>node01</td>" in html and "stream_gbps" not in html
    assert counter_section([_rec("x", "stream_gbps", 1.0)]) == ""

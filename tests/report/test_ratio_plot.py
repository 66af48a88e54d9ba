"""The ratio plot a person reads (issue 30): tick labels around 1 that do not run into each
other, and loose bands (a lower bound of -99 %, an upper one of +999x) that neither widen the
axis until the healthy points sit in one pixel nor end at the axis as if bounded there (an
arrow marks where a band goes on). The PNGs were looked at (before: labels 0.8 0.9 1 1.1
1.25 1.5 2 printed over each other, an axis from 0.001 to 1000 for points within 1 %)."""

from __future__ import annotations

import math

import pytest

from fabrictest.report.compare.ratios import (
    BAND_VIEW,
    TICK_GAP,
    RatioRow,
    _axis_limits,
    ratio_plot,
    ticks_for,
)


def row(value, ref, lower=None, upper=None, pvar="bw", unit="Gbps"):
    return RatioRow("T", "s:p+e", "", pvar, unit, value, ref, lower, upper)


@pytest.mark.parametrize("lo,hi", [(0.6, 1.7), (0.001, 1000), (0.5, 3), (0.95, 1.05),
                                   (0.2, 1.3), (1e-3, 1.5)])
def test_tick_labels_keep_apart(lo, hi):
    ticks = ticks_for(lo, hi)
    assert 1 in ticks or not lo <= 1 <= hi
    width = math.log10(hi / lo)
    gaps = [math.log10(b / a) for a, b in zip(ticks, ticks[1:], strict=False)]
    assert all(g >= TICK_GAP * width - 1e-12 for g in gaps), (ticks, gaps)
    assert len(ticks) >= 3


def test_loose_bands_do_not_widen_the_axis():
    rows = [row(0.189, 0.19, -0.03), row(21.5, 22.5, -0.99, pvar="node_bw"),
            row(1.1e-3, 1e-3, None, 999.0, pvar="t_irecv", unit="s")]
    lo, hi = _axis_limits(rows)
    assert 0.5 < lo < 0.8 and 1.25 < hi < 2.0  # not 0.01 .. 1000
    # a point far out still shows: the axis follows the points, not the bands
    lo, hi = _axis_limits([*rows, row(0.0019, 0.19, -0.03)])
    assert lo < 0.01 and BAND_VIEW[0] > lo


def test_the_plot_draws_loose_bands_to_the_edge_with_an_arrow(tmp_path):
    rows = [row(0.189, 0.19, -0.03), row(21.5, 22.5, -0.99, pvar="node_bw"),
            row(1.1e-3, 1e-3, None, 999.0, pvar="t_irecv", unit="s")]
    (image,) = ratio_plot(rows, tmp_path)
    assert (tmp_path / image["png"]).stat().st_size > 5000


def test_per_node_worst_is_the_worst_on_the_bad_side():
    """Issue 43: "worst figure" showed the farthest from 1 either way (a rate at 2.113x its
    reference beside one at 0.6x); the worst is the lowest ratio for a rate, the highest for a
    time, the farthest either way for a figure with no better direction."""
    from fabrictest.report.compare.ratios import per_node

    def on(node, value, ref, pvar, unit):
        r = row(value, ref, pvar=pvar, unit=unit)
        r.nodes = node
        return r

    rows = [on("node01", 21.13, 10, "node_node01_rx_gbps", "Gbps"),
            on("node01", 6.0, 10, "node_node01_tx_gbps", "Gbps"),
            on("node02", 0.5, 1, "node_node02_lat", "us"),
            on("node02", 1.2, 1, "node_node02_t_wait", "us"),
            on("node03", 1.5, 1, "node_node03_rounds", "rounds"),
            on("node03", 0.5, 1, "node_node03_pairs", "pairs")]
    worst = {n["node"]: n["worst"] for n in per_node(rows)}
    assert worst["node01"].pvar == "node_node01_tx_gbps"  # 0.6, not 2.113
    assert worst["node02"].pvar == "node_node02_t_wait"  # 1.2, not 0.5
    assert worst["node03"].pvar == "node_node03_pairs"  # |log 0.5| > |log 1.5|

"""Calibrating counter figures (unit `count`): every node's figure pooled under the headline,
reference = the worst healthy count (at least COUNT_MIN), upper bound +COUNT_MARGIN; and the
bound it writes passes the healthy runs and fails 1 % loss on a node (the vcluster's figures)."""

from __future__ import annotations

import pytest

from fabrictest.references import Reference
from fabrictest.report.calibrate import method as cal
from fabrictest.report.records.results import PerfRecord

ALIASES = {r"counters_.+_RetransSegs": "counters_RetransSegs"}
VARS = {"reference_aliases": ALIASES, "informational_perf_vars": [r"counters_.+"],
        "scenario": "paired"}


def rec(session: str, node: str, value: float, pvar: str | None = None, unit="count"):
    return PerfRecord(test="TxRxTest %scenario=paired", base="TxRxTest", system="vcluster",
                      partition="nodes", environ="openmpi",
                      pvar=pvar or f"counters_{node}_RetransSegs", value=value, unit=unit,
                      session=session, variables=VARS)


def index_of(_cls, _r):
    return ["$system", "scenario"]


def calibrate(healthy: dict[str, list[float]]):
    recs = [rec(s, f"node{i:02d}", v) for s, vals in healthy.items() for i, v in enumerate(vals)]
    return cal.calibrate(recs, list(healthy), index_of)


def test_counts_are_pooled_under_their_headline_and_bounded_by_the_worst():
    out = calibrate({"s1": [0, 1, 0, 0], "s2": [0, 0, 40, 0], "s3": [1, 0, 0, 0]})
    (entry,) = out.entries
    assert (entry.cls, entry.keys, entry.pvar) == ("TxRxTest", ("paired",), "counters_RetransSegs")
    assert (entry.ref, entry.lower, entry.upper) == (40.0, None, cal.COUNT_MARGIN)
    assert entry.summary().startswith("worst 40 count")
    bound = Reference(entry.ref, entry.lower, entry.upper, entry.unit)
    assert bound.accepts(40) and bound.accepts(0)  # every healthy run passes
    assert not bound.accepts(687)  # node03 with 1 % loss (docs/counters.md) fails


def test_a_quiet_fabric_still_gets_room():
    """0-1 per node in quiet sessions; 18 was seen under load on the same healthy links."""
    (entry,) = calibrate({"s1": [0, 1], "s2": [0, 0], "s3": [1, 0]}).entries
    assert entry.ref == cal.COUNT_MIN
    assert Reference(entry.ref, entry.lower, entry.upper, entry.unit).accepts(18)


def test_counts_need_three_sessions_like_everything_else():
    out = calibrate({"s1": [0, 3], "s2": [1, 0]})
    assert not out.entries and "2 sessions, 3 needed" in out.refused[0]


@pytest.mark.parametrize("pvar, unit", [("counters_node01_RetransSegs", "Gbps"),
                                        ("counters_total", "count")])
def test_other_per_item_and_informational_figures_are_left_out(pvar, unit):
    """A per-item figure that is not a count, and an informational count with no headline."""
    recs = [rec(s, "node01", 1.0, pvar=pvar, unit=unit) for s in ("s1", "s2", "s3")]
    assert cal.calibrate(recs, ["s1", "s2", "s3"], index_of).entries == []

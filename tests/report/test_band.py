"""The band arithmetic is written once (fabrictest.references.band, issue 43): the reference
files' bounds, the report's records, its impact rows and its ratios all give the same edges,
and a negative reference's edges are ReFrame's own (assert_reference mirrors the thresholds;
before, the reference files swapped the products, which moved an asymmetric band)."""

from __future__ import annotations

import math

import pytest
from reframe.core.exceptions import SanityError
from reframe.utility import sanity

from fabrictest.references import Reference, band
from fabrictest.report.attribute.impact import impact_rows
from fabrictest.report.compare.ratios import RatioRow
from fabrictest.report.records.results import PerfRecord


@pytest.mark.parametrize("value, lower, upper", [(10.0, -0.1, 0.2), (10.0, None, 0.5),
                                                 (10.0, -0.3, None), (-10.0, -0.1, 0.2),
                                                 (-10.0, None, 0.2)])
def test_every_reader_gives_the_same_edges(value, lower, upper):
    lo, hi = band(value, lower, upper)
    ref = Reference(value, lower, upper, "Gbps")
    assert ref.bounds() == (-math.inf if lo is None else lo, math.inf if hi is None else hi)
    rec = PerfRecord("T", "T", "s", "p", "e", "bw", 9.0, "Gbps", ref=value, lower=lower,
                     upper=upper)
    assert rec.band() == (lo, hi)
    ratio = RatioRow("T", "s:p+e", "", "bw", "Gbps", 9.0, value, lower, upper)
    assert ratio.band == band(1.0, lower, upper)


def test_a_negative_reference_is_judged_as_reframe_judges_it():
    lo, hi = band(-10.0, -0.1, 0.2)
    assert (lo, hi) == pytest.approx((-11.0, -8.0))
    for inside in (-10.9, -8.1):
        sanity.evaluate(sanity.assert_reference(inside, -10.0, -0.1, 0.2))
    for outside in (-11.1, -7.9):
        with pytest.raises(SanityError):
            sanity.evaluate(sanity.assert_reference(outside, -10.0, -0.1, 0.2))


def test_impact_rows_take_the_same_band():
    isolated = PerfRecord("CongestionTest", "CongestionTest", "s", "p", "e", "bw_impact", 0.5,
                          "x", ref=0.6, lower=-0.5, upper=0.25)
    rows = impact_rows([isolated])
    assert [r.band() for r in rows] == [band(0.6, -0.5, 0.25)]

"""The html report's congestion impact-factor view: per test case and probe the isolated and
loaded figures, the impact factor, its reference band and whether it falls outside."""

from __future__ import annotations

from fabrictest.report.attribute.impact import impact_rows, impact_section
from fabrictest.report.html.page import page
from fabrictest.report.records.results import PerfRecord

INCAST = "CongestionTest %aggressors=incast"


def rec(test, pvar, value, unit, ref=None, lower=None, upper=None, base="CongestionTest"):
    return PerfRecord(test=test, base=base, system="vcluster", partition="nodes",
                      environ="openmpi", pvar=pvar, value=value, unit=unit, ref=ref,
                      lower=lower, upper=upper)


def records(bw_impact: float) -> list[PerfRecord]:
    # figures of a vcluster run (reference/vcluster.yaml's provenance)
    return [
        rec(INCAST, "bw_isolated_gbps", 0.1911, "Gbps", 0.19, -0.05),
        rec(INCAST, "bw_loaded_gbps", 0.1911 / bw_impact, "Gbps", 0.043, -0.5),
        rec(INCAST, "bw_impact", bw_impact, "x", 4.5, -0.55, 0.6),
        rec(INCAST, "lat_isolated_us", 9.02, "us", 50.0, None, 39.0),
        rec(INCAST, "lat_loaded_us", 3291.57, "us", 5000.0, -0.5, 3.0),
        rec(INCAST, "lat_impact", 364.9, "x", 100.0, -0.9, 99.0),
        rec("GpcnetLoadTest %per_nic=1", "lat_impact_avg", 1.4, "x", base="GpcnetLoadTest"),
        rec("GpcnetLoadTest %per_nic=1", "gpcnet_isolated_rr_two_sided_lat_avg", 13.9, "us",
            base="GpcnetLoadTest"),
        rec("GpcnetLoadTest %per_nic=1", "gpcnet_loaded_rr_two_sided_lat_avg", 19.8, "us",
            base="GpcnetLoadTest"),
        rec("OsuPt2PtTest %benchmark=osu_bw", "peak_bw", 24.0, "MB/s", 24.0, -0.3),
    ]


def test_rows_pair_isolated_loaded_and_impact():
    rows = impact_rows(records(4.44))
    assert [(r.test, r.probe) for r in rows] == [
        ("CongestionTest %aggressors=incast", "latency (average)"),
        ("CongestionTest %aggressors=incast", "bandwidth"),
        ("GpcnetLoadTest %per_nic=1", "RR two-sided latency (average)"),
    ]
    lat, bw, gpcnet = rows
    assert (lat.isolated.value, lat.loaded.value) == (9.02, 3291.57)
    assert bw.band() == (4.5 * (1 - 0.55), 4.5 * 1.6) and bw.status() == "within"
    assert (gpcnet.isolated.value, gpcnet.loaded.value) == (13.9, 19.8)
    assert gpcnet.status() == "unreferenced"


def test_an_impact_outside_its_band_is_marked():
    # the incast no longer hurts the victim: aggressors that stopped loading its link
    (bw,) = [r for r in impact_rows(records(1.1)) if r.probe == "bandwidth"]
    assert bw.status() == "fail"
    html = impact_section(records(1.1))
    assert '<tr class="fail"><td>CongestionTest %aggressors=incast</td>' in html
    assert "2.02 .. 7.2 (ref 4.5)" in html


def test_page_has_the_view(tmp_path):
    text = page(title="t", sources=["x"], records=records(4.44), size_images=[],
                stream_images=[], sweeps=[], comparison=None, outdir=tmp_path)
    assert "<h2>Congestion impact factors</h2>" in text
    assert "above 1 is worse under load" in text
    empty = page(title="t", sources=["x"], records=records(4.44)[-1:], size_images=[],
                 stream_images=[], sweeps=[], comparison=None, outdir=tmp_path)
    assert "No congestion impact factors in these results." in empty

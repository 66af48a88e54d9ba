"""issue 40: what compare (and every command reading run reports) refuses in one line: a figure
of JSON ``true``, a reference no fabric figure can be (1e-300 Gbps), a band that reaches 0 on a
rate (every figure passes)."""

from __future__ import annotations

import json

import pytest
from _reports import fabric_report, report, write

from fabrictest.parsers import physical
from fabrictest.report.records.results import ResultsError, read_report


def _with(value, ref=100.0, lower=-0.1, unit="MB/s") -> dict:
    rep = report(0, {"bw": (100.0, "MB/s")})
    rep["runs"][0]["testcases"][0]["perfvalues"]["sys:default:bw"][:5] = [
        value, ref, lower, None, unit]
    return rep


@pytest.mark.parametrize(("value", "ref", "lower", "unit", "why"), [
    (True, 100.0, -0.1, "MB/s", "a JSON boolean is not a figure"),
    (100.0, 1e-300, -0.1, "Gbps", "reference 1e-300 Gbps is below what a data rate"),
    (100.0, 100.0, -1.0, "MB/s", "a band reaching 0 accepts every figure"),
    (100.0, 100.0, -1.5, "MB/s", "a band reaching 0 accepts every figure"),
])
def test_a_figure_or_band_no_run_has_is_refused_in_one_line(value, ref, lower, unit, why):
    assert read_report(_with(100.0), "ok.json").records[0].value == 100.0
    with pytest.raises(ResultsError) as err:
        read_report(_with(value, ref, lower, unit), "bad.json")
    line = str(err.value)
    assert "\n" not in line and line.startswith("bad.json: ") and why in line, line


def test_compare_exits_non_zero_on_a_boolean_figure(tmp_path):
    base = write(tmp_path / "b", [{"bw": (100.0, "MB/s", 100.0, -0.1, None)}])
    target = tmp_path / "t" / "run-00000.json"
    target.parent.mkdir()
    target.write_text(json.dumps(_with(True)))
    rc, _out, err = fabric_report("compare", "--report", base, "--report", str(target))
    assert rc != 0 and "a JSON boolean is not a figure" in err, (rc, err)


@pytest.mark.parametrize(("value", "unit", "ok"), [
    (400, "Gbps", True), (0.5, "us", True), (25.0, "MB/s", True), (3600, "s", True),
    (1e-9, "Gbps", False), (1e15, "us", False), (1e-300, "GB/s", False), (1e-4, "ns", False),
    (1e-300, "x", True),  # a ratio has no physical bound here
])
def test_plausible_rates_and_times(value, unit, ok):
    assert (physical.implausible(value, unit) is None) == ok

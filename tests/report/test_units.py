"""Units end to end (issue 27): every figure keeps its unit; `compare`, `history`, `html` and
`calibrate` convert within one dimension (bit and byte rates, time units) and refuse a figure
given in units of different dimensions, in one line; counts follow the count rule; the
suite's perflogs are read by figure name.

Each case of the issue is here as it was reported, on run reports written in ReFrame's shape
(tests/report/_reports.py) and on the real perflogs of one default run on `local`
(tests/report/data/SOURCES.md). On the code before this change each failed as the issue says
("improved (+89900 %)", "REGRESSED (-99.9 %)", "+6085 % improved", exit 0 on 687
retransmissions, `node_vm_rx_gbps` read as the first transmitter's rate).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from _reports import fabric_report, write

from fabrictest.report.compare.rows import compare
from fabrictest.report.records.perflogs import read_perflogs
from fabrictest.report.records.results import PerfRecord

DATA = Path(__file__).resolve().parent / "data"


def _noisy(n: int, level: float, noise: float = 0.004, seed: int = 1) -> list[float]:
    return list(level * (1 + noise * np.random.default_rng(seed).standard_normal(n)))


def _history_json(tmp_path, glob) -> tuple[int, dict, str]:
    rc, out, err = fabric_report("history", "--report", glob, "--json", tmp_path / "h.json")
    assert "Traceback" not in out + err
    figs = json.loads((tmp_path / "h.json").read_text())["figures"] if rc in (0, 1) else []
    return rc, {f["figure"]: f for f in figs}, out + err


# -- the conversion table ------------------------------------------------------------------
@pytest.mark.parametrize("src,dst,factor", [
    ("Gbps", "MB/s", 125.0), ("GB/s", "MB/s", 1000.0), ("MiB/s", "MB/s", 1.048576),
    ("Gb/s", "Gbps", 1.0), ("B/s", "bps", 8.0), ("ms", "us", 1000.0), ("µs", "us", 1.0),
    ("usec", "ns", 1000.0), ("s", "ms", 1000.0), ("count", "count", 1.0), ("x", "x", 1.0),
])
def test_conversion_within_a_dimension(src, dst, factor):
    from fabrictest.report.records import units

    assert units.factor(src, dst) == pytest.approx(factor)


@pytest.mark.parametrize("a,b", [("MB/s", "us"), ("Gbps", "count"), ("x", "%"),
                                 ("msg/s", "MB/s"), ("s", "")])
def test_units_of_different_dimensions_are_refused(a, b):
    from fabrictest.report.records import units

    with pytest.raises(units.UnitError, match="not one dimension"):
        units.factor(a, b)
    with pytest.raises(units.UnitError, match=r"T bw: given in .*: not one figure"):
        units.common([a, b], "T bw")


def test_figures_are_printed_with_4_significant_digits():
    from fabrictest.report.records import units

    assert units.fmt(3.2349999999999995e-07) == "3.235e-07"
    assert units.fmt(12124.999999999998) == "1.212e+04"
    assert units.fmt_unit(57.24963145182429, "Gbps") == "57.25 Gbps"


# -- history ------------------------------------------------------------------------------
def test_history_gbs_then_mbs_with_a_real_10_percent_drop_regressed(tmp_path):
    """Was exit 0 "improved (+89900 %)": the MB/s sessions read as 1000 times faster."""
    sessions = [{"bw": (v, "GB/s")} for v in _noisy(12, 100.0)]
    sessions += [{"bw": (v, "MB/s")} for v in _noisy(8, 90000.0, seed=2)]
    rc, figs, text = _history_json(tmp_path, write(tmp_path / "r", sessions))
    assert rc == 1, text
    bw = figs["bw"]
    assert bw["unit"] == "MB/s" and bw["status"] == "REGRESSED"
    assert bw["total"] == pytest.approx(-0.10, abs=0.01)
    assert [c["index"] for c in bw["change_points"]] == [12]


def test_history_us_then_ms_with_latency_50_percent_worse_regressed(tmp_path):
    """Was "improved": 0.75 ms read as 0.75 us."""
    sessions = [{"latency": (v, "us")} for v in _noisy(12, 500.0)]
    sessions += [{"latency": (v, "ms")} for v in _noisy(8, 0.75, seed=2)]
    rc, figs, text = _history_json(tmp_path, write(tmp_path / "r", sessions))
    assert rc == 1, text
    lat = figs["latency"]
    assert lat["status"] == "REGRESSED" and lat["total"] == pytest.approx(0.5, abs=0.02)


def test_history_mbs_then_gbs_unchanged_is_not_a_regression(tmp_path):
    """Was "REGRESSED (-99.9 %)": 5 GB/s read as 5 MB/s."""
    sessions = [{"bw": (v, "MB/s")} for v in _noisy(12, 5000.0)]
    sessions += [{"bw": (v, "GB/s")} for v in _noisy(8, 5.0, seed=2)]
    rc, figs, text = _history_json(tmp_path, write(tmp_path / "r", sessions))
    assert rc == 0, text
    assert figs["bw"]["change_points"] == [] and figs["bw"]["status"] == "ok"


def test_history_refuses_a_figure_in_a_rate_and_a_time(tmp_path):
    sessions = [{"bw": (100.0, "MB/s")}] * 6 + [{"bw": (2.0, "us")}] * 6
    rc, out, err = fabric_report("history", "--report", write(tmp_path / "r", sessions))
    assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.strip() == ("fabric-report: TxRxTest %scenario=paired bw: given in MB/s (a data "
                           "rate), us (a time): not one figure (units of different dimensions "
                           "are never compared)")


def test_history_counts_follow_the_count_rule(tmp_path):
    """Retransmissions 0-1 per session, then 687: was exit 0 "changed (+inf %)"."""
    name = "counters_node03_RetransSegs"
    sessions = [{name: (float(i % 2), "count")} for i in range(14)] + [{name: (687.0, "count")}]
    rc, figs, text = _history_json(tmp_path, write(tmp_path / "r", sessions))
    assert rc == 1, text
    fig = figs[name]
    assert fig["status"] == "REGRESSED" and fig["unconfirmed"] is True
    assert fig["note"].startswith("latest session 687 against at most 100 (the count rule: 4 "
                                  "x the worst healthy count 1, at least 25)")
    sessions[-1] = {name: (18.0, "count")}  # a few drops under load: within the rule
    rc, figs, text = _history_json(tmp_path, write(tmp_path / "ok", sessions))
    assert rc == 0 and figs[name]["status"] != "REGRESSED", text


# -- compare and html ----------------------------------------------------------------------
def test_compare_97_gbps_against_6000_mbs_is_a_50_percent_drop(tmp_path):
    """Was "+6085 % improved", and green in the html."""
    base = write(tmp_path / "b", [{"stream_gbps": (97.0, "Gbps")}], name="base")
    target = write(tmp_path / "t", [{"stream_gbps": (6000.0, "MB/s")}], name="target")
    rc, out, err = fabric_report("compare", "--report", base, "--report", target, "--json",
                                 tmp_path / "c.json")
    assert rc == 0, out + err  # one session per side, no reference: no evidence either way
    (row,) = json.loads((tmp_path / "c.json").read_text())["rows"]
    assert row["unit"] == "MB/s" and row["base"] == pytest.approx(12125.0)
    assert row["change"] == pytest.approx(-0.50515, abs=1e-4)
    assert (row["status"], row["note"]) == ("changed", "changed by -50.5% (noise unknown)")
    assert "1.212e+04" in out and "changed by -50.5% (noise unknown)" in out
    rc, out, err = fabric_report("html", "--report", base, "--report", target, "-o",
                                 tmp_path / "page")
    assert rc == 0, err
    page = (tmp_path / "page" / "index.html").read_text()
    assert '<tr class="improved">' not in page and '<tr class="changed">' in page
    assert "changed by -50.5% (noise unknown)" in page
    assert "no evidence of regression; 1 figure changed by more than 10% with one session " \
           "per side: run 3 per side to judge" in page


def test_compare_with_a_reference_in_another_unit_judges_the_band(tmp_path):
    """The target's reference band is converted with its value: 6000 MB/s is below a
    97 Gbps reference's band (-10 %), whatever the base's unit."""
    base = write(tmp_path / "b", [{"stream_gbps": (97.0, "Gbps", 97.0, -0.1, None)}],
                 name="base")
    target = write(tmp_path / "t", [{"stream_gbps": (6000.0, "MB/s", 12125.0, -0.1, None)}],
                   name="target")
    rc, out, err = fabric_report("compare", "--report", base, "--report", target)
    assert rc == 1, out + err
    assert "REGRESSED (outside its reference band [1.091e+04, -])" in out


def test_compare_refuses_a_figure_in_a_rate_and_a_time(tmp_path):
    base = write(tmp_path / "b", [{"bw": (100.0, "MB/s")}], name="base")
    target = write(tmp_path / "t", [{"bw": (2.0, "us")}], name="target")
    for cmd in (["compare"], ["html", "-o", str(tmp_path / "page")]):
        rc, out, err = fabric_report(*cmd, "--report", base, "--report", target)
        assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert "bw: given in MB/s (a data rate), us (a time): not one figure" in err


def test_compare_counts_follow_the_count_rule(tmp_path):
    """Retransmissions 0-1 per node -> 687 (unit count): was exit 0 "changed (+inf %)"."""
    name = "counters_node03_RetransSegs"
    base = write(tmp_path / "b", [{name: (0.0, "count")}, {name: (1.0, "count")}],
                 name="base")
    target = write(tmp_path / "t", [{name: (687.0, "count")}], name="target")
    rc, out, err = fabric_report("compare", "--report", base, "--report", target, "--json",
                                 tmp_path / "c.json")
    assert rc == 1, out + err
    (row,) = json.loads((tmp_path / "c.json").read_text())["rows"]
    assert row["status"] == "REGRESSED" and row["change"] == pytest.approx(686.0)
    assert row["note"] == ("687 against at most 100 (the count rule: 4 x the worst healthy "
                           "count 1, at least 25)")
    assert "inf" not in out
    ok = write(tmp_path / "t2", [{name: (18.0, "count")}], name="target")
    rc, out, err = fabric_report("compare", "--report", base, "--report", ok)
    assert rc == 0 and "within the count rule" in out, out + err


def test_ratio_rows_convert_the_base_to_the_targets_unit():
    from fabrictest.report.compare.ratios import ratio_rows

    def rec(v, unit, ref=None):
        return PerfRecord("T", "T", "s", "p", "e", "bw", v, unit, ref=ref, lower=-0.1)

    (row,) = ratio_rows([rec(6000.0, "MB/s", 12125.0)], [rec(97.0, "Gbps", 97.0)])
    assert row.unit == "MB/s" and row.before == pytest.approx(12125.0)
    assert row.before_ratio == pytest.approx(1.0) and row.ratio == pytest.approx(0.4948, 1e-3)


def test_compare_pure_converts_within_a_dimension():
    def rec(v, unit, session):
        return PerfRecord("T", "T", "s", "p", "e", "lat", v, unit, session=session)

    base = [rec(v, "us", f"b{i}") for i, v in enumerate((500.0, 505.0, 495.0))]
    target = [rec(v, "ms", f"t{i}") for i, v in enumerate((0.75, 0.76, 0.74))]
    (row,) = compare(base, target)
    assert row.unit == "ms" and row.base == pytest.approx(0.5)
    assert row.status == "REGRESSED" and row.change == pytest.approx(0.5)


# -- calibrate -----------------------------------------------------------------------------
def _calibrate_sessions(tmp_path, units_of: list[str], values: list[float]) -> str:
    sessions = [{"stream_gbps": (v, u)} for v, u in zip(values, units_of, strict=True)]
    return write(tmp_path / "r", sessions, test="TxRxTest %scenario=paired %method=mpi",
                 scenario="paired", method="mpi")


def test_calibrate_converts_to_the_newest_unit(tmp_path):
    glob = _calibrate_sessions(tmp_path, ["Gbps", "Gbps", "MB/s"], [97.0, 96.0, 12000.0])
    rc, out, err = fabric_report("calibrate", "--report", glob, "--dry-run", "-o",
                                 tmp_path / "sys.yaml")
    assert rc == 0, out + err
    line = next(ln for ln in out.splitlines() if ln.startswith("TxRxTest"))
    # 97 and 96 Gbps are 12125 and 12000 MB/s
    assert re.search(r"stream_gbps: median 1\.2e\+04 MB/s, bounds -3\.0% -.* range "
                     r"1\.2e\+04-1\.212e\+04", line), line
    assert "[12000.0, -0.03, null, MB/s]" in out


def test_calibrate_refuses_a_figure_in_a_rate_and_a_time(tmp_path):
    glob = _calibrate_sessions(tmp_path, ["Gbps", "Gbps", "us"], [97.0, 96.0, 5.0])
    rc, out, err = fabric_report("calibrate", "--report", glob, "--dry-run", "-o",
                                 tmp_path / "sys.yaml")
    assert rc == 2 and "Traceback" not in err, err
    assert ("fabric-report: refused: TxRxTest paired.mpi stream_gbps: given in Gbps (a data "
            "rate), us (a time): not one figure") in err


# -- the suite's perflogs, read by name ------------------------------------------------------
def test_a_shared_perflog_is_read_by_figure_name():
    """One default run on local: TxRxTest.log has the same-node header (6 figures) and the
    many-to-one row (8). Named rows are read by their names; a row of the format without
    names and another shape is not read, and said."""
    named = read_perflogs(DATA / "perflog-TxRxTest-local-named.log")
    assert named.unreadable == 0 and named.notes == []
    m2o = {r.pvar: r.value for r in named.records if "many-to-one" in r.test}
    assert len(m2o) == 8
    assert m2o["node_vm_rx_gbps"] == m2o["node_gbps"] == pytest.approx(61.47000730376998)
    assert m2o["stream_vm_to_vm_tx0_gbps"] == pytest.approx(33.53593229196575)
    old = read_perflogs(DATA / "perflog-TxRxTest-local-unnamed.log")
    assert not [r for r in old.records if "many-to-one" in r.test]  # was read by position
    assert len([r for r in old.records if "same-node" in r.test]) == 6
    assert old.unreadable == 1
    assert re.search(r"1 row with other figures than the header's, in a perflog format that "
                     r"does not name them: not read", old.notes[0])


def test_compare_perflogs_says_what_it_could_not_read(tmp_path):
    unnamed = DATA / "perflog-TxRxTest-local-unnamed.log"
    rc, out, err = fabric_report("compare", "--perflog", unnamed, "--perflog", unnamed)
    assert rc == 0, out + err
    assert "many-to-one" not in out
    assert err.startswith("fabric-report: note: ") and "cannot be read by name" in err
    assert "2 unreadable entries in the sources" in out.splitlines()[-1]  # 1 per side

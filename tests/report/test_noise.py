"""Noise-aware comparison and the direction of a figure.

Several sessions on each side: per figure the change, each side's noise, whether the change
is beyond it, and "noise unknown" when a side has fewer than 3 sessions. The sessions are
run reports derived from a real one (the `stored` fixture's), each with its own session
UUID and the figure values a test needs.
"""

from __future__ import annotations

import copy
import json

import pytest
from _rfm_sessions import fabric_report

from fabrictest.report.compare import rows as cmp
from fabrictest.report.compare import text as ctext
from fabrictest.report.records.direction import HIGHER, LOWER, better
from fabrictest.report.records.results import PerfRecord


@pytest.mark.parametrize("unit,name,want", [
    ("x", "end_to_end_growth", LOWER),   # all-to-many growth factor: lower is better
    ("x", "irecv_growth", LOWER),
    ("x", "speedup", HIGHER),
    ("Gbps", "stream_gbps", HIGHER),
    ("Gbps", "node03", HIGHER),          # the sweep's per-node figures
    ("MB/s", "bw_4096", HIGHER),
    ("GB/s", "aggregate_bw", HIGHER),
    ("msg/s", "message_rate", HIGHER),
    ("us", "latency", LOWER),
    ("us", "lat_64", LOWER),
    ("s", "t_irecv", LOWER),
    ("%", "loss_rate", LOWER),
    ("", "efficiency", HIGHER),
    ("rounds", "rounds_used", None),
    ("x", "something", None),
])
def test_direction_by_unit_then_by_name(unit, name, want):
    assert better(unit, name) == want


def _rec(v, unit="Gbps", pvar="bw", session="s1"):
    return PerfRecord("T", "T", "s", "p", "e", pvar, v, unit, nodes=["n1"], session=session)


def _three(v, unit, pvar):
    return [_rec(v * (1 + d), unit, pvar, session=f"s{i}")
            for i, d in enumerate((0.0, 0.01, -0.01))]


def test_a_falling_growth_factor_is_an_improvement():
    rows = cmp.compare(_three(0.50, "x", "end_to_end_growth"),
                       _three(0.32, "x", "end_to_end_growth"), 0.1)
    assert rows[0].status == "improved"
    rows = cmp.compare(_three(0.32, "x", "end_to_end_growth"),
                       _three(0.50, "x", "end_to_end_growth"), 0.1)
    assert rows[0].status == "REGRESSED" and rows[0].note == "beyond the noise"
    rows = cmp.compare([_rec(2, "rounds", "rounds_used")], [_rec(3, "rounds", "rounds_used")],
                       0.1)
    assert rows[0].status == "changed"


def test_one_session_per_side_is_no_evidence_either_way():
    """Issue 30: a move with the noise unknown is "changed by X % (noise unknown)", neutral,
    in either direction; the verdict says how many and what would judge them (exit 0)."""
    for a, b, pct in ((0.32, 0.50, "+56.2%"), (0.50, 0.32, "-36.0%")):
        (row,) = cmp.compare([_rec(a, "x", "end_to_end_growth")],
                             [_rec(b, "x", "end_to_end_growth")], 0.1)
        assert (row.status, row.note) == ("changed", f"changed by {pct} (noise unknown)")
        assert ctext.status_text(row) == f"changed by {pct} (noise unknown)"
        line, status = ctext.verdict([row], 0, 0.1)
        assert status == 0
        assert line == ("no evidence of regression; 1 figure changed by more than 10% with "
                        "one session per side: run 3 per side to judge (compared 1 figure, "
                        "0 unreadable entries in the sources)")


def test_against_references_uses_the_direction_of_a_growth():
    def ref(v):
        r = _rec(v, "x", "end_to_end_growth")
        r.ref, r.lower, r.upper = 1.0, None, 3.0
        return r

    assert cmp.against_references([ref(0.32)])[0].status == "ok"
    rows = cmp.against_references([ref(4.5)])
    assert rows[0].status == "REGRESSED" and rows[0].note == "outside [-, 4]"


def _sessions(template: dict, out, prefix: str, values: list[dict[str, float]],
              units: dict[str, str]) -> str:
    """One run report per entry of `values` ({figure: value}), each its own session, with
    the template's first test case carrying those figures. Returns the glob naming them."""
    for i, figs in enumerate(values):
        rep = copy.deepcopy(template)
        uuid = f"{prefix[:8]:0<8}-0000-4000-8000-{i:012d}"
        rep["session_info"]["uuid"] = uuid
        tc = copy.deepcopy(rep["runs"][0]["testcases"][0])
        tc["session_uuid"] = uuid
        tc["perfvalues"] = {f"tiny:default:{k}": [v, None, None, None, units[k], "pass"]
                            for k, v in figs.items()}
        rep["runs"] = [{**rep["runs"][0], "testcases": [tc]}]
        (out / f"{prefix}-{i}.json").write_text(json.dumps(rep))
    return str(out / f"{prefix}-*.json")


UNITS = {"bw": "MB/s", "lat": "us", "growth": "x"}


@pytest.fixture
def template(stored):
    tmp, _env, _uuids = stored
    return json.loads((tmp / "pre-upgrade.json").read_text())


def _rows(tmp_path, *args):
    rc, out, err = fabric_report("compare", *args, "--json", tmp_path / "rows.json")
    assert rc in (0, 1), err
    data = json.loads((tmp_path / "rows.json").read_text())
    return rc, out, {r["pvar"]: r for r in data["rows"]}


def test_a_drop_beyond_the_noise_regresses(template, tmp_path):
    base = _sessions(template, tmp_path, "base", [
        {"bw": 100.0, "lat": 2.00, "growth": 0.50},
        {"bw": 101.0, "lat": 2.02, "growth": 0.52},
        {"bw": 99.0, "lat": 1.98, "growth": 0.49}], UNITS)
    target = _sessions(template, tmp_path, "target", [
        {"bw": 85.0, "lat": 2.40, "growth": 0.32},
        {"bw": 86.0, "lat": 2.42, "growth": 0.33},
        {"bw": 84.0, "lat": 2.38, "growth": 0.31}], UNITS)
    rc, out, rows = _rows(tmp_path, "--report", base, "--report", target)
    assert rc == 1
    assert rows["bw"]["status"] == "REGRESSED" and rows["bw"]["beyond_noise"] is True
    assert rows["bw"]["change"] == pytest.approx(-0.15)
    assert rows["bw"]["n_base"] == 3 and rows["bw"]["n_target"] == 3
    assert rows["bw"]["noise_base"] == pytest.approx(1.4826 * 1 / 100)
    assert rows["lat"]["status"] == "REGRESSED" and rows["lat"]["beyond_noise"] is True
    assert rows["growth"]["status"] == "improved"  # 0.50 -> 0.32: lower is better
    head = out.splitlines()[0]
    assert "noise base (n)" in head and "noise target (n)" in head and "beyond noise" in head
    line = next(ln for ln in out.splitlines() if " bw " in ln)
    assert "±1.5% (3)" in line and " yes " in line
    assert out.splitlines()[-1].startswith(
        "2 of 3 figures regressed beyond the noise or outside their reference band "
        "(compared 3 figures, 0 unreadable entries in the sources); failing: TinyFabric "
        "%scenario=paired bw (-15.0%), TinyFabric %scenario=paired lat (+20.0%)")


def test_a_drop_within_the_noise_is_not_a_regression(template, tmp_path):
    base = _sessions(template, tmp_path, "base", [
        {"bw": 100.0}, {"bw": 130.0}, {"bw": 70.0}], UNITS)
    target = _sessions(template, tmp_path, "target", [
        {"bw": 85.0}, {"bw": 120.0}, {"bw": 60.0}], UNITS)
    rc, out, rows = _rows(tmp_path, "--report", base, "--report", target)
    assert rc == 0
    assert rows["bw"]["status"] == "noise" and rows["bw"]["beyond_noise"] is False
    assert rows["bw"]["note"] == "regressed by -15.0%, within the noise"
    assert out.splitlines()[-1] == ("no evidence of regression (compared 1 figure, 1 moved "
                                    "within the noise, 0 unreadable entries in the sources)")
    # spreads of 3.0% and 3.7%: a 20% drop is beyond 3 times their combination (14%), not
    # beyond 5 times (24%)
    tight_base = _sessions(template, tmp_path, "tb", [
        {"bw": 100.0}, {"bw": 102.0}, {"bw": 98.0}], UNITS)
    tight_target = _sessions(template, tmp_path, "tt", [
        {"bw": 80.0}, {"bw": 82.0}, {"bw": 78.0}], UNITS)
    _rc, _out, rows = _rows(tmp_path, "--report", tight_base, "--report", tight_target)
    assert rows["bw"]["status"] == "REGRESSED"
    _rc, _out, rows = _rows(tmp_path, "--report", tight_base, "--report", tight_target,
                            "--noise-factor", "5")
    assert rows["bw"]["status"] == "noise"


def test_too_few_sessions_to_tell_is_a_change_not_a_regression(template, tmp_path):
    """Two sessions on a side: the noise is unknown, so a 15 % drop is no evidence of a
    regression (issue 30): "changed", exit 0, and the verdict says what would judge it."""
    base = _sessions(template, tmp_path, "base", [
        {"bw": 100.0}, {"bw": 130.0}, {"bw": 70.0}], UNITS)
    target = _sessions(template, tmp_path, "target", [{"bw": 85.0}, {"bw": 86.0}], UNITS)
    rc, out, rows = _rows(tmp_path, "--report", base, "--report", target)
    assert rc == 0
    assert rows["bw"]["status"] == "changed" and rows["bw"]["beyond_noise"] is None
    assert rows["bw"]["note"] == "changed by -14.5% (noise unknown)"
    assert rows["bw"]["n_target"] == 2 and rows["bw"]["noise_target"] is None
    line = next(ln for ln in out.splitlines() if " bw " in ln)
    assert "? (2)" in line and "changed by -14.5% (noise unknown)" in line
    assert out.splitlines()[-1] == (
        "no evidence of regression; 1 figure changed by more than 10% with fewer than 3 "
        "sessions on a side: run 3 per side to judge (compared 1 figure, 0 unreadable "
        "entries in the sources)")


def test_a_noise_factor_that_makes_no_sense_is_refused(template, tmp_path):
    base = _sessions(template, tmp_path, "base", [{"bw": 1.0}], UNITS)
    for bad in ("0", "-1", "nan", "x"):
        rc, out, err = fabric_report("compare", "--noise-factor", bad, "--report", base,
                                     "--report", base)
        assert rc == 2 and out == "" and len(err.splitlines()) == 1
        assert err.startswith("fabric-report compare: argument --noise-factor: ")


def test_the_tables_list_judged_rows_before_informational_ones():
    """Issue 43: the a-vs-b table listed the informational rows (alphabetically "A...")
    before the judged ones; judged first, in both the text and the html table."""
    from fabrictest.report.html.page import compare_table

    def side(v):
        info = _rec(v, pvar="a_info")
        info.variables = {"informational_perf_vars": ["a_info"]}
        return [info, _rec(v, pvar="z_judged")]

    rows = cmp.compare(side(1.0), side(1.0), 0.1)
    assert [r.pvar for r in rows] == ["a_info", "z_judged"]  # the comparison's own order
    text = ctext.render_table(rows, "a", "b")
    assert text.index("z_judged") < text.index("a_info")
    page = compare_table(rows, "a", "b")
    assert page.index("z_judged") < page.index("a_info")

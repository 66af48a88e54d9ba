"""`fabric-report history`: change points over sessions, on synthetic series and on a short
real history.

The method (:mod:`fabrictest.report.history.changepoints`) is checked on series made here with a known
truth: a step, a slow drift, a lone outlier, too few sessions, a 5 % step at session 12 of 20
(placed within one session, several noise draws) and healthy series (no change point). The
command is checked on run reports derived from a real one (each its own session, with its own
date and --session-extras), and on real stored sessions of a tiny ReFrame check on `local`
with a drop injected half-way.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
import re

import numpy as np
import pytest
from _rfm_sessions import HERE, SETTINGS, fabric_report, isolated_env, reframe

from fabrictest.report.history import changepoints as cp
from fabrictest.report.history import figures as hist
from fabrictest.report.history import summary
from fabrictest.report.records.results import PerfRecord, ResultsError


def healthy(seed: int, n: int = 20, noise: float = 0.01, level: float = 100.0) -> np.ndarray:
    return level * (1 + noise * np.random.default_rng(seed).standard_normal(n))


# -- the method, on synthetic series -------------------------------------------------------
@pytest.mark.parametrize("seed", range(10))
def test_a_5_percent_step_at_session_12_of_20_is_placed_within_one(seed):
    series = healthy(seed)
    series[11:] *= 0.95  # session 12 (1-based) is the first on the new level
    seg = cp.segment(series)
    assert len(seg.points) == 1, seg
    (point,) = seg.points
    assert abs(point.index - 11) <= 1
    assert point.step == pytest.approx(-0.05, abs=0.015)
    assert point.confidence >= cp.CONFIDENCE


@pytest.mark.parametrize("seed", range(10))
def test_no_change_point_in_20_healthy_sessions(seed):
    for noise in (0.005, 0.01, 0.03):
        assert cp.segment(healthy(seed, noise=noise)).points == []


def test_a_lone_outlier_is_not_a_change_point():
    for seed in range(5):
        series = healthy(seed)
        series[7] *= 0.6  # one bad session in the middle
        seg = cp.segment(series)
        assert seg.points == [] and seg.outliers == [7], seg
        series = healthy(seed)
        series[-1] *= 0.6  # the latest session alone: not yet a level
        assert cp.segment(series).points == []


def test_a_slow_drift_is_found_and_judged_as_a_whole():
    for seed in range(5):
        series = healthy(seed, noise=0.005) * np.linspace(1.0, 0.85, 20)
        seg = cp.segment(series)
        assert seg.points and all(p.step < 0 for p in seg.points)
        h = hist.judge(_history(series))
        assert h.status == "REGRESSED"
        assert h.total == pytest.approx(-0.12, abs=0.04)  # the run of steps, not the last


def test_a_step_of_two_sessions_at_the_end_is_confirmed_one_is_not():
    series = healthy(3)
    series[18:] *= 0.9
    assert [p.index for p in cp.segment(series).points] == [18]
    series = healthy(3)
    series[19:] *= 0.9
    assert cp.segment(series).points == []


def test_too_few_sessions_and_non_finite_values_are_refused():
    with pytest.raises(ValueError, match=f"9 sessions, {cp.MIN_SESSIONS} needed"):
        cp.segment(healthy(0, n=9))
    bad = healthy(0)
    bad[4] = math.nan
    with pytest.raises(ValueError, match="not a finite number"):
        cp.segment(bad)
    h = hist.judge(_history(healthy(0, n=5)))
    assert h.status == "few" and h.note == f"too few runs to judge (5 of {cp.MIN_SESSIONS})"
    line, status = summary.verdict([h], 0, hist.TOLERANCE)
    assert status == 2 and line.startswith(f"too few runs to judge (5 of {cp.MIN_SESSIONS}): 1 figure over 5 "
                                       "sessions")
    rec = PerfRecord("T", "T", "s", "p", "e", "bw", math.inf, "MB/s", session="s1")
    with pytest.raises(ResultsError, match="T bw: value inf in session s1 is not a finite"):
        hist.series([rec], {})


def test_a_figure_flickering_by_its_last_digit_is_not_stepping():
    """Bisection's aggregate_bw is printed with two digits (0.08, 0.09 GB/s): one digit up or
    down is its resolution, not a change; a lasting move of several digits is."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        flicker = rng.choice([0.08, 0.09], size=20, p=[0.8, 0.2])
        assert cp.segment(flicker).points == [], flicker
    moved = np.array([0.09] * 11 + [0.07] * 9)
    moved[[2, 5]] = 0.08
    assert [p.index for p in cp.segment(moved).points] == [11]


def test_a_loss_that_was_zero_and_is_no_more_regressed():
    loss = np.zeros(20)
    loss[12:] = 0.02  # % of messages lost, from session 13 on
    h = hist.judge(_history(loss, unit="%", pvar="loss_rate"))
    assert [c.index for c in h.changes] == [12]
    assert h.status == "REGRESSED" and h.total == math.inf


def test_direction_decides_regressed_improved_and_changed():
    up = healthy(1)
    up[10:] *= 1.1
    assert hist.judge(_history(up)).status == "improved"
    assert hist.judge(_history(up, unit="us", pvar="lat")).status == "REGRESSED"
    assert hist.judge(_history(up, unit="rounds", pvar="rounds_used")).status == "changed"
    small = healthy(1, noise=0.002)
    small[10:] *= 0.98  # real, and within the 3 % tolerance
    h = hist.judge(_history(small))
    assert h.changes and h.status == "moved"


def test_sessions_without_a_value_are_counted_not_lost():
    values = list(healthy(2))
    recs = [PerfRecord("T", "T", "s", "p", "e", "bw", None if i in (3, 9) else float(v),
                       "MB/s", session=f"s{i:02d}", time=1000.0 + i)
            for i, v in enumerate(values)]
    h = hist.judge(hist.series(recs, {})[0])
    assert len(h.points) == 18 and h.no_value == 2
    assert h.note == "no value in 2 sessions (left out)"


def _history(values, unit="MB/s", pvar="bw") -> hist.FigureHistory:
    recs = [PerfRecord("T", "T", "s", "p", "e", pvar, float(v), unit, session=f"s{i:02d}",
                       time=1000.0 + i) for i, v in enumerate(values)]
    (h,) = hist.series(recs, {})
    return h


# -- the command, on run reports derived from a real one -----------------------------------
@pytest.fixture
def template(stored):
    tmp, _env, _uuids = stored
    return json.loads((tmp / "pre-upgrade.json").read_text())


START = dt.datetime(2026, 10, 1, tzinfo=dt.timezone.utc)


def _reports(template: dict, out, values: list[float], extras=None, unit="MB/s",
             pvar="bw") -> str:
    """One run report per value, each its own session an hour after the last, with its
    --session-extras (`extras(i)`); returns the glob naming them."""
    for i, v in enumerate(values):
        rep = copy.deepcopy(template)
        uuid = f"0000{i:04d}-0000-4000-8000-{i:012d}"
        info = rep["session_info"]
        when = START + dt.timedelta(hours=i)
        info.update(uuid=uuid, time_start_unix=when.timestamp(),
                    time_start=when.strftime("%Y-%m-%dT%H:%M:%S%z"))
        info.update(extras(i) if extras else {})
        tc = copy.deepcopy(rep["runs"][0]["testcases"][0])
        tc["session_uuid"] = uuid
        tc["perfvalues"] = {f"tiny:default:{pvar}": [v, None, None, None, unit, "pass"]}
        rep["runs"] = [{**rep["runs"][0], "testcases": [tc]}]
        (out / f"run-{i:02d}.json").write_text(json.dumps(rep))
    return str(out / "run-*.json")


def test_a_5_percent_step_fails_the_gate_naming_the_session(template, tmp_path):
    values = healthy(4)
    values[11:] *= 0.95
    glob = _reports(template, tmp_path, list(values),
                    extras=lambda i: {"stack": "mpi-5.0.5" if i >= 11 else "mpi-5.0.3"})
    rc, out, err = fabric_report("history", "--report", glob, "--json", tmp_path / "h.json",
                                 "--html", tmp_path / "page")
    assert rc == 1, out + err
    row = next(ln for ln in out.splitlines() if " bw " in ln)
    assert " #12 " in row and "0000001" in row and "2026-10-01T11:00:00" in row
    assert "stack=mpi-5.0.5" in row and "REGRESSED" in row
    assert re.search(r" -[45]\.\d% ", row)
    last = out.splitlines()[-1]
    assert last.startswith("history of 1 figure over 20 sessions: 1 change point in 1 "
                           "figure, 1 regressed beyond 3%; regressed: TinyFabric "
                           "%scenario=paired bw ")
    data = json.loads((tmp_path / "h.json").read_text())
    (fig,) = data["figures"]
    assert fig["status"] == "REGRESSED" and fig["change_points"][0]["index"] == 11
    assert fig["change_points"][0]["extras"] == {"stack": "mpi-5.0.5"}
    page = (tmp_path / "page" / "index.html").read_text()
    assert "REGRESSED" in page and "mpi-5.0.5" in page and "http" not in page
    assert list((tmp_path / "page").glob("history-000-*.png"))


def test_healthy_sessions_pass_and_a_wider_tolerance_accepts_the_step(template, tmp_path):
    (tmp_path / "ok").mkdir()
    rc, out, err = fabric_report("history", "--report",
                                 _reports(template, tmp_path / "ok", list(healthy(5))), "--all")
    assert rc == 0, out + err
    assert out.splitlines()[-1].startswith("history of 1 figure over 20 sessions: 0 change "
                                           "points in 0 figures, 0 regressed")
    values = healthy(5)
    values[11:] *= 0.95
    (tmp_path / "step").mkdir()
    glob = _reports(template, tmp_path / "step", list(values))
    rc, out, err = fabric_report("history", "--report", glob, "--tolerance", "0.08")
    assert rc == 0 and " moved (" in out, out + err


def test_filters_select_sessions(template, tmp_path):
    values = healthy(6)
    values[11:] *= 0.9
    glob = _reports(template, tmp_path, list(values),
                    extras=lambda i: {"suite": "nightly" if i % 2 == 0 else "weekly"})
    # only the 10 nightly sessions: still the step
    rc, out, err = fabric_report("history", "--report", glob, "--tag", "suite=nightly")
    assert rc == 1 and "over 10 sessions" in out.splitlines()[-1], out + err
    rc, out, err = fabric_report("history", "--report", glob, "--system", "elsewhere")
    assert rc == 2 and err.startswith("fabric-report: nothing to read"), err
    rc, out, err = fabric_report("history", "--report", glob, "--test", "^NoSuchTest")
    assert rc == 2 and "nothing to read" in err
    # the sessions ran from 2026-10-01: none since 2030
    rc, out, err = fabric_report("history", "--report", glob, "--since", "20300101")
    assert rc == 2 and "nothing to read" in err


def test_too_few_sessions_is_a_clear_line(template, tmp_path):
    glob = _reports(template, tmp_path, list(healthy(0, n=6)))
    rc, out, err = fabric_report("history", "--report", glob)
    assert rc == 2 and out == ""
    assert err.strip() == (f"too few runs to judge (6 of {cp.MIN_SESSIONS}): 1 figure over 6 "
                           "sessions, the longest history has 6")


@pytest.mark.parametrize("args,message", [
    (["--since", "yesterday"], "--since 'yesterday': not a date"),
    (["--test", "("], "--test '(': not a regular expression"),
    (["--tag", "nokey"], "bad tag 'nokey': use KEY=VALUE"),
    (["--tolerance", "1.5"], "--tolerance: 1.5 is not a fraction in [0, 1)"),
    (["--tolerance", "nan"], "--tolerance: nan is not a fraction in [0, 1)"),
    (["--report", "/nonexistent/*.json"], "--report /nonexistent/*.json: no file matches"),
    (["--perflog", "/nonexistent"], "no such file or directory"),
    (["--json", "/nonexistent/h.json"], "directory /nonexistent does not exist"),
])
def test_bad_options_are_one_line(template, tmp_path, args, message):
    glob = _reports(template, tmp_path, list(healthy(0)))
    rc, out, err = fabric_report("history", "--report", glob, *args)
    assert rc == 2 and out == "", out
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert "Traceback" not in err


def test_a_non_finite_value_is_refused_in_one_line(template, tmp_path):
    values: list = list(healthy(0))
    values[3] = "nan"
    glob = _reports(template, tmp_path, values)
    rc, out, err = fabric_report("history", "--report", glob)
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    # refused as the run report is read (the readers' rule for every fabric-report command)
    assert "run-03.json" in err and "bw = nan MB/s is not a finite positive rate" in err, err


# -- a short real history: stored sessions of a real ReFrame check --------------------------
def test_a_real_history_with_a_drop_injected(tmp_path):
    """10 real sessions of the tiny check on `local` (6 healthy, then its link at 95 %), each
    with its own small noise, read back from ReFrame's results database."""
    (tmp_path / "settings.py").write_text(
        SETTINGS % {"db": tmp_path / "results.db", "perflogs": tmp_path / "perflogs"})
    env = isolated_env(tmp_path, tmp_path / "settings.py")
    jitter = 1 + 0.004 * np.random.default_rng(7).standard_normal(10)
    for i, j in enumerate(jitter):
        degrade = j * (0.95 if i >= 6 else 1.0)
        stack = "after" if i >= 6 else "before"
        proc = reframe(env, tmp_path, "-c", str(HERE / "tiny_check.py"), "-r",
                       "-n", "TinyFabric%scenario=paired", "-S", f"degrade={degrade:.5f}",
                       "--session-extras", f"hist=real,stack={stack}",
                       "--prefix", str(tmp_path / "out"), "--nocolor")
        assert "stored with UUID" in proc.stdout, proc.stdout + proc.stderr
    rc, out, err = fabric_report("history", "--tag", "hist=real", "--test", "paired",
                                 "--json", tmp_path / "h.json", env=env, cwd=tmp_path)
    assert rc == 1, out + err
    data = json.loads((tmp_path / "h.json").read_text())
    figs = {f["figure"]: f for f in data["figures"]}
    # the link's figures stepped at session 7 (1-based), named with its extras
    for name in ("bw_1048576", "rx1_tx1_gbps", "lat_65536"):
        f = figs[name]
        assert f["status"] == "REGRESSED", f
        (c,) = f["change_points"]
        assert abs(c["index"] - 6) <= 1 and c["extras"]["stack"] == "after"
        assert c["step"] == pytest.approx(-0.05 if name != "lat_65536" else 0.0526, abs=0.015)
    assert figs["rx0_tx0_gbps"]["change_points"] == []  # the other stream did not move
    assert "over 10 sessions" in out.splitlines()[-1]
    # the same runs from their perflogs (in the order written; no dates or extras there)
    rc, out, err = fabric_report("history", "--perflog", tmp_path / "perflogs", "--test",
                                 "paired", "--json", tmp_path / "p.json")
    assert rc == 1, out + err
    figs = {f["figure"]: f for f in json.loads((tmp_path / "p.json").read_text())["figures"]}
    assert [c["index"] for c in figs["rx1_tx1_gbps"]["change_points"]] in ([5], [6], [7])
    rc, out, err = fabric_report("history", "--perflog", tmp_path / "perflogs", "--tag", "a=b")
    assert rc == 2 and "perflogs record no --session-extras" in err
    # the html report of the latest session, with the history of every stored session
    rc, out, err = fabric_report("html", "--tag", "stack=after", "--history", "-o",
                                 tmp_path / "page", env=env, cwd=tmp_path)
    assert rc == 0, out + err
    page = (tmp_path / "page" / "index.html").read_text()
    assert "History: change points over the stored sessions" in page
    assert "history of 12 figures over 10 sessions" in page and "REGRESSED" in page
    assert "stack=after" in page and "http" not in page
    assert len(list((tmp_path / "page").glob("history-*.png"))) == 12


def test_no_stored_session_is_nothing_to_read(tmp_path):
    """A gate fed nothing fails: an empty results database is exit 2, in one line."""
    (tmp_path / "settings.py").write_text(
        SETTINGS % {"db": tmp_path / "results.db", "perflogs": tmp_path / "perflogs"})
    env = isolated_env(tmp_path, tmp_path / "settings.py")
    rc, out, err = fabric_report("history", env=env, cwd=tmp_path)
    assert rc == 2 and out == ""
    assert err.strip() == "fabric-report: no stored session matches '19700101:now'"
    rc, out, err = fabric_report("history", "--since", "20261101", "--tag", "stack=x",
                                 env=env, cwd=tmp_path)
    assert rc == 2 and err.strip() == ("fabric-report: no stored session matches "
                                       "\"20261101T0000:now?stack=='x'\"")


def test_pelt_finds_what_ruptures_pelt_finds():
    """`changepoints.pelt` is ruptures' `Pelt(model="l2", min_size=2, jump=1)` on cumulative
    sums: the same change points on 80 random series with 0-5 steps (ruptures' own took 16
    minutes for one figure of 10,000 sessions; bench/bench_history_scale.py)."""
    import ruptures

    rng = np.random.default_rng(11)
    for _ in range(80):
        n = int(rng.integers(cp.MIN_SESSIONS, 60))
        x = rng.standard_normal(n)
        for _step in range(int(rng.integers(0, 6))):
            x[int(rng.integers(1, n)):] += rng.normal(0, 4)
        pen = cp.PENALTY * math.log(n)
        theirs = ruptures.Pelt(model="l2", min_size=2, jump=1).fit(x.reshape(-1, 1)).predict(
            pen=pen)[:-1]
        assert cp.pelt(x, pen) == theirs, (n, x)

"""Issue 44: a sustained drop named within stated runs, on recorded noise, at a stated
false-alarm cost; a single spike never named.

The noise is resampled from recordings (fabric-sweep's every node figure over 5 healthy runs
on the vcluster's fat tree and dragonfly, tests/data/topology/vcluster-sweeps), as
bench/bench_history_oc.py does for docs/regressions.md.
"""

from __future__ import annotations

import glob
import json
import statistics
from pathlib import Path

import numpy as np
import pytest

from fabrictest.report.history import changepoints as cp
from fabrictest.report.history import figures as hist
from fabrictest.report.history import operating as oc
from fabrictest.report.history import shift, summary
from fabrictest.report.records.results import PerfRecord

SWEEPS = Path(__file__).resolve().parents[1] / "data/topology/vcluster-sweeps"


@pytest.fixture(scope="module")
def sweep_noise() -> np.ndarray:
    docs = [(Path(f).name.split("-healthy")[0], json.loads(Path(f).read_text()))
            for f in sorted(glob.glob(str(SWEEPS / "*-healthy-*.json")))]
    pool = oc.pools(oc.sweep_series(docs))["fabric-sweep"]
    assert len(pool) >= 400 and 0.005 < oc.spread(pool) < 0.03  # a real, modest noise
    return pool


def _judge(values) -> hist.FigureHistory:
    recs = [PerfRecord("T", "T", "s", "p", "e", "bw", float(v), "Gbps", session=f"s{i:03d}",
                       time=float(i)) for i, v in enumerate(values)]
    return hist.judge(hist.series(recs, {})[0])


def _delay(series: np.ndarray, start: int, follow: int = 10) -> int | None:
    """Runs after the change at `start` until the figure is REGRESSED, as a site runs the
    command after each new session."""
    return next((end - start for end in range(start + 1, start + follow + 1)
                 if _judge(series[:end]).status == "REGRESSED"), None)


@pytest.mark.parametrize(("drop", "runs"), [(0.05, 4), (0.03, 6)])
def test_a_sustained_drop_in_recorded_noise_is_named_within_the_stated_runs(sweep_noise, drop,
                                                                           runs):
    """docs/regressions.md, the vcluster sweep's row (±1.7 % noise, heavy tails: 1 % of
    its healthy sessions 11 % low): 5 % within 4 runs, 3 % within 6 (the 3-run target needs
    about ±1 % normal noise), at the median of 15 trials."""
    rng = np.random.default_rng(44)
    delays = []
    for _ in range(15):
        series = 0.18 * (1 + rng.choice(sweep_noise, size=30))
        series[20:] *= 1 - drop
        delays.append(_delay(series, 20))
    assert statistics.median([d if d is not None else 99 for d in delays]) <= runs, delays


def test_a_single_spike_in_recorded_noise_is_never_a_change_point(sweep_noise):
    rng = np.random.default_rng(45)
    for _ in range(15):
        series = 0.18 * (1 + rng.choice(sweep_noise, size=22))
        series[20] *= 0.9  # one session 10 % down, then a healthy one at the level
        series[21] = 0.18
        h = _judge(series)
        assert not any(c.index in (20, 21) for c in h.changes), h.changes
        assert h.status != "REGRESSED", h.note


def test_a_lone_bad_latest_session_is_no_sustained_drop():
    values = [1.0 + 0.001 * (i % 3) for i in range(20)]
    values[-1] = 0.5  # the worst of any window is left out: alone it proves nothing
    s = shift.latest_shift(values, True, cp.noise(values))
    assert s is not None and not shift.named(s, 0.03)
    values[-2] = 0.5  # two sessions: a drop
    assert shift.named(shift.latest_shift(values, True, cp.noise(values)), 0.03)


def test_the_false_alarm_rate_on_normal_noise_is_the_calibrated_one():
    rng = np.random.default_rng(7)
    named = 0
    for _ in range(2000):
        v = 1 + 0.01 * rng.standard_normal(20)
        named += shift.latest_shift(list(v), True, cp.noise(v)).z > shift.Z_NAMED
    assert 2 <= named <= 20, named  # 0.5 in 100: 10 of 2000 expected


def test_lower_is_better_is_judged_the_other_way():
    values = [10.0 * (1 + 0.002 * ((i * 7) % 5 - 2)) for i in range(20)]
    up = values[:17] + [v * 1.05 for v in values[17:]]  # a latency 5 % up over 3 sessions
    assert shift.named(shift.latest_shift(up, False, cp.noise(up)), 0.03)
    assert not shift.named(shift.latest_shift(up, True, cp.noise(up)), 0.03)


def test_a_figure_too_noisy_for_the_target_says_what_it_can_see():
    rng = np.random.default_rng(3)
    h = _judge(100 * (1 + 0.04 * rng.standard_normal(20)))
    assert h.blind_below is not None and h.blind_below > 0.03
    assert f"a drop of 3.0% is not seen within 3 runs, {100 * h.blind_below:.1f}% is" in h.note
    line, _rc = summary.verdict([h], 0, 0.03)
    assert "1 figure too noisy to see a 3% drop within 3 runs" in line
    quiet = _judge(100 * (1 + 0.002 * rng.standard_normal(20)))
    assert quiet.blind_below is None and "not seen" not in quiet.note


def _count(values) -> hist.FigureHistory:
    recs = [PerfRecord("T", "T", "s", "p", "e", "counters_RetransSegs", float(v), "count",
                       session=f"s{i:03d}", time=float(i)) for i, v in enumerate(values)]
    return hist.judge(hist.series(recs, {})[0])


def test_a_count_from_0_1_to_hundreds_is_regressed_not_plus_inf():
    """Before: `ok` (its earlier sessions' worst included the new hundreds) or `changed
    +inf% since #16`."""
    for before in ([0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], [0] * 15):
        h = _count([*before, 300, 420, 380])
        assert h.status == "REGRESSED" and h.since == 15, h.note
        assert h.note.startswith("latest 3 sessions, the least 300 against at most 100")
        assert "inf" not in h.note and "inf" not in summary.render([h])
        line, rc = summary.verdict([h], 0, 0.03)
        assert rc == 1 and "inf" not in line
    assert _count([0, 1, 0, 2, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 1, 0]).status == "ok"


def test_characteristics_of_a_store_come_from_its_own_figures():
    rng = np.random.default_rng(5)
    quiet = [_judge(100 * (1 + 0.004 * rng.standard_normal(20))) for _ in range(3)]
    (row,) = oc.of_histories(quiet, trials=5)
    name, n, c = row
    assert name == "T" and n == 60 and 0.002 < c.noise < 0.008
    assert c.delay[0.10][0] == 1 and c.false_per_100 <= 10

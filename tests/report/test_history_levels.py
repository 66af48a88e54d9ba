"""`fabric-report history` as a person reads it (issue 27): the latest level against the last
stable level before the first regression, so a partial recovery is still a regression; the
latest session alone reported when it is beyond the tolerance and the noise, before a change
point can be placed; and the limits of both (a full recovery, a healthy last session).

On the code before this change: -20 % then +5 % was exit 0 "improved (+5.3 %)", and a last
session 99.9999 % down was "no change point", exit 0.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from _reports import fabric_report, write


def _levels(*steps: tuple[int, float], noise: float = 0.004, seed: int = 3) -> list[float]:
    rng = np.random.default_rng(seed)
    out = []
    for n, level in steps:
        out += list(level * (1 + noise * rng.standard_normal(n)))
    return out


def _history(tmp_path, values, unit="Gbps", pvar="stream_gbps"):
    glob = write(tmp_path / "r", [{pvar: (v, unit)} for v in values])
    rc, out, err = fabric_report("history", "--report", glob, "--json", tmp_path / "h.json")
    assert "Traceback" not in out + err
    (fig,) = json.loads((tmp_path / "h.json").read_text())["figures"]
    return rc, fig, out


def test_a_partial_recovery_is_still_a_regression(tmp_path):
    values = _levels((10, 100.0), (6, 80.0), (6, 84.0))  # -20 %, then +5 %
    rc, fig, out = _history(tmp_path, values)
    assert [c["index"] for c in fig["change_points"]] == [10, 16]
    assert rc == 1, out
    assert fig["status"] == "REGRESSED" and fig["total"] == pytest.approx(-0.16, abs=0.01)
    assert re.fullmatch(r"-1[56]\.\d% since #11 in 2 steps", fig["note"])
    assert re.search(r"regressed: TxRxTest %scenario=paired stream_gbps -1[56]\.\d% since "
                     r"00000010$", out.splitlines()[-1])


def test_a_full_recovery_is_not_a_regression(tmp_path):
    values = _levels((10, 100.0), (6, 80.0), (6, 100.0))
    rc, fig, out = _history(tmp_path, values)
    assert rc == 0 and fig["status"] == "improved", out


def test_the_loss_of_an_improvement_is_a_regression_from_the_improved_level(tmp_path):
    values = _levels((8, 100.0), (6, 120.0), (6, 100.0))
    rc, fig, out = _history(tmp_path, values)
    assert rc == 1 and fig["total"] == pytest.approx(-1 / 6, abs=0.01), out


def test_a_time_that_partly_recovers_is_still_a_regression(tmp_path):
    values = _levels((10, 2.0), (6, 3.0), (6, 2.8))  # +50 %, then -7 %: still +40 %
    rc, fig, out = _history(tmp_path, values, unit="us", pvar="latency")
    assert rc == 1 and fig["total"] == pytest.approx(0.4, abs=0.02), out


def test_a_last_session_far_down_is_reported_before_it_is_confirmed(tmp_path):
    values = _levels((15, 100.0))
    values[-1] = 100.0 * 1e-6  # 99.9999 % down
    rc, fig, out = _history(tmp_path, values)
    assert fig["change_points"] == []  # one session is not yet a level
    assert rc == 1, out
    assert fig["status"] == "REGRESSED" and fig["unconfirmed"] is True
    assert fig["note"] == "latest session 99.9999% below, not yet confirmed"
    row = next(ln for ln in out.splitlines() if "stream_gbps" in ln)
    assert " #15 " in row and "REGRESSED (latest session 99.9999% below" in row
    assert out.splitlines()[-1].endswith("1 regressed beyond 3% (1 on the latest session "
                                         "alone, not yet confirmed); regressed: TxRxTest "
                                         "%scenario=paired stream_gbps latest session 00000014 "
                                         "(not yet confirmed)")


def test_a_last_session_after_a_change_is_judged_against_its_own_level(tmp_path):
    values = _levels((10, 100.0), (9, 110.0))  # an improvement, then one session at 95
    values[-1] = 95.0
    rc, fig, out = _history(tmp_path, values)
    assert [c["index"] for c in fig["change_points"]] == [10]
    assert rc == 1, out
    assert re.fullmatch(r"latest session 13\.\d% below, not yet confirmed; \+10\.\d% since #11",
                        fig["note"])


@pytest.mark.parametrize("last,unit,pvar", [(0.985, "Gbps", "stream_gbps"),  # within 3 %
                                            (1.02, "us", "latency"),
                                            (1.2, "Gbps", "stream_gbps")])  # better
def test_a_last_session_within_the_tolerance_or_better_passes(tmp_path, last, unit, pvar):
    values = _levels((15, 100.0))
    values[-1] = 100.0 * last
    rc, fig, out = _history(tmp_path, values, unit=unit, pvar=pvar)
    assert rc == 0 and fig["status"] == "ok", out


def test_a_last_session_within_a_noisy_figures_noise_passes(tmp_path):
    """A 5 % dip of a figure whose sessions move by 3 % is within its noise (5 x 3 %)."""
    values = _levels((15, 100.0), noise=0.03, seed=5)
    values[-1] = 95.0
    rc, fig, out = _history(tmp_path, values)
    assert rc == 0 and fig["status"] == "ok", out


def test_since_an_age_beyond_any_date_is_one_line(tmp_path):
    glob = write(tmp_path / "r", [{"bw": (100.0, "MB/s")}] * 10)
    rc, out, err = fabric_report("history", "--report", glob, "--since", "999999d")
    assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("fabric-report: --since '999999d': further back than any date")

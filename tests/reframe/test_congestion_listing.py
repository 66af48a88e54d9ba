"""Where CongestionTest is listed: on every system whose partition has the nodes its aggressors
need (incast 3, all-to-all 4) and not on one host, where the ranks would share no link; each
partition left out says why (`reframe -l -vv`)."""

from __future__ import annotations

import pytest
from _rfm import run_reframe

INCAST = "CongestionTest %aggressors=incast"
ALL_TO_ALL = "CongestionTest %aggressors=all-to-all"
# system: (incast listed, all-to-all listed, reason a case is left out)
EXPECTED = {
    "seren": (True, True, None),
    "slingshot": (True, True, None),
    "cori": (True, True, None),
    "orfeo": (False, False, "incast aggressors need 3 nodes, has 2"),
    "crusher": (False, False, "aggressors need"),
    "local": (False, False, "needs separate nodes: on one host the ranks share no link"),
}


@pytest.mark.parametrize("system", sorted(EXPECTED))
def test_listed_where_the_aggressors_fit(system, tmp_path):
    incast, all_to_all, why = EXPECTED[system]
    run = run_reframe(["--system", system, "-l", "-vv", "-n", "CongestionTest"],
                      tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    assert (f"- {INCAST} /" in run.output) == incast, run.output[-3000:]
    assert (f"- {ALL_TO_ALL} /" in run.output) == all_to_all, run.output[-3000:]
    if why:
        assert f"not listed on {system}:" in run.output and why in run.output, run.output[-3000:]


def test_one_host_lists_it_when_asked_for_nodes(tmp_path):
    run = run_reframe(["--system", "local", "-l", "-n", "CongestionTest",
                       "-S", "CongestionTest.num_nodes=4"], tmp_path, timeout=180)
    assert f"- {INCAST} /" in run.output and f"- {ALL_TO_ALL} /" in run.output, run.output

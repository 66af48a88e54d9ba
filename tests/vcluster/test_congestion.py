"""Congestion on the vcluster: the victim pair (node01 -> node02) isolated and beside aggressors,
for real over the shaped links (tbf 200 Mbit/s, drop-tail queues, docs/vcluster.md).

- incast (node03 and node04 stream into node02: they share the victim's receiving link): the
  victim's bandwidth impact factor is >= 2 in every one of RUNS runs;
- all-to-all (node03 <-> node04: none of the victim's links): <= 1.2 in every one of RUNS runs;
- both pass sanity and their references (reference/vcluster.yaml);
- with node01's link degraded the isolated bandwidth fails its reference, naming the figure.

Takes the vcluster lock like tests/vcluster/test_e2e.py, brings a cluster up without accounting
and always takes it down. Skipped with the reason where a vcluster cannot run (not root, no
network namespaces, Slurm or ReFrame) or when another one is up on this machine.
"""

from __future__ import annotations

import os

import pytest
from vcluster.test_e2e import Suite, summary
from vcluster_session import held_cluster, vcluster

# the fixture may wait for another session's vcluster (the lock), then RUNS runs of 2 jobs
pytestmark = [pytest.mark.vcluster, pytest.mark.slow, pytest.mark.timeout(1800)]

#: runs per CI run (23 s each here): 3 keep CI within its 30 minutes; the 5 of 5 in
#: docs/vcluster.md are FABRICTEST_VCLUSTER_TRIALS=5
RUNS = int(os.environ.get("FABRICTEST_VCLUSTER_TRIALS", "3"))
INCAST = "CongestionTest %aggressors=incast"
ALL_TO_ALL = "CongestionTest %aggressors=all-to-all"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("vc-congestion")
    work = base / "work"
    work.mkdir()
    with held_cluster(base / "state", "--nodes", "4", wait_s=1200) as state:
        yield Suite(state, work)


def perf(case: dict) -> dict[str, float]:
    """The figures of one test case of ReFrame's run report."""
    return {key.rsplit(":", 1)[-1]: value[0] for key, value in case["perfvalues"].items()}


def test_impact_factors_in_every_run(cluster):
    cases = {INCAST: [], ALL_TO_ALL: []}
    for run in range(RUNS):
        res = cluster.run(f"congestion{run}", ["CongestionTest"], "--exec-policy=serial",
                          timeout=300)
        assert res["rc"] == 0, summary(res)
        for name in cases:
            assert res["cases"][name]["result"] == "pass", summary(res)
            cases[name].append(perf(res["cases"][name]))
    incast = [p["bw_impact"] for p in cases[INCAST]]
    all_to_all = [p["bw_impact"] for p in cases[ALL_TO_ALL]]
    print(f"bw_impact incast {incast}, all-to-all {all_to_all}")
    print(f"lat_impact incast {[p['lat_impact'] for p in cases[INCAST]]}, all-to-all "
          f"{[p['lat_impact'] for p in cases[ALL_TO_ALL]]}")
    assert all(x >= 2.0 for x in incast), incast
    assert all(x <= 1.2 for x in all_to_all), all_to_all
    # latency is not asserted: on 2 shared cores the victim's latency is their scheduling as
    # much as the links' (reference/vcluster.yaml's provenance)


def test_slow_victim_link_fails_its_reference(cluster):
    vcluster(cluster.state, "degrade", "node01", "100mbit")
    try:
        res = cluster.run("congestion-degraded", [ALL_TO_ALL.replace(" ", "")], timeout=300)
    finally:
        vcluster(cluster.state, "restore", "node01", timeout=120)
    case = res["cases"][ALL_TO_ALL]
    assert case["result"] == "fail", summary(res)
    assert "bw_isolated_gbps" in (case.get("fail_reason") or ""), summary(res)

"""GPCNeT for real on the vcluster, when GPCNET_HOME points at a build (netbench/GPCNET, `make
all CC=mpicc`, outside the repository): a 10-node cluster (network_load_test's minimum),
`GpcnetNetworkTest %per_nic=1` (network_test on 2 of the nodes: over all 10, its ten ranks
spinning on the machine's 2 shared cores did not finish its first table in 8 minutes) and
`GpcnetLoadTest %per_nic=1` (2 test nodes, 8 congestor nodes) pass against
reference/vcluster.yaml, with every table whole and the impact factors printed. Without
GPCNET_HOME it skips saying so (GPCNeT is in no package registry; CI has no build).

About 13 minutes on 2 cores (12 min 34 s on 2026-11-26)."""

from __future__ import annotations

import os

import pytest
from vcluster.test_e2e import Suite, summary
from vcluster_session import held_cluster

from fabrictest.binaries import GPCNET_PROGRAMS, find_gpcnet

pytestmark = [pytest.mark.vcluster, pytest.mark.slow]

CASES = ["GpcnetNetworkTest%per_nic=1", "GpcnetLoadTest%per_nic=1"]
EXTRA = ["-S", "GpcnetNetworkTest.num_nodes=2", "-S", "time_limit=50m", "--exec-policy=serial"]
FIGURES = {"GpcnetNetworkTest": ["rr_lat_avg", "rr_bw_avg", "allreduce_avg", "alltoall_avg"],
           "GpcnetLoadTest": ["rr_lat_avg", "rr_bw_sync_avg", "bw_impact_avg", "lat_impact_p99",
                              "allreduce_impact_avg"]}


@pytest.fixture(scope="module")
def gpcnet_home():
    home = os.environ.get("GPCNET_HOME")
    if not home:
        pytest.skip("GPCNET_HOME is unset: build GPCNeT (netbench/GPCNET) outside the "
                    "repository and point GPCNET_HOME at it")
    if not all(find_gpcnet(p) for p in GPCNET_PROGRAMS):
        pytest.skip(f"GPCNET_HOME={home} holds no network_test and network_load_test")
    return home


@pytest.mark.timeout(3600)
def test_gpcnet_family_passes_on_ten_nodes(gpcnet_home, tmp_path, tmp_path_factory):
    work = tmp_path / "work"
    work.mkdir()
    # a short state directory: Slurm's step sockets live in it (vcluster.plan.SOCKET_PATH_MAX)
    state_dir = tmp_path_factory.mktemp("vc-gpcnet") / "state"
    with held_cluster(state_dir, "--nodes", "10") as state:
        res = Suite(state, work).run("gpcnet", CASES, *EXTRA, timeout=3300)
    cases = {n: tc for n, tc in res["cases"].items() if n.startswith("Gpcnet")}
    assert len(cases) == 2, summary(res)
    for name, tc in cases.items():
        assert tc["result"] == "pass", summary(res)
        for figure in FIGURES[name.split()[0]]:
            assert f"P: {figure}:" in res["out"], res["out"][-3000:]

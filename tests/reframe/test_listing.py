"""`reframe -l` per system: every family is listed where the partition has the features it needs
(+rdma, +gpu: `valid_systems`), and only there, so `reframe -l --system local` lists what runs
on local; the suite loads without warnings."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest
from _rfm import SETTINGS, SYSTEMS, run_reframe

from fabrictest.binaries import benchmark_features

#: families every case of which needs a partition feature (rdma, gpu)
NEEDS = {"OsuGpuAwareTest": "gpu", "NicHealthTest": "rdma", "PerftestWriteBwTest": "rdma"}
#: the features each family needs, the benchmark suites (osu, imb, perftest) included: local
#: and vcluster have those when fabrictest.binaries finds them, +spack systems by declaration
FAMILY_NEEDS = {
    "OsuPt2PtTest": ("osu",),
    "OsuMbwMrTest": ("osu",),
    "OsuGpuAwareTest": ("osu", "gpu"),
    "ImbTest": ("imb",),
    "PerftestWriteBwTest": ("rdma", "perftest"),
    "NicHealthTest": ("rdma",),
}
#: parameter values that need one
PARAM_NEEDS = {"%method=rdma": "rdma", "%buffer=cuda": "gpu", "%transport=rdma": "rdma"}
#: ... and the features the family of those cases needs besides
PARAM_FAMILY_NEEDS = {"%transport=rdma": ("imb",)}


def system_features(name: str) -> set[str]:
    """The features of the system's partitions, from its configuration file."""
    spec = importlib.util.spec_from_file_location("fabrictest_settings_for_listing", SETTINGS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (system,) = [s for s in mod.site_configuration["systems"] if s["name"] == name]
    return {f for part in system["partitions"] for f in part.get("features", [])}

FAMILIES = (
    "TxRxTest",
    "AllToManyTest",
    "AllToManyScalingTest",
    "BisectionTest",
    "OsuPt2PtTest",
    "OsuMbwMrTest",
    "OsuGpuAwareTest",
    "ImbTest",
    "PerftestWriteBwTest",
    "NicHealthTest",
)


@pytest.mark.parametrize("system", SYSTEMS)
def test_listing(system, tmp_path):
    run = run_reframe(["--system", system, "-l"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    assert "skipping test file" not in run.output, run.output
    features = system_features(system)
    for family in FAMILIES:
        # a test others depend on is listed under them with '^'
        listed = re.search(rf"[-^] ?{family}\b", run.output) is not None
        needs = FAMILY_NEEDS.get(family, ("mpi",))
        assert listed == all(f in features for f in needs), (family, features)
    cases = [line for line in run.output.splitlines() if line.lstrip().startswith(("-", "^"))]
    for value, feature in PARAM_NEEDS.items():
        with_value = [c for c in cases if value in c.replace(" ", "")]
        needs = (feature, *PARAM_FAMILY_NEEDS.get(value, ()))
        assert bool(with_value) == all(f in features for f in needs), (value, features)
    for scenario in ("same-node", "paired", "many-to-one", "pairs-of-three"):
        assert f"%scenario={scenario}" in run.output


def test_local_lists_no_gpu_or_rdma_test(tmp_path):
    run = run_reframe(["--system", "local", "-l"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    listed = [line for line in run.output.splitlines() if re.match(r"\s*[-^] \w", line)]
    assert any("TxRxTest" in line for line in listed), run.output
    needs = (*NEEDS, *PARAM_NEEDS)
    assert [line for line in listed if any(x in line.replace(" ", "") for x in needs)] == []


def test_local_lists_no_osu_or_imb_test_without_a_build(tmp_path):
    """Without OSU_HOME/IMB_HOME (and none on PATH) local has neither +osu nor +imb: their tests
    are not listed (they used to be listed and then skipped, 'osu_bw not found')."""
    env = {"OSU_HOME": "", "IMB_HOME": ""}
    found = benchmark_features({**os.environ, **env})
    if {"osu", "imb"} & set(found):
        pytest.skip(f"this host has {found} on PATH: nothing to check")
    run = run_reframe(["--system", "local", "-l"], tmp_path, timeout=180, env=env)
    assert run.returncode == 0, run.output[-3000:]
    listed = [line for line in run.output.splitlines() if re.match(r"\s*[-^] \w", line)]
    assert any("TxRxTest" in line for line in listed), run.output
    assert [line for line in listed if re.search(r"\b(Osu|Imb)\w*Test\b", line)] == []


def test_gpu_listing_on_crusher(tmp_path):
    run = run_reframe(["--system", "crusher", "-l", "-t", "gpu-aware"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    assert "OsuGpuAwareTest %benchmark=osu_bw" in run.output
    assert "OsuGpuAwareTest %benchmark=osu_bibw" in run.output

"""`reframe -l` per system: every family is listed where the partition has the features it needs
(+rdma, +gpu: `valid_systems`), and only there, so `reframe -l --system local` lists what runs
on local; the suite loads without warnings."""

from __future__ import annotations

import importlib.util
import re

import pytest
from _rfm import SETTINGS, SYSTEMS, run_reframe

#: families every case of which needs a partition feature
NEEDS = {"OsuGpuAwareTest": "gpu", "NicHealthTest": "rdma", "PerftestWriteBwTest": "rdma"}
#: parameter values that need one
PARAM_NEEDS = {"%method=rdma": "rdma", "%buffer=cuda": "gpu", "%transport=rdma": "rdma"}


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
        assert listed == (NEEDS.get(family, "mpi") in features), (family, features)
    cases = [line for line in run.output.splitlines() if line.lstrip().startswith(("-", "^"))]
    for value, feature in PARAM_NEEDS.items():
        with_value = [c for c in cases if value in c.replace(" ", "")]
        assert bool(with_value) == (feature in features), (value, features, with_value[:3])
    for scenario in ("same-node", "paired", "many-to-one", "pairs-of-three"):
        assert f"%scenario={scenario}" in run.output


def test_local_lists_no_gpu_or_rdma_test(tmp_path):
    run = run_reframe(["--system", "local", "-l"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    listed = [line for line in run.output.splitlines() if re.match(r"\s*[-^] \w", line)]
    assert any("TxRxTest" in line for line in listed), run.output
    needs = (*NEEDS, *PARAM_NEEDS)
    assert [line for line in listed if any(x in line.replace(" ", "") for x in needs)] == []


def test_gpu_listing_on_crusher(tmp_path):
    run = run_reframe(["--system", "crusher", "-l", "-t", "gpu-aware"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    assert "OsuGpuAwareTest %benchmark=osu_bw" in run.output
    assert "OsuGpuAwareTest %benchmark=osu_bibw" in run.output

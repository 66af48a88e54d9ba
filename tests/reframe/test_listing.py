"""`reframe -l` per system: every family is listed, the GPU tests included (they skip at setup
where the partition lacks +gpu), and the suite loads without warnings."""

from __future__ import annotations

import re

import pytest
from _rfm import SYSTEMS, run_reframe

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
    for family in FAMILIES:
        # a test others depend on is listed under them with '^'
        assert re.search(rf"[-^] ?{family}\b", run.output), family
    for scenario in ("same-node", "paired", "many-to-one", "pairs-of-three"):
        assert f"%scenario={scenario}" in run.output


def test_gpu_listing_on_crusher(tmp_path):
    run = run_reframe(["--system", "crusher", "-l", "-t", "gpu-aware"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    assert "OsuGpuAwareTest %benchmark=osu_bw" in run.output
    assert "OsuGpuAwareTest %benchmark=osu_bibw" in run.output

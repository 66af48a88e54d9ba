"""OSU and IMB on `local` for real, when OSU_HOME / IMB_HOME point at builds (an OSU install
prefix or 7.x build tree; a directory holding IMB-MPI1): every two-rank test runs on this host
(osu_mbw_mr with 2 ranks standing for 2 nodes), passes and prints its performance values.
Without them the tests skip saying so (the binaries are not part of this repository)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from _rfm import TESTS_DIR, run_reframe

pytestmark = [pytest.mark.slow, pytest.mark.mpi]

sys.path.insert(0, str(TESTS_DIR))
from fabrictest.binaries import find_imb, find_osu  # noqa: E402

OSU_PASS = {
    "OsuPt2PtTest %benchmark=osu_latency": "P: latency:",
    "OsuPt2PtTest %benchmark=osu_bw": "P: peak_bw:",
    "OsuPt2PtTest %benchmark=osu_bibw": "P: peak_bw:",
    "OsuPt2PtTest %benchmark=osu_get_bw": "P: peak_bw:",
    "OsuMbwMrTest %scope=switch %ranks_per_node=1": "P: node_pair_bw:",
    "OsuMbwMrTest %scope=group %ranks_per_node=1": "P: node_pair_bw:",
    "OsuMbwMrTest %scope=global %ranks_per_node=1": "P: node_pair_bw:",
}
IMB_PASS = {
    "ImbTest %benchmark=PingPong %transport=tcp": "P: latency:",
    "ImbTest %benchmark=Uniband %transport=tcp": "P: peak_bw:",
    "ImbTest %benchmark=Biband %transport=tcp": "P: peak_bw:",
}


def _need(var: str, found: str | None) -> None:
    if not os.environ.get(var):
        pytest.skip(f"{var} is unset: build the benchmark outside the repository and point {var} at it")
    if found is None:
        pytest.skip(f"{var}={os.environ[var]} holds no usable build")


def _perf_block(output: str, name: str) -> str:
    """The lines printed after the test's OK line, up to the next verdict."""
    want = name.replace(" ", "")
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if "OK ]" in line and want in line.replace(" ", ""):
            block = []
            for nxt in lines[i + 1 :]:
                if nxt.startswith("["):
                    break
                block.append(nxt)
            return "\n".join(block)
    return ""


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH: run scripts/install.sh and activate .venv")
    osu, imb = find_osu("osu_bw"), find_imb()
    if not (os.environ.get("OSU_HOME") and osu) and not (os.environ.get("IMB_HOME") and imb):
        pytest.skip("OSU_HOME and IMB_HOME are unset (or hold no build): nothing to run for real")
    tmp = tmp_path_factory.mktemp("osu-imb-real")
    args = ["--system", "local", "-r", "-S", "size_profile=quick", "-n", "Osu", "-n", "Imb"]
    return run_reframe(args, tmp, timeout=300)


def _check(run, cases: dict[str, str]) -> None:
    for name, perf in cases.items():
        case = run.case(name)
        assert case["result"] == "pass", (name, case.get("fail_reason"), run.output[-4000:])
        block = _perf_block(run.output, name)
        assert perf in block, (name, block)


def test_osu_runs_for_real(real_run):
    _need("OSU_HOME", find_osu("osu_bw"))
    _check(real_run, OSU_PASS)
    # more ranks than this host's 2 slots, and the GPU cases: not on local at all
    names = [c["display_name"].replace(" ", "") for c in real_run.cases()]
    assert "OsuMbwMrTest%scope=switch%ranks_per_node=8" not in names
    assert "OsuMbwMrTest%scope=switch%ranks_per_node=1" in names
    assert not [c for c in real_run.cases() if c["display_name"].startswith("OsuGpuAwareTest")]
    assert not [c for c in real_run.cases() if c["result"] == "skip"]


def test_imb_runs_for_real(real_run):
    _need("IMB_HOME", find_imb())
    _check(real_run, IMB_PASS)
    # the rdma transport needs +rdma: not on local at all
    rdma = [c for c in real_run.cases() if "%transport=rdma" in c["display_name"].replace(" ", "")]
    assert rdma == []


def test_real_run_passes(real_run):
    # how long it takes: bench/bench_local_suite.py --osu-home ... --imb-home ...
    print(f"OSU/IMB on local: {real_run.seconds:.1f} s")
    assert real_run.returncode == 0, real_run.output[-6000:]


def test_osu_build_tree_layout(tmp_path):
    """OSU_HOME may be a 7.x build tree: c/mpi/pt2pt/standard/ and c/mpi/one-sided/."""
    found = find_osu("osu_bw")
    if not os.environ.get("OSU_HOME") or found is None:
        pytest.skip("OSU_HOME is unset: no OSU build to lay out as a build tree")
    tree = tmp_path / "osu-build"
    for name, sub in (("osu_bw", "c/mpi/pt2pt/standard"), ("osu_get_bw", "c/mpi/one-sided")):
        src = find_osu(name)
        assert src is not None, name
        (tree / sub).mkdir(parents=True)
        (tree / sub / name).symlink_to(Path(src))
    env = {"OSU_HOME": str(tree), "PATH": ""}
    assert find_osu("osu_bw", env) == str(tree / "c/mpi/pt2pt/standard/osu_bw")
    assert find_osu("osu_get_bw", env) == str(tree / "c/mpi/one-sided/osu_get_bw")

"""A check run without its program FAILs naming the program (issue 40, the fault matrix's
"missing tool" column): one `reframe -r --system local` over the families at once, where

* the suite's own C programs were never built (a ``make`` first on PATH that makes nothing:
  the binaries fixture's directory stays empty, as after a build that left a program out),
* ``txrx`` is not on PATH (the job runs it by name, as on a node without the suite's Python),
* GPCNET_HOME holds ``network_test`` but not ``network_load_test``, NCCL_TESTS_HOME
  ``alltoall_perf`` but not ``all_reduce_perf`` (partial builds: the partition keeps its
  feature, the missing program's cases fail at setup naming it),
* a stand-in ``nvidia-smi`` and toolkit make local +gpu (GpuExchangeTest, NcclTest);

and one `--dry-run` where GPCNET_HOME holds only ``network_load_test`` (GpcnetNetworkTest),
and NicHealthTest without ``fabric-health`` on the scratch system ``nics`` (_nics_system.py:
local declares no fabric NIC), and SweepTest (``-S launcher=sim``) run by a ReFrame whose
interpreter has no ``fabric-sweep`` beside it (a copy of this virtual environment without its
console scripts, as a node without the suite's). No case passes; each names its program."""

from __future__ import annotations

import os
import stat
import sys
import sysconfig
from pathlib import Path

import _rfm
import pytest
from _nics_system import nics_config
from _rfm import run_reframe

pytestmark = [pytest.mark.slow, pytest.mark.mpi]

#: the families run in one go (AllToManyScalingTest rides on AllToManyTest's cases)
FAMILIES = ("AllToManyTest", "AllToManyScalingTest", "BisectionTest", "CongestionTest",
            "GpcnetLoadTest", "GpuExchangeTest", "NcclTest", "TxRxTest")
#: programs a job runs by name from PATH: kept off it
BY_NAME = ("txrx", "fabric-health", "fabric-sweep")


def _exe(path: Path, body: str = "exit 0") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _bare_venv(tmp: Path) -> Path:
    """A virtual environment of this one's packages and no console scripts: its ``reframe``."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("not in a virtual environment: activate .venv")
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text((Path(sys.prefix) / "pyvenv.cfg").read_text())
    purelib = Path(sysconfig.get_paths()["purelib"])
    site = venv / purelib.relative_to(sys.prefix)
    site.parent.mkdir(parents=True)
    site.symlink_to(purelib)
    python = venv / "bin" / "python3"
    python.symlink_to(os.path.realpath(sys._base_executable))
    reframe = venv / "bin" / "reframe"
    reframe.write_text(f"#!{python}\nimport sys\nfrom reframe.frontend.cli import main\n"
                       "sys.exit(main())\n")
    reframe.chmod(0o755)
    return reframe


def _env(tmp: Path, gpcnet: str) -> dict[str, str]:
    stub = tmp / "stub"
    _exe(stub / "make", "# makes nothing (tests/reframe/test_missing_programs.py)\nexit 0")
    gpus = "".join(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i})\\n" for i in range(2))
    _exe(stub / "nvidia-smi", f"printf '{gpus}'")
    cuda = tmp / "cuda" / "include"
    cuda.mkdir(parents=True)
    (cuda / "cuda_runtime_api.h").write_text("/* stand-in */\n")
    _exe(tmp / "gpcnet" / gpcnet)
    _exe(tmp / "nccl" / "build" / "alltoall_perf")
    path = [d for d in os.environ["PATH"].split(os.pathsep)
            if d and not any((Path(d) / name).exists() for name in BY_NAME)]
    return {"PATH": os.pathsep.join([str(stub), *path]), "CUDA_HOME": str(tmp / "cuda"),
            "GPCNET_HOME": str(tmp / "gpcnet"), "NCCL_TESTS_HOME": str(tmp / "nccl"),
            "OSU_HOME": "", "IMB_HOME": ""}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("missing-programs")
    names = "|".join(FAMILIES)
    run = run_reframe(["--system", "local", "-r", "-n", f"^({names})",
                       "-x", "CongestionTest%aggressors=all-to-all",
                       "-S", "CongestionTest.num_nodes=3", "-S", "GpcnetLoadTest.num_nodes=10"],
                      tmp / "run", timeout=300, env=_env(tmp / "a", "network_test"))
    dry = run_reframe(["--system", "local", "--dry-run", "-n", "^GpcnetNetworkTest",
                       "-S", "GpcnetNetworkTest.num_nodes=2"],
                      tmp / "dry", timeout=300, env=_env(tmp / "b", "network_load_test"))
    health = run_reframe(["--system", "nics", "-r", "-n", "^NicHealthTest"], tmp / "nics",
                         timeout=300, env={**_env(tmp / "c", "network_test"),
                                           **nics_config(tmp / "c")})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_rfm, "reframe_exe", lambda: str(_bare_venv(tmp / "d")))
        sweep = run_reframe(["--system", "local", "-r", "-n", "^SweepTest",
                             "-S", "SweepTest.launcher=sim"], tmp / "sweep", timeout=300,
                            env=_env(tmp / "d", "network_test"))
    return run, dry, health, sweep


def _reasons(run, family: str) -> dict[str, str]:
    cases = {c["display_name"]: c for c in run.cases()
             if c["display_name"].split(" ")[0] == family}
    assert cases, (family, run.output[-3000:])
    return {name: (c["result"], c.get("fail_reason") or "") for name, c in cases.items()}


@pytest.mark.parametrize("family, program", [
    pytest.param("AllToManyTest", "alltomany", id="AllToManyTest"),
    pytest.param("BisectionTest", "bisection_bw", id="BisectionTest"),
    pytest.param("CongestionTest", "congestion", id="CongestionTest"),
    pytest.param("GpuExchangeTest", None, id="GpuExchangeTest"),  # %program= names it
])
def test_an_unbuilt_program_fails_every_case_naming_it(runs, family, program):
    run, _dry, _health, _sweep = runs
    assert run.returncode != 0
    for name, (result, reason) in _reasons(run, family).items():
        assert result == "fail", (name, result)
        assert "the launcher could not start " in reason, (name, reason)
        assert "(not there or not executable)" in reason, (name, reason)
        want = program or name.split("=")[1]
        assert "FabricBinaries_" in reason and f"/{want} on " in reason, (name, reason)
        assert "signal" not in reason, (name, reason)  # mpirun's 132 is no SIGILL


def test_the_scaling_check_never_judges_what_was_not_run(runs):
    run, _dry, _health, _sweep = runs
    (result, _reason), = _reasons(run, "AllToManyScalingTest").values()
    assert result == "fail_deps"  # counted failed by ReFrame: its AllToManyTest cases failed


@pytest.mark.parametrize("family, program", [
    pytest.param("TxRxTest", "txrx", id="TxRxTest"),
    pytest.param("NicHealthTest", "fabric-health", id="NicHealthTest"),
])
def test_a_program_not_on_path_fails_naming_it(runs, family, program):
    run, _dry, health, _sweep = runs
    found = _reasons(health if family == "NicHealthTest" else run, family)
    for name, (result, reason) in found.items():
        assert result == "fail", (name, result)
        assert f"the launcher could not start {program} on " in reason, (name, reason)
        assert "(not found)" in reason and "signal" not in reason, (name, reason)


@pytest.mark.parametrize("family, program, home", [
    pytest.param("GpcnetLoadTest", "network_load_test", "GPCNET_HOME", id="GpcnetLoadTest"),
    pytest.param("NcclTest", "all_reduce_perf", "NCCL_TESTS_HOME", id="NcclTest"),
    pytest.param("GpcnetNetworkTest", "network_test", "GPCNET_HOME", id="GpcnetNetworkTest"),
])
def test_a_program_a_partial_build_lacks_fails_at_setup_naming_it(runs, family, program, home):
    run, dry, _health, _sweep = runs
    found = _reasons(dry if family == "GpcnetNetworkTest" else run, family)
    mine = {n: r for n, r in found.items() if family != "NcclTest" or program in n}
    assert mine, found
    for name, (result, reason) in mine.items():
        assert result == "fail", (name, result)
        assert f"{program} not found for local:default (no +spack): {home} holds no" in reason, \
            (name, reason)


def test_a_sweep_job_without_fabric_sweep_fails_naming_it(runs):
    *_, sweep = runs
    for name, (result, reason) in _reasons(sweep, "SweepTest").items():
        assert result == "fail", (name, result)
        assert reason.startswith("sanity error: fabric-sweep was not started (exit status 127: "
                                 "not found or not executable on the node: "), reason
        assert reason.endswith("fabric-sweep: command not found)"), reason

"""A third-party benchmark whose ranks stop (SIGSTOP, as a hung node or a debugger leaves
them) is ended by the job's time limit: the case FAILs saying the job timed out, never passes
and never hangs the run (issue 40, the fault matrix's "hung tool" column). Our C programs end
a stopped rank themselves (tests/c/test_timeouts.py); OSU, IMB, GPCNeT and nccl-tests have no
such timeout, so the time limit is what ends them. One `reframe -r --system local` with
`-S time_limit=3s` over one case of each family, every program a stand-in (found through
OSU_HOME, IMB_HOME, GPCNET_HOME, NCCL_TESTS_HOME, as a build would be) whose rank 0 prints a
line and whose every rank then stops itself; a stand-in nvidia-smi makes local +gpu. Then the
families that need a fabric NIC, NicHealthTest (fabric-health) and PerftestWriteBwTest
(ib_write_bw), the same way on the scratch system ``nics`` (_nics_system.py), the stand-ins
first on PATH."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from _nics_system import nics_config
from _rfm import run_reframe

pytestmark = [pytest.mark.slow, pytest.mark.mpi]

TIME_LIMIT_S = 3
STARTED = "stand-in: started, now stopping (SIGSTOP)"
#: family -> the one case run (-n), and where its program is found
CASES = {
    "OsuPt2PtTest": "OsuPt2PtTest%benchmark=osu_bw$",
    "OsuMbwMrTest": "OsuMbwMrTest%scope=switch",
    "OsuCollectiveTest": "OsuCollectiveTest%benchmark=osu_allreduce%per_node=1%scope=all",
    "OsuGpuAwareTest": "OsuGpuAwareTest%benchmark=osu_bw%span=node",
    "ImbTest": "ImbTest%benchmark=PingPong",
    "GpcnetNetworkTest": "GpcnetNetworkTest%per_nic=1",
    "GpcnetLoadTest": "GpcnetLoadTest%per_nic=1",
    "NcclTest": "NcclTest%benchmark=all_reduce_perf",
}
#: the same on the scratch system ``nics``: found on PATH
ON_NICS = {"NicHealthTest": "fabric-health", "PerftestWriteBwTest": "ib_write_bw"}
PROGRAMS = {"osu": ("osu_bw", "osu_mbw_mr", "osu_allreduce"), "imb": ("IMB-MPI1",),
            "gpcnet": ("network_test", "network_load_test"),
            "nccl/build": ("all_reduce_perf",)}


def _exe(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _leftovers(tmp: Path) -> list[str]:
    """Processes still running a program under ``tmp`` (their command line names it)."""
    out = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if entry.isdigit() and str(tmp).encode() in cmdline:
            out.append(f"{entry}: {cmdline.decode(errors='replace')}")
    return out


@pytest.fixture(scope="module")
def hung(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hung-programs")
    bins = tmp / "bins"
    for where, names in PROGRAMS.items():
        for name in names:
            _exe(bins / where / name,
                 f'[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] && echo "# {name} {STARTED}"\n'
                 "kill -STOP $$\nexit 0")
    stub = tmp / "stub"
    for name in ON_NICS.values():
        _exe(stub / name, f'echo "# {name} {STARTED}"\nkill -STOP $$\nexit 0')
    _exe(stub / "make", "exit 0  # the suite's own programs are not run here")
    gpus = "".join(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i})\\n" for i in range(2))
    _exe(stub / "nvidia-smi", f"printf '{gpus}'")
    (tmp / "cuda" / "include").mkdir(parents=True)
    (tmp / "cuda" / "include" / "cuda_runtime_api.h").write_text("/* stand-in */\n")
    env = {"PATH": f"{stub}{os.pathsep}{os.environ['PATH']}", "CUDA_HOME": str(tmp / "cuda"),
           "OSU_HOME": str(bins / "osu"), "IMB_HOME": str(bins / "imb"),
           "GPCNET_HOME": str(bins / "gpcnet"), "NCCL_TESTS_HOME": str(bins / "nccl")}
    args = ["--system", "local", "-r", "-S", f"time_limit={TIME_LIMIT_S}s",
            "-S", "GpcnetNetworkTest.num_nodes=2", "-S", "GpcnetLoadTest.num_nodes=10"]
    for case in CASES.values():
        args += ["-n", case]
    run = run_reframe(args, tmp / "run", timeout=400, env=env)
    nics = run_reframe(["--system", "nics", "-r", "-S", f"time_limit={TIME_LIMIT_S}s",
                        "-n", f"^({'|'.join(ON_NICS)})"], tmp / "nics", timeout=300,
                       env={**env, **nics_config(tmp / "nics")})
    return run, nics, _leftovers(bins) + _leftovers(stub)


@pytest.mark.parametrize("family", [*CASES, *ON_NICS])
def test_a_stopped_benchmark_fails_at_the_time_limit(hung, family):
    run, nics, _left = hung
    run = nics if family in ON_NICS else run
    assert run.returncode != 0
    cases = [c for c in run.cases() if c["display_name"].split(" ")[0] == family]
    assert len(cases) == 1, (family, [c["display_name"] for c in run.cases()])
    case = cases[0]
    reason = case.get("fail_reason") or ""
    assert case["result"] == "fail", (family, case["result"])
    assert "job timed out" in reason and f"> {TIME_LIMIT_S}.0s)" in reason, reason
    # the program did start, and stopped: it is the time limit, not a launch failure, that
    # ended it (rfm_job.out, or the first run's own file: OsuGpuAwareTest's osu_HH.out)
    outputs = [f.read_text() for f in Path(case["stagedir"]).glob("*.out")]
    assert any(STARTED in text for text in outputs), (family, outputs)


def test_no_stopped_rank_outlives_the_run(hung):
    _run, _nics, left = hung
    assert left == []

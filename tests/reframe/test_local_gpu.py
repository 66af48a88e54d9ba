"""`local` is +gpu where nvidia-smi lists a GPU and a CUDA toolkit is there (fabrictest.gpus):
then its %buffer=cuda cases are listed; a GPU without a toolkit, or no GPU, lists none. Here a
stand-in nvidia-smi and NVIDIA's CUDA runtime wheel stand for them (the real H100 run:
docs/gpu.md, "Checking the GPU paths before acceptance")."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from _rfm import run_reframe

from fabrictest.gpus import cuda_gpus, cuda_host, cuda_toolkit, gpu_names, has_cuda

H100 = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-96119cef-1a67-70b2-5dc2-3712484fe97b)\n"


def stand_in_smi(tmp_path: Path, script: str) -> dict[str, str]:
    """An environment whose PATH starts with a stand-in nvidia-smi running ``script``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\n{script}\n")
    smi.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def fake_toolkit(tmp_path: Path) -> str:
    home = tmp_path / "cuda"
    (home / "include").mkdir(parents=True)
    (home / "include" / "cuda_runtime_api.h").write_text("/* stand-in */\n")
    return str(home)


def test_gpu_names_from_nvidia_smi_listing():
    mig = "  MIG 1g.10gb     Device  0: (UUID: MIG-5c1b)\n"
    assert gpu_names(H100 + mig + "GPU 1: Tesla V100-SXM2-16GB (UUID: GPU-1)\n") == [
        "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB"]
    assert gpu_names("No devices were found\n") == []


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_no_gpu_when_nvidia_smi_is_missing_fails_or_lists_none(tmp_path):
    assert cuda_gpus({"PATH": str(tmp_path)}) == []
    assert cuda_gpus(stand_in_smi(tmp_path, f"printf '{H100}'")) == ["NVIDIA H100 80GB HBM3"]
    failing = stand_in_smi(tmp_path, "echo 'NVIDIA-SMI has failed' >&2; exit 9")
    assert cuda_gpus(failing) == []
    assert cuda_gpus(stand_in_smi(tmp_path, "echo 'No devices were found'")) == []


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_a_gpu_needs_a_toolkit_to_count(tmp_path):
    env = stand_in_smi(tmp_path, f"printf '{H100}'")
    assert not has_cuda({**env, "CUDA_HOME": str(tmp_path / "none")})
    home = fake_toolkit(tmp_path)
    assert cuda_toolkit({**env, "CUDA_HOME": home}) == Path(home)
    assert has_cuda({**env, "CUDA_HOME": home})


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_why_a_host_is_not_gpu_in_words(tmp_path):
    assert cuda_host({"PATH": str(tmp_path)}).why_not == "no nvidia-smi on PATH (no NVIDIA driver)"
    failing = stand_in_smi(tmp_path / "a", "echo 'NVIDIA-SMI has failed' >&2; exit 9")
    assert cuda_host(failing).why_not == "nvidia-smi -L failed (exit status 9): NVIDIA-SMI has failed"
    none = stand_in_smi(tmp_path / "b", "echo 'No devices were found'")
    assert cuda_host(none).why_not == "nvidia-smi -L lists no GPU"
    one = stand_in_smi(tmp_path / "c", f"printf '{H100}'")
    host = cuda_host({**one, "CUDA_HOME": str(tmp_path / "none")})
    assert host.why_not == (f"1 GPU(s) but no CUDA toolkit at CUDA_HOME={tmp_path / 'none'} "
                            "(include/cuda_runtime_api.h missing)")
    host = cuda_host({**one, "CUDA_HOME": fake_toolkit(tmp_path)})
    assert host.usable and host.gpus == ("NVIDIA H100 80GB HBM3",)


def listed(run) -> list[str]:
    return [line for line in run.output.splitlines() if re.match(r"\s*[-^] \w", line)]


def test_local_lists_the_cuda_cases_with_a_gpu_and_a_toolkit(tmp_path):
    if has_cuda():
        pytest.skip("this host has a GPU and CUDA: local is +gpu without stand-ins")
    env = stand_in_smi(tmp_path, f"printf '{H100}'")
    run = run_reframe(["--system", "local", "-l", "-n", "TxRxTest"], tmp_path / "gpu",
                      timeout=180, env={"PATH": env["PATH"], "CUDA_HOME": fake_toolkit(tmp_path)})
    assert run.returncode == 0, run.output[-3000:]
    cuda = [line for line in listed(run) if "%buffer=cuda" in line]
    host = [line for line in listed(run) if "%buffer=host" in line]
    assert cuda and len(cuda) == len([line for line in host if "%method=mpi" in line]), run.output
    assert all("%method=mpi" in line for line in cuda)  # --buffer cuda is mpi only
    run = run_reframe(["--system", "local", "-l", "-n", "TxRxTest"], tmp_path / "no-toolkit",
                      timeout=180, env={"PATH": env["PATH"], "CUDA_HOME": str(tmp_path / "none")})
    assert run.returncode == 0 and [line for line in listed(run) if "%buffer=cuda" in line] == []


# -- the one-node GPU cases (issue 33) and NCCL (issue 32) on local ------------------------------

ONE_NODE = "OsuGpuAwareTest|GpuExchangeTest|NcclTest"


def stand_in_suites(tmp_path: Path) -> dict[str, str]:
    """OSU_HOME and NCCL_TESTS_HOME holding stand-in programs (listing only)."""
    for path in (tmp_path / "osu" / "bin" / "osu_bw", tmp_path / "osu" / "bin" / "osu_bibw",
                 tmp_path / "nccl" / "build" / "all_reduce_perf",
                 tmp_path / "nccl" / "build" / "alltoall_perf"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
    return {"OSU_HOME": str(tmp_path / "osu"), "NCCL_TESTS_HOME": str(tmp_path / "nccl")}


def gpu_host(tmp_path: Path, gpus: int) -> dict[str, str]:
    """The environment of a host whose nvidia-smi lists ``gpus`` GPUs, with a toolkit and the
    suites."""
    listing = "".join(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i})\\n" for i in range(gpus))
    env = stand_in_smi(tmp_path, f"printf '{listing}'")
    return {"PATH": env["PATH"], "CUDA_HOME": fake_toolkit(tmp_path), **stand_in_suites(tmp_path)}


def test_without_a_gpu_the_listing_says_why(tmp_path):
    """No driver here: every GPU case is left out, and -vv says it is the driver that lacks."""
    if has_cuda():
        pytest.skip("this host has a GPU and CUDA")
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep)
                           if not (Path(d) / "nvidia-smi").exists())
    run = run_reframe(["--system", "local", "-l", "-vv", "-n", ONE_NODE], tmp_path / "r",
                      timeout=180, env={"PATH": path, **stand_in_suites(tmp_path)})
    assert listed(run) == [], run.output[-2000:]
    why = "not listed on local:default: has no +gpu (no nvidia-smi on PATH (no NVIDIA driver))"
    for case in ("OsuGpuAwareTest %benchmark=osu_bw %span=node",
                 "GpuExchangeTest %program=alltomany",
                 "NcclTest %benchmark=all_reduce_perf %span=node"):
        assert f"{case}: {why}" in run.output, case


def test_one_gpu_lists_the_one_node_cases_but_not_nccl(tmp_path):
    """One GPU: the D-D/H-H cases run with 2 ranks sharing it; NCCL's bus bandwidth with one
    rank is 0 by definition, so NcclTest is not listed, saying so; two nodes' cases neither."""
    run = run_reframe(["--system", "local", "-l", "-vv", "-n", ONE_NODE], tmp_path / "r",
                      timeout=180, env=gpu_host(tmp_path, 1))
    assert run.returncode == 0, run.output[-3000:]
    names = [re.sub(r"\s*/[0-9a-f]{8}$", "", line.strip()[2:]) for line in listed(run)]
    assert sorted(names) == ["GpuExchangeTest %program=alltomany",
                             "GpuExchangeTest %program=bisection_bw",
                             "OsuGpuAwareTest %benchmark=osu_bibw %span=node",
                             "OsuGpuAwareTest %benchmark=osu_bw %span=node"], names
    assert ("NcclTest %benchmark=alltoall_perf %span=node: not listed on local:default: "
            "alltoall_perf needs 2 GPUs per node (one rank each), the partition declares 1: "
            "with one rank the bus bandwidth is 0") in run.output
    assert ("OsuGpuAwareTest %benchmark=osu_bw %span=nodes: not listed on local:default: "
            "osu_bw between nodes needs 2 nodes, has 1") in run.output


def test_two_gpus_list_nccl_on_the_node(tmp_path):
    run = run_reframe(["--system", "local", "-l", "-n", "NcclTest"], tmp_path / "r",
                      timeout=180, env=gpu_host(tmp_path, 2))
    assert run.returncode == 0, run.output[-3000:]
    names = [re.sub(r"\s*/[0-9a-f]{8}$", "", line.strip()[2:]) for line in listed(run)]
    assert sorted(names) == ["NcclTest %benchmark=all_reduce_perf %span=node",
                             "NcclTest %benchmark=alltoall_perf %span=node"], names


def test_one_gpu_job_scripts_place_two_ranks_and_say_they_share_it(tmp_path):
    run = run_reframe(["--system", "local", "--dry-run", "-n", "GpuExchangeTest|OsuGpuAwareTest"],
                      tmp_path / "r", timeout=300, env=gpu_host(tmp_path, 1))
    assert run.returncode == 0, run.output[-3000:]
    bis = run.job_script("GpuExchangeTest %program=bisection_bw")
    assert re.search(r"^mpirun -np 2 --oversubscribe --bind-to none \S*bisection_bw -d host -s 4k "
                     r"-e 4m 2 50 > host\.out; ", bis, re.M), bis
    assert re.search(r"^mpirun -np 2 .*bisection_bw -d device -s 4k -e 4m 2 50$", bis, re.M)
    descr = {c["display_name"]: c["descr"] for c in run.cases()}
    assert descr["GpuExchangeTest %program=bisection_bw"] == (
        "bisection_bw on one node, 2 ranks sharing its one GPU: device vs host buffers")
    assert descr["OsuGpuAwareTest %benchmark=osu_bw %span=node"] == (
        "osu_bw H H, H D, D D on one node: 2 ranks sharing its one GPU")
    osu = run.job_script("OsuGpuAwareTest %benchmark=osu_bw %span=node")
    assert re.search(r"^mpirun -np 2 .*osu_bw -d cuda H H > osu_HH\.out; ", osu, re.M), osu


def wheel_toolkit() -> str:
    """NVIDIA's CUDA 13 wheels of this Python (nvidia/cu13: headers and libcudart_static.a),
    which `make GPU=cuda` builds against; else skip."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for loc in list(spec.submodule_search_locations or []) if spec else []:
        home = Path(loc) / "cu13"
        if (home / "lib" / "libcudart_static.a").is_file():
            return str(home)
    pytest.skip("no CUDA wheels (pip install nvidia-cuda-runtime nvidia-cuda-nvcc)")


def osu_replaying_the_h100(tmp_path: Path, dd: str) -> str:
    """An OSU_HOME whose osu_bw prints, on rank 0, the H100's recorded osu_bw -d cuda run of the
    buffers its last two arguments ask for (tests/data/real-outputs-local/SOURCES.md), D D
    replaced by ``dd``."""
    from recordings import read

    home = tmp_path / "osu-h100"
    (home / "bin").mkdir(parents=True)
    for mode in ("HH", "HD", "DD"):
        text = dd if mode == "DD" else read(f"osu_bw-7.4-cuda-{mode}-ompi4.1-h100.txt")
        (home / f"osu_bw-{mode}.txt").write_text(text)
    exe = home / "bin" / "osu_bw"
    exe.write_text('#!/bin/bash\nmode="${@: -2:1}${@: -1}"\n'
                   f'[ "${{OMPI_COMM_WORLD_RANK:-0}}" = 0 ] && cat "{home}/osu_bw-$mode.txt"\n'
                   "exit 0\n")
    exe.chmod(0o755)
    return str(home)


@pytest.mark.slow
@pytest.mark.mpi
def test_one_node_cases_through_reframe_without_a_gpu(tmp_path):
    """local made +gpu by a stand-in nvidia-smi, the programs built GPU=cuda against NVIDIA's
    wheels: OsuGpuAwareTest %span=node reads the H100's real osu_bw outputs and passes, and with
    the notes' symptom in its D D run (H H x 10.9/19.5) fails by the notes' rule; our
    GpuExchangeTest runs its real programs and fails closed, naming the missing GPU."""
    from recordings import read

    if has_cuda():
        pytest.skip("this host has a GPU: the stand-ins would hide it")
    hh = read("osu_bw-7.4-cuda-HH-ompi4.1-h100.txt")
    slow = re.sub(r"^(\d+)(\s+)([\d.]+)$",
                  lambda m: f"{m[1]}{m[2]}{float(m[3]) * 10.9 / 19.5:.2f}", hh, flags=re.M)
    cuda = wheel_toolkit()
    results = {}
    for name, dd in (("healthy", read("osu_bw-7.4-cuda-DD-ompi4.1-h100.txt")), ("notes", slow)):
        (tmp_path / name).mkdir()
        env = {"PATH": stand_in_smi(tmp_path / name, "echo 'GPU 0: NVIDIA H100 80GB HBM3'")["PATH"],
               "CUDA_HOME": cuda, "OSU_HOME": osu_replaying_the_h100(tmp_path / name, dd)}
        cases = "OsuGpuAwareTest%benchmark=osu_bw%span=node"
        if name == "healthy":
            cases += "|GpuExchangeTest%program=bisection_bw"
        results[name] = run_reframe(["--system", "local", "-r", "-n", cases, "-S",
                                     "missing_reference=warn"], tmp_path / name / "r",
                                    timeout=600, env=env)
    healthy, notes = results["healthy"], results["notes"]
    osu = healthy.case("OsuGpuAwareTest %benchmark=osu_bw %span=node")
    assert osu["result"] == "pass", (osu["fail_reason"], healthy.output[-3000:])
    assert osu["num_tasks"] == 2 and osu["num_tasks_per_node"] == 2
    figures = {k.split(":")[-1]: v[0] for k, v in osu["perfvalues"].items()}
    assert figures["bw_hh"] == 15257.69 and figures["bw_dd"] == 444095.76
    exchange = healthy.case("GpuExchangeTest %program=bisection_bw")
    assert exchange["result"] == "fail"
    assert re.search(r"bisection_bw: error: .*-d device needs a GPU", exchange["fail_reason"]), (
        exchange["fail_reason"])
    failed = notes.case("OsuGpuAwareTest %benchmark=osu_bw %span=node")
    assert failed["result"] == "fail"
    assert "device-to-device bandwidth is 0.56 of host-to-host, below 0.8" in (
        failed["fail_reason"])

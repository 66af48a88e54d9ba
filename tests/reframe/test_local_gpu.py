"""`local` is +gpu where nvidia-smi lists a GPU and a CUDA toolkit is there (fabrictest.gpus):
then its %buffer=cuda cases are listed; a GPU without a toolkit, or no GPU, lists none. Here a
stand-in nvidia-smi and NVIDIA's CUDA runtime wheel stand for them (the real H100 run:
README, "Checking the GPU paths")."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from _rfm import run_reframe

from fabrictest.gpus import cuda_gpus, cuda_toolkit, gpu_names, has_cuda

H100 = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-96119cef-1a67-70b2-5dc2-3712484fe97b)\n"


def stand_in_smi(tmp_path: Path, script: str) -> dict[str, str]:
    """An environment whose PATH starts with a stand-in nvidia-smi running ``script``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
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


def test_no_gpu_when_nvidia_smi_is_missing_fails_or_lists_none(tmp_path):
    assert cuda_gpus({"PATH": str(tmp_path)}) == []
    assert cuda_gpus(stand_in_smi(tmp_path, f"printf '{H100}'")) == ["NVIDIA H100 80GB HBM3"]
    failing = stand_in_smi(tmp_path, "echo 'NVIDIA-SMI has failed' >&2; exit 9")
    assert cuda_gpus(failing) == []
    assert cuda_gpus(stand_in_smi(tmp_path, "echo 'No devices were found'")) == []


def test_a_gpu_needs_a_toolkit_to_count(tmp_path):
    env = stand_in_smi(tmp_path, f"printf '{H100}'")
    assert not has_cuda({**env, "CUDA_HOME": str(tmp_path / "none")})
    home = fake_toolkit(tmp_path)
    assert cuda_toolkit({**env, "CUDA_HOME": home}) == Path(home)
    assert has_cuda({**env, "CUDA_HOME": home})


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

"""scripts/gpu-check.sh: one line and exit 2 where there is nothing to check; on a machine that
has CUDA's files but no GPU driver (a stand-in nvidia-smi here), every device run is a FAIL line
and the exit status is 1, never a pass. Its passing runs on an H100 are recorded in
tests/data/real-outputs-local/ (*-h100*.txt) and read by tests/parsers/test_gpu_recordings.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu-check.sh"


def run(*args, env=None, timeout=600):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def no_gpu_tools_path() -> str:
    """PATH without any nvidia-smi (this machine has none; a GPU host's is left out)."""
    keep = [d for d in os.environ["PATH"].split(os.pathsep)
            if not (Path(d) / "nvidia-smi").exists()]
    return os.pathsep.join(keep)


def test_usage_error_is_one_line_exit_2(tmp_path):
    p = run(tmp_path / "a", tmp_path / "b")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines() == ["ERROR: gpu-check: usage: scripts/gpu-check.sh [OUT_DIR]"]


@pytest.mark.parametrize("bad", ["0", "-5", "1.5", "abc", "100000"])
def test_a_senseless_timeout_is_refused_before_any_work(tmp_path, bad):
    p = run(tmp_path / "out", env={"GPU_CHECK_TIMEOUT": bad})
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines() == [
        "ERROR: gpu-check: GPU_CHECK_TIMEOUT must be a whole number of seconds from 1 to 99999,"
        f" not '{bad}'"]
    assert not (tmp_path / "out").exists()


def test_no_driver_is_one_line_exit_2(tmp_path):
    p = run(tmp_path / "out", env={"PATH": no_gpu_tools_path()})
    assert p.returncode == 2 and p.stdout == ""
    (line,) = p.stderr.splitlines()
    assert line.startswith("ERROR: gpu-check: no nvidia-smi on PATH: no NVIDIA driver on ")
    assert not (tmp_path / "out").exists()  # refused before any work


def fake_nvidia_smi(tmp_path: Path, listing: str) -> str:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(parents=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf '%s' '{listing}'\n")
    smi.chmod(0o755)
    return os.pathsep.join([str(bin_dir), no_gpu_tools_path()])


def test_no_gpu_listed_and_no_cuda_toolkit_are_refused(tmp_path):
    p = run(tmp_path / "out", env={"PATH": fake_nvidia_smi(tmp_path, "")})
    assert p.returncode == 2
    assert p.stderr.strip() == "ERROR: gpu-check: nvidia-smi lists no GPU on " + os.uname().nodename
    p = run(tmp_path / "out", env={"PATH": fake_nvidia_smi(tmp_path / "x", "GPU 0: Stand-in"),
                                   "CUDA_HOME": str(tmp_path / "nocuda")})
    assert p.returncode == 2
    assert f"no CUDA toolkit at CUDA_HOME={tmp_path / 'nocuda'}" in p.stderr


@pytest.mark.mpi
def test_without_a_driver_every_device_run_fails(tmp_path, cuda_home):
    """CUDA's headers and runtime (NVIDIA's wheels) but no libcuda: the build passes, each device
    run fails with the programs' own one-line reason, and the script exits 1."""
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this machine has an NVIDIA driver: the script would run for real")
    out = tmp_path / "out"
    p = run(out, env={"PATH": fake_nvidia_smi(tmp_path, "GPU 0: Stand-in (UUID: GPU-0)"),
                      "CUDA_HOME": cuda_home, "PYTHON": "/nonexistent/python3"})
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert f"PASS make -C src/c GPU=cuda CUDA_HOME={cuda_home}" in lines
    fails = [line for line in lines if line.startswith("FAIL ")]
    names = [line.split(":")[0] for line in fails]
    assert names[:3] == ["FAIL alltomany-device", "FAIL alltomany-device-corrupt",
                         "FAIL bisection-device"], fails
    assert all("exit status 3, expected" in line and "-d device needs a GPU" in line
               for line in fails[:3]), fails
    assert "-d device needs a GPU" in (out / "alltomany-device.err").read_text()
    assert "PASS bisection_bw -d host (the same build)" in lines
    assert not [line for line in lines if line.startswith("PASS alltomany -d device")]
    assert any(line.startswith("SKIP txrx --buffer cuda: /nonexistent/python3 cannot import")
               for line in lines)
    assert lines[-1] == f"gpu-check: some checks failed (outputs in {out})"

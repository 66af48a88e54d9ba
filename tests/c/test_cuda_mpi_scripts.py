"""scripts/build-cuda-mpi.sh and scripts/gpu-session.sh without a GPU (issue 33): the toolkit
probe (NVIDIA's CUDA 13 wheels here: --check names what it found and OSU's --enable-cuda=basic),
the link directory and the libcuda stub made for a node without a driver, a configure that
fails reported as one FAIL line with its log, and the session's plan with a stand-in
nvidia-smi. The refusals themselves are tests/hostile/cases_gpu.py's. A real configure of the
distribution's Open MPI runs with FABRICTEST_OPENMPI_SOURCE (docs/gpu.md: it passed here)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "scripts" / "build-cuda-mpi.sh"
SESSION = ROOT / "scripts" / "gpu-session.sh"


def run(script: Path, *args, env=None, timeout=120):
    return subprocess.run([str(script), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def wheel_cuda() -> Path:
    """NVIDIA's CUDA 13 wheels in this Python's environment (nvidia/cu13), or skip."""
    spec = importlib.util.find_spec("nvidia")
    for loc in list(spec.submodule_search_locations or []) if spec else []:
        home = Path(loc) / "cu13"
        if (home / "include" / "crt" / "host_defines.h").is_file():
            return home
    pytest.skip("no CUDA 13 wheels (pip install nvidia-cuda-runtime nvidia-cuda-nvcc "
                "nvidia-cuda-crt)")


def no_driver() -> None:
    if subprocess.run(["sh", "-c", "ldconfig -p | grep -q 'libcuda\\.so'"]).returncode == 0:
        pytest.skip("this host has the NVIDIA driver's libcuda: no stub is made")


def fake_source(tmp_path: Path, exit_status: int = 0) -> Path:
    """An "Open MPI source": a configure that records its arguments and writes what a CUDA
    configure writes into opal_config.h (or fails)."""
    src = tmp_path / "openmpi-fake"
    (src / "opal" / "include").mkdir(parents=True)
    configure = src / "configure"
    configure.write_text(
        "#!/bin/sh\n"
        'printf "%s\\n" "$@" > configure.args\n'
        'case " $* " in *" --with-cuda="*) cuda=1 ;; *) cuda=0 ;; esac\n'
        'echo "#define OPAL_CUDA_SUPPORT $cuda" > opal/include/opal_config.h\n'
        + (f'echo "configure: error: stand-in stops here" >&2; exit {exit_status}\n'
           if exit_status else ""))
    configure.chmod(0o755)
    return src


def test_check_finds_the_cuda_13_wheels_and_plans_osu_basic(tmp_path):
    cuda = wheel_cuda()
    p = run(BUILD, "--check", "--cuda", cuda, "--prefix", tmp_path / "p",
            "--source", fake_source(tmp_path), "--osu", tmp_path)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert re.search(rf"^build-cuda-mpi: CUDA 13\.\d+ at {re.escape(str(cuda))} ", out, re.M), out
    assert "--with-cuda=" + str(cuda) in out and "--without-ucx" in out
    assert "configure CC=mpicc CXX=mpicxx --enable-cuda=basic (CUDA 13." in out
    assert out.rstrip().endswith("--check: found everything needed; nothing built")
    assert not (tmp_path / "p").exists()  # nothing made


def test_the_wheels_are_found_through_python(tmp_path):
    wheel_cuda()
    python = Path(os.environ.get("VIRTUAL_ENV", "")) / "bin" / "python"
    if not python.is_file():
        pytest.skip("not run from the project's venv")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env["PATH"] = os.pathsep.join(d for d in env["PATH"].split(os.pathsep)
                                  if not (Path(d) / "nvcc").exists())
    if Path("/usr/local/cuda/include/cuda_runtime_api.h").is_file():
        pytest.skip("/usr/local/cuda is a toolkit: it comes first")
    p = subprocess.run([str(BUILD), "--check", "--python", str(python), "--source",
                        str(fake_source(tmp_path))], capture_output=True, text=True,
                       timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    assert "/nvidia/cu13 (libcudart in " in p.stdout


def test_configure_only_makes_the_link_directory_and_the_stub(tmp_path):
    cuda = wheel_cuda()
    no_driver()
    src = fake_source(tmp_path)
    prefix = tmp_path / "prefix"
    p = run(BUILD, "--configure-only", "--cuda", cuda, "--prefix", prefix, "--source", src)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS Open MPI configured with CUDA support (OPAL_CUDA_SUPPORT 1)" in p.stdout
    args = (src / "configure.args").read_text().splitlines()
    assert f"--with-cuda={cuda}" in args and f"--prefix={prefix}" in args
    assert f"LDFLAGS=-L{prefix}/cuda-link -L{cuda}/lib" in args
    link = prefix / "cuda-link"
    assert (link / "libcudart.so").resolve().name.startswith("libcudart.so.")
    stub = link / "libcuda.so"
    dyn = subprocess.run(["readelf", "-d", "--dyn-syms", str(stub)], capture_output=True,
                         text=True, timeout=30).stdout
    assert "Library soname: [libcuda.so.1]" in dyn  # the driver's name, loaded at run time
    for symbol in ("cuPointerGetAttribute", "cuMemAlloc_v2", "cuCtxGetCurrent"):
        assert re.search(rf"\b{symbol}\b", dyn), symbol


def test_a_failing_configure_is_one_fail_line_with_its_log(tmp_path):
    cuda = wheel_cuda()
    p = run(BUILD, "--configure-only", "--cuda", cuda, "--prefix", tmp_path / "prefix",
            "--source", fake_source(tmp_path, exit_status=1))
    assert p.returncode == 1
    fails = [line for line in p.stdout.splitlines() if line.startswith("FAIL ")]
    assert fails == ["FAIL build-cuda-mpi: configure-openmpi (exit 1): configure: error: "
                     "stand-in stops here "], p.stdout
    assert f"the whole log: {tmp_path}/prefix/build/logs/configure-openmpi.log" in p.stdout


def test_real_open_mpi_configure(tmp_path):
    """The distribution's Open MPI configured --with-cuda against the wheels (minutes):
    FABRICTEST_OPENMPI_SOURCE names its source (`apt-get source --download-only openmpi`)."""
    source = os.environ.get("FABRICTEST_OPENMPI_SOURCE")
    if not source:
        pytest.skip("FABRICTEST_OPENMPI_SOURCE is unset: the distribution's Open MPI source "
                    "(a .dsc, a tarball or a tree) to configure")
    cuda = wheel_cuda()
    p = run(BUILD, "--configure-only", "--cuda", cuda, "--prefix", tmp_path / "p",
            "--source", source, timeout=1800)
    assert p.returncode == 0, p.stdout + p.stderr
    log = (tmp_path / "p" / "build" / "logs" / "configure-openmpi.log").read_text()
    assert "checking if have cuda support... yes" in log


# -- the session script -----------------------------------------------------------------------

def stand_in_smi(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)'\n")
    smi.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def test_session_dry_run_says_its_plan_and_runs_nothing(tmp_path):
    cuda = wheel_cuda()
    out = tmp_path / "session"
    p = run(SESSION, "--dry-run", "--mpi-source", fake_source(tmp_path), "--osu", tmp_path,
            "--wheelhouse", tmp_path, "--out", out,
            env={"PATH": stand_in_smi(tmp_path), "CUDA_HOME": str(cuda)})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("gpu-session: node ") and "NVIDIA H100 80GB HBM3" in lines[0]
    assert any(f"MPI: build: scripts/build-cuda-mpi.sh --prefix {out}/cuda-mpi" in x
               for x in lines)
    assert any(f"--no-index --find-links {tmp_path}" in x for x in lines)
    assert any("-n OsuGpuAwareTest -n TxRxTest -n GpuExchangeTest -n NcclTest" in x
               for x in lines)
    assert lines[-1] == "gpu-session: --dry-run: nothing run"
    assert not out.exists()


def test_session_refuses_an_mpi_without_cuda_support(tmp_path):
    """This machine's Open MPI (Debian's) is not CUDA-aware: refused in one line."""
    cuda = wheel_cuda()
    if shutil.which("ompi_info") is None:
        pytest.skip("no ompi_info on PATH")
    p = run(SESSION, env={"PATH": stand_in_smi(tmp_path), "CUDA_HOME": str(cuda)})
    if p.returncode == 0 or "PASS" in p.stdout:
        pytest.skip("this Open MPI is CUDA-aware")
    assert p.returncode == 2 and p.stdout == ""
    assert re.fullmatch(r"ERROR: gpu-session: the Open MPI on PATH \(\S+\) is not CUDA-aware; "
                        r"give --mpi-source SRC to build one \(docs/gpu\.md\)\n", p.stderr)

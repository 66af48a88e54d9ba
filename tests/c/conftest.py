"""Fixtures for the C MPI programs in src/c: builds (host, CUDA) into temporary directories."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC_C = ROOT / "src" / "c"
PROGRAMS = ("alltomany", "bisection_bw", "congestion")


def make(
    outdir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`make -C src/c O=outdir ARGS...`, output captured."""
    outdir.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        ["make", "-C", str(SRC_C), f"O={outdir}", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def _require_toolchain() -> None:
    if shutil.which("make") is None:
        pytest.skip("make not on PATH: run scripts/install.sh")
    if shutil.which("mpicc") is None:
        pytest.skip("mpicc not on PATH: run scripts/install.sh and activate .venv")


@pytest.fixture(scope="session")
def c_build(tmp_path_factory) -> Path:
    """Directory holding host-buffer builds of alltomany and bisection_bw."""
    _require_toolchain()
    out = tmp_path_factory.mktemp("c-host")
    proc = make(out)
    if proc.returncode != 0:
        pytest.fail(f"make -C src/c failed:\n{proc.stdout}\n{proc.stderr}")
    for name in PROGRAMS:
        assert (out / name).is_file(), f"make did not produce {name}"
    out.joinpath("make.log").write_text(proc.stdout + proc.stderr)
    return out


def cuda_make_args() -> tuple[list[str], str] | None:
    """make arguments for GPU=cuda with a CUDA found on this machine, and where it was found.

    Looks at CUDA_HOME / CUDA_PATH, then NVIDIA's PyPI wheels in this Python's environment
    (`nvidia-cuda-runtime` + `nvidia-cuda-nvcc`: nvidia/cu13/{include,lib,bin};
    the older `-cu12` wheels: nvidia/cuda_runtime/{include,lib}), then /usr/local/cuda.
    """
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    spec = importlib.util.find_spec("nvidia")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        homes += [str(Path(loc) / "cu13"), str(Path(loc) / "cu12")]
    homes.append("/usr/local/cuda")
    for home in filter(None, homes):
        h = Path(home)
        if not (h / "include" / "cuda_runtime_api.h").is_file():
            continue
        for lib in ("lib64", "lib", "targets/x86_64-linux/lib"):
            if (h / lib / "libcudart_static.a").is_file():
                return [f"CUDA_HOME={h}"], str(h)
    for loc in locations:  # split layout of the -cu12 wheels
        rt = Path(loc) / "cuda_runtime"
        if (rt / "include" / "cuda_runtime_api.h").is_file() and (
            rt / "lib" / "libcudart_static.a"
        ).is_file():
            return [
                f"GPU_CPPFLAGS=-I{rt / 'include'}",
                f"GPU_LDLIBS=-L{rt / 'lib'} -lcudart_static -ldl -lpthread -lrt",
            ], str(rt)
    return None


@pytest.fixture(scope="session")
def cuda_build(tmp_path_factory) -> Path:
    """Directory holding GPU=cuda builds, or skip when no CUDA runtime is found."""
    _require_toolchain()
    found = cuda_make_args()
    if found is None:
        pytest.skip(
            "no CUDA runtime headers + libcudart_static.a found (CUDA_HOME, /usr/local/cuda, or "
            "pip install nvidia-cuda-runtime nvidia-cuda-nvcc)"
        )
    args, _where = found
    out = tmp_path_factory.mktemp("c-cuda")
    proc = make(out, "GPU=cuda", *args)
    if proc.returncode != 0:
        pytest.fail(f"make GPU=cuda failed:\n{proc.stdout}\n{proc.stderr}")
    out.joinpath("make.log").write_text(proc.stdout + proc.stderr)
    return out


@pytest.fixture(scope="session")
def cuda_home() -> str:
    """A CUDA_HOME with the runtime's headers and libcudart_static.a, or skip."""
    _require_toolchain()
    found = cuda_make_args()
    if found is None or not found[0][0].startswith("CUDA_HOME="):
        pytest.skip("no CUDA_HOME layout found (CUDA_HOME, /usr/local/cuda, or pip install "
                    "nvidia-cuda-runtime nvidia-cuda-nvcc)")
    return found[1]


@pytest.fixture(scope="session")
def c_make():
    """The `make(outdir, *args, env=None)` helper, for tests that build variants themselves."""
    _require_toolchain()
    return make

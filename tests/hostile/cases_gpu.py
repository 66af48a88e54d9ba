"""The GPU side's hostile cases (issues 32 and 33): scripts/build-cuda-mpi.sh and
scripts/gpu-session.sh fed bad arguments and nodes that lack a driver, a GPU, a toolkit (or
CUDA 13's crt headers, its driver API header, its runtime library), an Open MPI source or a
CUDA-aware MPI: each refused before any work with one line naming what is missing; and the
NCCL parser fed nccl-tests' old layout and figures that nccl-tests could not have printed.

The stand-ins are written here when the table is loaded (:data:`D`): toolkits made of the
headers' version lines, an ``nvidia-smi`` that lists what a case needs.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from recordings import read
from table import cmd, py

ROOT = Path(__file__).resolve().parents[2]
BUILD = str(ROOT / "scripts" / "build-cuda-mpi.sh")
SESSION = str(ROOT / "scripts" / "gpu-session.sh")
D = Path(tempfile.mkdtemp(prefix="hostile-gpu-"))
atexit.register(shutil.rmtree, D, True)
WHY_SETUP = "getting to a CUDA-aware MPI took an hour of guesswork (issue 33)"
WHY_NCCL = "the #wrong column must be 0 and busbw what nccl-tests computes (issue 32)"


def _toolkit(name: str, version: int, *, crt=True, driver_api=True, cudart=True) -> str:
    """A stand-in CUDA toolkit: the headers' version lines, and the files asked for."""
    home = D / name
    (home / "include" / "crt").mkdir(parents=True)
    (home / "lib64").mkdir()
    (home / "include" / "cuda_runtime_api.h").write_text(f"#define CUDART_VERSION {version}\n")
    if driver_api:
        (home / "include" / "cuda.h").write_text(f"#define CUDA_VERSION {version}\n")
    if crt:
        (home / "include" / "crt" / "host_defines.h").write_text("/* stand-in */\n")
    if cudart:
        (home / "lib64" / "libcudart.so.12").write_text("")
    return str(home)


def _smi(name: str, listing: str) -> str:
    """A PATH whose first directory holds an nvidia-smi printing ``listing``."""
    bin_dir = D / name
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf '%s' '{listing}'\n")
    smi.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


CUDA13_NO_CRT = _toolkit("cuda13-no-crt", 13000, crt=False)
CUDA12_NO_CUDA_H = _toolkit("cuda12-no-cuda-h", 12080, driver_api=False)
CUDA12_NO_CUDART = _toolkit("cuda12-no-cudart", 12080, cudart=False)
CUDA12 = _toolkit("cuda12", 12080)
(D / "not-a-source").mkdir()
H100 = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\n"
SMI_H100 = _smi("smi-h100", H100)
SMI_NONE = _smi("smi-none", "")
NO_SMI = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                         if p and not (Path(p) / "nvidia-smi").exists())

# ---------------------------------------------------------------- scripts/build-cuda-mpi.sh
for argv, line in [
    (["--frobnicate"], r"^ERROR: build-cuda-mpi: unknown argument '--frobnicate'"),
    (["--jobs", "0"], r"--jobs must be a whole number from 1 to 999, not '0'"),
    (["--jobs", "many"], r"--jobs must be a whole number from 1 to 999, not 'many'"),
    (["--prefix"], r"--prefix needs a value"),
    (["--mpi4py"], r"--mpi4py needs --python"),
    (["--check", "--cuda", str(D / "nowhere")], r"no CUDA toolkit at --cuda .*/nowhere "
                                                r"\(include/cuda_runtime_api\.h missing\)"),
    (["--check", "--cuda", CUDA13_NO_CRT], r"CUDA 13\.0 at .* lacks include/crt/host_defines\.h"
                                           r".*pip install nvidia-cuda-crt"),
    (["--check", "--cuda", CUDA12_NO_CUDA_H], r"CUDA 12\.8 at .* has no include/cuda\.h"),
    (["--check", "--cuda", CUDA12_NO_CUDART], r"CUDA 12\.8 at .* has no libcudart"),
    (["--check", "--cuda", CUDA12, "--source", str(D / "not-a-source")],
     r"--source .*/not-a-source holds no configure script"),
    (["--check", "--cuda", CUDA12, "--source", str(D / "gone.tar.xz")],
     r"no Open MPI source at --source .*/gone\.tar\.xz"),
]:
    cmd(f"build-cuda-mpi.sh {' '.join(a.replace(str(D), '') for a in argv)}", [BUILD, *argv], 2,
        line, why=WHY_SETUP)
cmd("build-cuda-mpi.sh with a senseless step timeout", [BUILD, "--check"], 2,
    r"BUILD_CUDA_MPI_TIMEOUT must be a whole number of seconds", why=WHY_SETUP,
    env={"BUILD_CUDA_MPI_TIMEOUT": "forever"})

# ---------------------------------------------------------------- scripts/gpu-session.sh
for name, argv, env, line in [
    ("an unknown argument", ["--frobnicate"], {},
     r"^ERROR: gpu-session: unknown argument '--frobnicate'"),
    ("two MPIs", ["--mpi-prefix", str(D), "--mpi-source", str(D)], {},
     r"give --mpi-prefix or --mpi-source, not both"),
    ("OSU without the MPI it builds", ["--osu", str(D)], {},
     r"--osu builds OSU with the MPI --mpi-source builds"),
    ("a wheelhouse that is not there", ["--wheelhouse", str(D / "no-wheels")], {},
     r"no such file or directory: .*/no-wheels"),
    ("a zero step timeout", [], {"GPU_SESSION_STEP_TIMEOUT": "0"},
     r"must be whole numbers of seconds"),
    ("no driver", [], {"PATH": NO_SMI},
     r"^ERROR: gpu-session: no nvidia-smi on PATH: no NVIDIA driver on "),
    ("a driver listing no GPU", [], {"PATH": SMI_NONE}, r"nvidia-smi lists no GPU on "),
    ("no CUDA toolkit", [], {"PATH": SMI_H100, "CUDA_HOME": str(D / "nowhere")},
     r"no CUDA toolkit at CUDA_HOME=.*/nowhere"),
    ("an MPI that is not CUDA-aware", [], {"PATH": SMI_H100, "CUDA_HOME": CUDA12},
     r"no CUDA-aware MPI: no ompi_info on PATH|the Open MPI on PATH .* is not CUDA-aware"),
    ("an MPI prefix without Open MPI", ["--mpi-prefix", str(D)],
     {"PATH": SMI_H100, "CUDA_HOME": CUDA12}, r"--mpi-prefix .* holds no bin/ompi_info"),
]:
    cmd(f"gpu-session.sh: {name}", [SESSION, *argv], 2, line, why=WHY_SETUP, env=env)


# ---------------------------------------------------------------- the NCCL parser
def nccl_old_layout(_d: Path) -> str:
    from fabrictest.parsers import ParseError
    from fabrictest.parsers.nccl import parse_nccl

    try:
        parse_nccl(read("nccl-alltoall_perf-64ranks-old-layout-error-column.txt"))
    except ParseError as err:
        return str(err)
    return "read"


def nccl_variant(_d: Path, change: str) -> str:
    """The first problem ``missing`` finds in the H100 all_reduce run, changed: ``scaled`` (the
    8 GiB row's bandwidths x 1.5), ``wrong`` (3 wrong elements), ``mb`` (the units MB/s)."""
    from fabrictest.parsers.nccl import missing, parse_nccl

    text = read("nccl-all_reduce_perf-2nodes-16xh100-a3mega.txt")
    row = "47535  180.71  338.82      0"
    text = {"scaled": lambda t: t.replace(row, "47535  271.07  508.23      0"),
            "wrong": lambda t: t.replace(row, "47535  180.71  338.82      3"),
            "mb": lambda t: t.replace("(GB/s)  (GB/s)", "(MB/s)  (MB/s)", 1)}[change](text)
    problems = missing(parse_nccl(text), "all_reduce_perf", 8, 8 << 30, ranks=16)
    return problems[0] if problems else "whole"


py("nccl parser: the layout before #wrong", "fn:cases_gpu:nccl_old_layout",
   r"^nccl-tests output of the old layout", why=WHY_NCCL)
py("nccl parser: bandwidths scaled by 1.5", "fn:cases_gpu:nccl_variant:scaled",
   r"algbw 271\.07 GB/s is not size/time", why=WHY_NCCL)
py("nccl parser: wrong elements", "fn:cases_gpu:nccl_variant:wrong",
   r"#wrong 3: elements failed the check", why=WHY_NCCL)
py("nccl parser: units changed", "fn:cases_gpu:nccl_variant:mb", r"units .*\(MB/s\)",
   why=WHY_NCCL)

"""The NVIDIA GPUs this host has, as ``nvidia-smi -L`` lists them, and the CUDA toolkit the
C programs' ``GPU=cuda`` build needs: together they give the ``local`` system its ``gpu``
feature (the ``%buffer=cuda`` tests) on a GPU workstation or node.

No driver, no ``nvidia-smi``, a failing or hanging one (20 s): no GPU, so a host without one
lists exactly what it listed before; a GPU without a toolkit neither (the build would fail every
test of the partition).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

#: the most ranks that share a host can move between them, in Gb/s: no memory copies faster than
#: a GPU's HBM3e (4.8 TB/s on an H200 = 38 400 Gb/s), rounded up. The "line rate" of a host's
#: shared memory: the `local` system's ``extras.line_rate_gbps``, and any stream within a node
SHARED_MEMORY_GBPS = 40_000

#: ``GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-96119cef-...)``
_GPU_LINE = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?$")
TIMEOUT_S = 20


def gpu_names(listing: str) -> list[str]:
    """The GPU names in ``nvidia-smi -L`` output (MIG lines and anything else skipped)."""
    return [m.group(2) for line in listing.splitlines()
            if (m := _GPU_LINE.match(line.strip())) is not None]


def cuda_gpus(env: Mapping[str, str] | None = None) -> list[str]:
    """The names of this host's NVIDIA GPUs, or [] when ``nvidia-smi -L`` (on ``PATH``) is
    missing, fails or hangs."""
    env = os.environ if env is None else env
    smi = shutil.which("nvidia-smi", path=env.get("PATH", os.defpath))
    if smi is None:
        return []
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=TIMEOUT_S,
                             env=dict(env))
    except (OSError, subprocess.TimeoutExpired):
        return []
    return gpu_names(out.stdout) if out.returncode == 0 else []


def cuda_toolkit(env: Mapping[str, str] | None = None) -> Path | None:
    """The CUDA toolkit ``make -C src/c GPU=cuda`` uses (``CUDA_HOME``, ``CUDA_PATH``, else
    ``/usr/local/cuda``), or None when it holds no ``include/cuda_runtime_api.h``."""
    env = os.environ if env is None else env
    home = Path(env.get("CUDA_HOME") or env.get("CUDA_PATH") or "/usr/local/cuda")
    return home if (home / "include" / "cuda_runtime_api.h").is_file() else None


def has_cuda(env: Mapping[str, str] | None = None) -> bool:
    """A GPU listed by ``nvidia-smi`` and a CUDA toolkit to build for it."""
    return cuda_toolkit(env) is not None and bool(cuda_gpus(env))

"""The NVIDIA GPUs this host has, as ``nvidia-smi -L`` lists them, and the CUDA toolkit the
C programs' ``GPU=cuda`` build needs: together they give the ``local`` system its ``gpu``
feature (the ``%buffer=cuda`` tests) on a GPU workstation or node.

No driver, no ``nvidia-smi``, a failing or hanging one (20 s): no GPU, so a host without one
lists exactly what it listed before; a GPU without a toolkit neither (the build would fail every
test of the partition). :func:`cuda_host` says which of these it was, in words, so that
``reframe -l -vv`` can say why the ``+gpu`` cases are not listed here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
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


def _listing(env: Mapping[str, str]) -> tuple[list[str], str | None]:
    """(GPU names, why there are none) from ``nvidia-smi -L``."""
    smi = shutil.which("nvidia-smi", path=env.get("PATH", os.defpath))
    if smi is None:
        return [], "no nvidia-smi on PATH (no NVIDIA driver)"
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=TIMEOUT_S,
                             env=dict(env))
    except subprocess.TimeoutExpired:
        return [], f"nvidia-smi -L did not answer in {TIMEOUT_S} s"
    except OSError as err:
        return [], f"nvidia-smi -L could not run: {err.strerror or err}"
    if out.returncode != 0:
        said = (out.stderr or out.stdout).strip().splitlines()
        return [], (f"nvidia-smi -L failed (exit status {out.returncode})"
                    + (f": {said[0]}" if said else ""))
    names = gpu_names(out.stdout)
    return names, None if names else "nvidia-smi -L lists no GPU"


def cuda_gpus(env: Mapping[str, str] | None = None) -> list[str]:
    """The names of this host's NVIDIA GPUs, or [] when ``nvidia-smi -L`` (on ``PATH``) is
    missing, fails or hangs."""
    return _listing(os.environ if env is None else env)[0]


def _toolkit_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("CUDA_HOME") or env.get("CUDA_PATH") or "/usr/local/cuda")


def cuda_toolkit(env: Mapping[str, str] | None = None) -> Path | None:
    """The CUDA toolkit ``make -C src/c GPU=cuda`` uses (``CUDA_HOME``, ``CUDA_PATH``, else
    ``/usr/local/cuda``), or None when it holds no ``include/cuda_runtime_api.h``."""
    home = _toolkit_home(os.environ if env is None else env)
    return home if (home / "include" / "cuda_runtime_api.h").is_file() else None


@dataclass(frozen=True)
class CudaHost:
    """What this host has for the ``gpu`` feature: its GPUs, its toolkit, and, when it is not
    ``+gpu``, why (``no nvidia-smi on PATH (no NVIDIA driver)``)."""

    gpus: tuple[str, ...]
    toolkit: Path | None
    why_not: str | None

    @property
    def usable(self) -> bool:
        return self.why_not is None


def cuda_host(env: Mapping[str, str] | None = None) -> CudaHost:
    """This host's GPUs and CUDA toolkit, with the reason in words when it cannot run the
    ``+gpu`` cases (no driver, no GPU, no toolkit): one ``nvidia-smi -L``, at most 20 s."""
    env = os.environ if env is None else env
    gpus, why = _listing(env)
    toolkit = cuda_toolkit(env)
    if why is None and toolkit is None:
        why = (f"{len(gpus)} GPU(s) but no CUDA toolkit at CUDA_HOME={_toolkit_home(env)} "
               "(include/cuda_runtime_api.h missing)")
    return CudaHost(tuple(gpus), toolkit, why)


def has_cuda(env: Mapping[str, str] | None = None) -> bool:
    """A GPU listed by ``nvidia-smi`` and a CUDA toolkit to build for it."""
    return cuda_host(env).usable

"""Build `mpirun` command lines for the MPI found on PATH (Open MPI 4/5 or MPICH).

Used by the tests, the benchmarks and the sweep so that every launch on one host gets the
same flags: oversubscription (2-core machines run 3-4 ranks), no core binding (ranks that
share cores must not be pinned), and Open MPI's run-as-root switch when root.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence


class MpiNotFound(RuntimeError):
    """No usable `mpirun` on PATH."""


@functools.cache
def flavour(mpirun: str = "mpirun") -> str:
    """'openmpi', 'mpich' or 'unknown', from `mpirun --version`."""
    exe = shutil.which(mpirun)
    if exe is None:
        raise MpiNotFound(f"{mpirun} not found on PATH: install an MPI (docs/install.md)")
    try:
        out = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, timeout=30
        ).stdout.lower()
    except (OSError, subprocess.TimeoutExpired) as err:
        raise MpiNotFound(f"{exe} --version failed: {err}") from err
    if "open mpi" in out or "open-mpi" in out or "openrte" in out:
        return "openmpi"
    if "hydra" in out or "mpich" in out:
        return "mpich"
    return "unknown"


def environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a local launch: Open MPI refuses root unless told."""
    env = dict(os.environ if base is None else base)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def command(
    np: int,
    argv: Sequence[str],
    *,
    hosts: Sequence[str] | None = None,
    extra: Sequence[str] = (),
    mpirun: str = "mpirun",
) -> list[str]:
    """`mpirun -np N [host and placement flags] argv...` for the MPI on PATH."""
    kind = flavour(mpirun)
    cmd = [mpirun, "-np", str(np)]
    if kind == "openmpi":
        cmd += ["--oversubscribe", "--bind-to", "none"]
        if hosts:
            cmd += ["--host", ",".join(f"{h}:{np}" for h in hosts)]
    elif kind == "mpich":
        cmd += ["-bind-to", "none"]
        if hosts:
            cmd += ["-hosts", ",".join(hosts)]
    elif hosts:
        cmd += ["--host", ",".join(hosts)]
    return [*cmd, *extra, *argv]

"""Shared fixtures: the repository root and a helper to run MPI jobs with a hard timeout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fabrictest import mpirun as mpilaunch

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} (the users' documents and recorded outputs) is not beside the checkout")
    return SHARED


def _require_mpirun() -> None:
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH: run scripts/install.sh and activate .venv")


@pytest.fixture
def mpirun():
    """run_mpi(np, argv, timeout=60, **kw) -> CompletedProcess; never hangs past `timeout`."""
    _require_mpirun()

    def run_mpi(np: int, argv, timeout: float = 120, env=None, extra=(), check=False):
        cmd = mpilaunch.command(np, [str(a) for a in argv], extra=extra)
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=timeout,
                env=mpilaunch.environment(env),
                start_new_session=True,
            )
        except subprocess.TimeoutExpired as err:
            pytest.fail(f"{' '.join(cmd)} did not finish within {timeout}s:\n{err.stdout}\n{err.stderr}")
        if check and proc.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc

    return run_mpi


@pytest.fixture(scope="session")
def python_exe() -> str:
    return sys.executable


def env_path(name: str) -> Path | None:
    """A directory named by an environment variable (OSU_HOME, IMB_HOME, SPACK_ROOT), if set."""
    value = os.environ.get(name)
    return Path(value) if value else None

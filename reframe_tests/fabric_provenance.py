"""Where a run came from, recorded in every test case of the run report (ReFrame reports every
variable), for the acceptance page's provenance (``fabric-report acceptance``):

* ``suite_commit``: this checkout's commit (``git describe --always --dirty``: ``-dirty`` when
  it has local changes), or ``""`` outside a git checkout;
* ``mpi_version``: the first line of the MPI compiler wrapper's version (Open MPI's
  ``mpicc --showme:version``, MPICH's ``mpichversion``, else ``mpicc --version``) on the host
  ReFrame runs on, for the test's programming environment's ``cc``;
* ``reference_sha256``: the SHA-256 of the references file the test loaded;
* ``spack_lock_sha256``: on a ``+spack`` partition, the SHA-256 of the system's Spack
  environment lock (``config/spack/<system>/spack.lock``, written when the binaries fixture
  concretised and installed it), so that a later regression run can be held to the same build;
  ``""`` where the partition takes no binaries from Spack or the lock is not there.

Each is read once per ReFrame process (a few milliseconds), every command under a timeout.
They are records, not inputs: ``-S`` cannot set them (they are written after setup).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import reframe as rfm
from reframe.core.builtins import run_after, variable

REPO_ROOT = Path(__file__).resolve().parents[1]
#: seconds a version command may take
TIMEOUT = 10


def _first_line(argv: list[str], cwd: Path | None = None) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return ""
    if proc.returncode != 0:
        return ""
    lines = [x.strip() for x in proc.stdout.splitlines() if x.strip()]
    return lines[0][:200] if lines else ""


@functools.cache
def suite_commit() -> str:
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        return ""
    return _first_line(["git", "describe", "--always", "--dirty", "--abbrev=12"], REPO_ROOT)


@functools.cache
def mpi_version(cc: str) -> str:
    wrapper = shutil.which(cc or "mpicc")
    if wrapper is None:
        return ""
    for argv in ([wrapper, "--showme:version"], ["mpichversion"], [wrapper, "--version"]):
        if shutil.which(argv[0]) is None:
            continue
        line = _first_line(argv)
        if line:  # Open MPI prefixes the wrapper's path: "/usr/bin/mpicc: Open MPI 4.1.4 ..."
            return line.split(": ", 1)[1] if line.startswith(wrapper + ": ") else line
    return ""


@functools.cache
def file_sha256(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return ""


class Provenance(rfm.RegressionTestPlugin):
    """Records the suite's commit, the MPI's version, the references file's hash and the Spack
    lock's."""

    #: set after setup (a record, not an input): the checkout's commit
    suite_commit = variable(str, value="")
    #: set after setup: the MPI compiler wrapper's version on ReFrame's host
    mpi_version = variable(str, value="")
    #: set after setup: SHA-256 of the references file the test loaded
    reference_sha256 = variable(str, value="")
    #: set after setup: SHA-256 of the Spack environment's spack.lock (+spack partitions)
    spack_lock_sha256 = variable(str, value="")

    @run_after("setup")
    def _record_provenance(self):
        self.suite_commit = suite_commit()
        cc = getattr(self.current_environ, "cc", "") or "mpicc"
        self.mpi_version = mpi_version(cc) if os.path.basename(cc).startswith("mpi") else ""
        path = self.reference_path() if hasattr(self, "reference_path") else ""
        self.reference_sha256 = file_sha256(path) if path else ""
        self.spack_lock_sha256 = spack_lock_sha256(self)


def spack_lock_sha256(test) -> str:
    """The hash of the lock of the Spack environment ``test``'s binaries come from; "" where
    they do not come from Spack (no ``+spack``, or a check without the binaries fixture)."""
    binaries = getattr(test, "binaries", None)
    if binaries is None or "spack" not in test.current_partition.features:
        return ""
    return file_sha256(os.path.join(binaries.spack_env_dir, "spack.lock"))

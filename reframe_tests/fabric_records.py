"""Records kept honest while tests are set up: one run per stage directory, and a dry run that
writes no performance log. Called by the base and by the binaries fixture before their setup
(a listing sets nothing up, so it takes no lock); nothing here reads the command line.

* **One run per stage directory.** Two ``reframe -r`` (or ``--dry-run``) in one directory
  would remove and re-create each other's stage directories (the second died with "No such
  file ... rfm_build.sh", or judged the other's output). The first test set up takes a lock on
  the stage prefix for the life of the process (``flock`` on a file in the temporary directory
  named after it, released however the process ends); a run that finds it held stops before
  anything is set up, with one line.
* **A dry run writes no perflog.** It measures nothing: ReFrame would append rows of empty
  figures to the perflogs and, their header differing, move the real history aside to
  ``<Test>.log.h0``. The performance log's handlers drop every record of a dry run.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import tempfile
from pathlib import Path

import reframe.core.runtime as rt
from reframe.core.exceptions import ForceExitError
from reframe.core.logging import getperflogger

_held: dict[str, object] = {}  # stage prefix -> its open lock file, for the process's life


def lock_path(stage_prefix: str) -> Path:
    key = hashlib.sha1(str(Path(stage_prefix).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"fabrictest-stage-{key}.lock"


def hold_stage(stage_prefix: str) -> None:
    """Take the stage prefix's lock once per process; when another process holds it, stop the
    whole run with one line."""
    if stage_prefix in _held:
        return
    fp = open(lock_path(stage_prefix), "a+")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(fp, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fp.seek(0)
        holder = fp.read().strip() or "?"
        fp.close()
        raise ForceExitError(
            f"another ReFrame run (pid {holder}) is using the stage directory {stage_prefix}: "
            "wait for it, or give this run its own with --prefix DIR") from None
    fp.seek(0)
    fp.truncate()
    fp.write(f"{os.getpid()}\n")
    fp.flush()
    _held[stage_prefix] = fp


class _DropAll(logging.Filter):
    def filter(self, record) -> bool:  # noqa: A003 - logging's interface
        return False


def mute_perflogs(test) -> None:
    """Every handler of the performance log drops its records (a dry run: nothing measured)."""
    logger = getattr(getperflogger(test), "logger", None)
    for handler in getattr(logger, "handlers", []):
        if not any(isinstance(f, _DropAll) for f in handler.filters):
            handler.addFilter(_DropAll())


def before_setup(test) -> None:
    hold_stage(rt.runtime().stage_prefix)
    if test.is_dry_run():
        mute_perflogs(test)

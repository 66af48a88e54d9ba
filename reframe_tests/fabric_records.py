"""Records kept honest while tests are set up: one run per stage directory, and a dry run that
writes no performance log. Called by the base and by the binaries fixture before their setup
(a listing sets nothing up, so it takes no lock); nothing here reads the command line.

* **One run per stage directory.** Two ``reframe -r`` (or ``--dry-run``) in one directory
  would remove and re-create each other's stage directories (the second died with "No such
  file ... rfm_build.sh", or judged the other's output). The first test set up takes a lock on
  the stage prefix for the life of the process (``flock`` on ``.fabrictest-run.lock`` inside
  the stage prefix itself, released however the process ends); a run that finds it held stops
  before anything is set up, with one line. The lock is where the directory is, so nothing in
  the environment moves it (it lived in the temporary directory: a run with another
  ``TMPDIR`` took its own lock and wiped the first run's stage directories).
* **Records that can be written.** ReFrame stores the session in the results database after
  every test has run and only warns when it cannot; a perflog it cannot write loses the
  figures: the run still ended ``PASSED``, exit 0. Before the first test is set up, the
  results database and each performance log directory are checked (``fabric_record_paths``); one
  that cannot be written stops the run with one line naming it, before anything is measured.
* **A dry run writes no perflog.** It measures nothing: ReFrame would append rows of empty
  figures to the perflogs and, their header differing, move the real history aside to
  ``<Test>.log.h0``. The performance log's handlers drop every record of a dry run.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

import reframe.core.runtime as rt
from fabric_record_paths import record_problems
from reframe.core.exceptions import ForceExitError
from reframe.core.logging import getperflogger

_held: dict[str, object] = {}  # stage prefix -> its open lock file, for the process's life
_records_checked: list[bool] = []  # once per process


LOCK_NAME = ".fabrictest-run.lock"


def lock_path(stage_prefix: str) -> Path:
    """The stage prefix's lock file: inside the (resolved) directory, whatever the environment."""
    return Path(stage_prefix).resolve() / LOCK_NAME


def hold_stage(stage_prefix: str) -> None:
    """Take the stage prefix's lock once per process; when another process holds it, stop the
    whole run with one line."""
    if stage_prefix in _held:
        return
    path = lock_path(stage_prefix)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # ReFrame makes it at setup, after this
        # never through a symbolic link: the file is this suite's own
        fp = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644), "r+")
    except OSError as err:
        raise ForceExitError(f"cannot lock the stage directory {stage_prefix} ({path}: "
                             f"{err.strerror or err}): give this run another with --prefix DIR"
                             ) from None
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


def record_paths_of_run() -> tuple[Path | None, list[Path]]:
    """The results database (None: storage off) and the filelog perflog directories, as
    ReFrame's configuration (and --perflogdir) give them."""
    opt = rt.runtime().get_option
    db = None
    if opt("storage/0/enable"):
        db = Path(os.path.expandvars(opt("storage/0/sqlite_db_file"))).absolute()
    dirs = []
    prefix = opt("systems/0/prefix") or "."
    for i, handler in enumerate(opt("logging/0/handlers_perflog") or []):
        if handler.get("type") == "filelog":
            basedir = os.path.expandvars(opt(f"logging/0/handlers_perflog/{i}/basedir"))
            dirs.append(Path(os.path.abspath(os.path.join(prefix, basedir))))
    return db, dirs


def check_records() -> None:
    """Once per process: a record this run could not write stops it, with one line."""
    if _records_checked:
        return
    _records_checked.append(True)
    problems = record_problems(*record_paths_of_run())
    if problems:
        raise ForceExitError(f"this run's records could not be written: {'; '.join(problems)}"
                             " (nothing was measured)")


def before_setup(test) -> None:
    hold_stage(rt.runtime().stage_prefix)
    if test.is_dry_run():
        mute_perflogs(test)  # nothing recorded, nothing to check
    else:
        check_records()

"""One run per stage directory: two ``reframe -r`` (or ``--dry-run``) in one directory would
remove and re-create each other's stage directories (the second dies with "No such file ...
rfm_build.sh" or, worse, judges the other's output). The first run holds a lock on its stage
prefix for as long as it lives; a second is refused with one line, before any test is set up.

The lock is ``flock`` on a file in the temporary directory named after the stage prefix (it
goes with the process, however it ends); listing (``-l``) and queries take none.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
import tempfile
from pathlib import Path

_held: dict[str, object] = {}  # stage prefix -> its open lock file, for the process's life


def runs_tests(argv: list[str]) -> bool:
    """Whether this ReFrame call runs or dry-runs tests (argparse takes a long option's prefix,
    "--dry" for --dry-run)."""
    return any(a in ("-r", "--run") or (len(a) >= 5 and "--dry-run".startswith(a))
               for a in argv[1:])


def lock_path(stage_prefix: str) -> Path:
    key = hashlib.sha1(str(Path(stage_prefix).resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"fabrictest-stage-{key}.lock"


def hold(stage_prefix: str, argv: list[str] | None = None) -> None:
    """Take the stage prefix's lock once per process when this call runs tests; another
    process holding it ends this one with one line on stderr and exit status 1."""
    argv = sys.argv if argv is None else argv
    if stage_prefix in _held or not runs_tests(argv):
        return
    path = lock_path(stage_prefix)
    fp = open(path, "a+")  # noqa: SIM115 - held open for the life of the process
    try:
        fcntl.flock(fp, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fp.seek(0)
        holder = fp.read().strip() or "?"
        fp.close()
        print(f"fabrictest: error: another ReFrame run (pid {holder}) is using the stage "
              f"directory {stage_prefix}: wait for it, or give this run its own with "
              "--prefix DIR", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    fp.seek(0)
    fp.truncate()
    fp.write(f"{os.getpid()}\n")
    fp.flush()
    _held[stage_prefix] = fp

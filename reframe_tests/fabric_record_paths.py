"""Whether a run's records can be written, asked before anything is measured (pure: paths in,
one line per problem out; ``fabric_records`` asks it for ReFrame's results database and
performance log directories).

ReFrame writes the results database after every test has run and only warns when it cannot
(`failed to store results in the database`); a perflog it cannot write loses the figures with
a logging traceback. Either way the run ended `PASSED`, exit 0, its records lost. Each problem
names the record and why: a path that is a directory (or another non-file), a file that is
not writable, a database that is not SQLite (corrupt), a directory that cannot be made or
written."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

SQLITE_MAGIC = b"SQLite format 3\x00"
#: seconds the database may stay locked by another run while we read its schema
READ_TIMEOUT_S = 5.0


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _dir_problem(what: str, directory: Path) -> str | None:
    """Why files cannot be made in ``directory`` (made if missing, as ReFrame would)."""
    if directory.exists():
        if not directory.is_dir():
            return f"{what} {directory} is not a directory"
        if not os.access(directory, os.W_OK | os.X_OK):
            return f"{what} {directory} is not writable"
        return None
    base = _nearest_existing(directory)
    if not base.is_dir():
        return f"{what} {directory} cannot be made: {base} is not a directory"
    if not os.access(base, os.W_OK | os.X_OK):
        return f"{what} {directory} cannot be made: {base} is not writable"
    return None


def database_problem(db: Path) -> str | None:
    """Why the results database ``db`` cannot take this run's session (None: it can)."""
    what = "the results database"
    if not db.exists() and not db.is_symlink():
        return _dir_problem(f"{what}'s directory", db.parent)
    if not db.is_file():
        return f"{what} {db} is not a file"
    if not os.access(db, os.R_OK | os.W_OK):
        return f"{what} {db} is not writable"
    problem = _dir_problem(f"{what}'s directory", db.parent)  # sqlite's journal beside it
    if problem:
        return problem
    with open(db, "rb") as fp:
        head = fp.read(len(SQLITE_MAGIC))
    if not head:
        return None  # an empty file is an empty database
    if head != SQLITE_MAGIC:
        return f"{what} {db} is not an SQLite database (corrupt, or another file)"
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=READ_TIMEOUT_S)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as err:
        return f"{what} {db} cannot be read: {err} (corrupt?)"
    return None


def perflog_problem(directory: Path) -> str | None:
    """Why performance logs cannot be written under ``directory`` (None: they can)."""
    return _dir_problem("the performance log directory", directory)


def record_problems(db: Path | None, perflog_dirs: list[Path]) -> list[str]:
    """Every record of the run that could not be written: the results database (None:
    storage off) and each performance log directory."""
    problems = [database_problem(db)] if db is not None else []
    problems += [perflog_problem(d) for d in perflog_dirs]
    return [p for p in problems if p]

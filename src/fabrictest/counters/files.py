"""The counter files on disk (no command is run): snapshot files and the directories a job
writes them into, and a system's thresholds file, found through the one reference-directory
lookup (:func:`fabrictest.references.reference_dir`).

Every reader of snapshots goes through here (``fabric-health counters --diff``, the ReFrame
plugin, ``fabric-report counters``), so each refuses the same things the same way: a file that
is not a regular file (a device, a pipe), not text, larger than any snapshot, or not a
snapshot; and a node with two snapshot files in one directory (either could hide what the
other shows).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fabrictest.parsers.errors import ParseError
from fabrictest.references.location import reference_dir

from .snapshot import Snapshot, parse_snapshot
from .thresholds import Thresholds

#: a snapshot of a node with every counter of 64 ports is under 1 MiB; past this, not one
MAX_SNAPSHOT_BYTES = 16 << 20
#: the thresholds' folder inside a reference directory
SUBDIR = "counters"


def _text(path: Path, what: str, limit: int) -> str:
    """A regular file's UTF-8 text; ParseError (one line, not naming the path) otherwise."""
    try:
        # non-blocking: a named pipe is refused at once instead of waiting for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ParseError(f"not a regular file (a {what} is one)")
            data = f.read(limit + 1)
    except OSError as err:
        raise ParseError(str(err.strerror or err)) from None
    if len(data) > limit:
        raise ParseError(f"larger than {limit >> 20} MiB: not a {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError(f"not text (UTF-8): not a {what}") from None


def read_text(path: Path, what: str = "file", limit: int = MAX_SNAPSHOT_BYTES) -> str:
    """A regular file's UTF-8 text; ParseError (one line, naming the path) for anything else:
    a device, a pipe or a directory, a binary file, a file over ``limit`` bytes."""
    try:
        return _text(path, what, limit)
    except ParseError as err:
        raise ParseError(f"{path}: {err}") from None


def _snapshot(path: Path) -> Snapshot:
    return parse_snapshot(_text(path, "counters snapshot", MAX_SNAPSHOT_BYTES))


def read_snapshot_file(path: Path) -> Snapshot:
    """One snapshot file; ParseError naming the file."""
    try:
        return _snapshot(path)
    except ParseError as err:
        raise ParseError(f"{path}: {err}") from None


def read_phase(directory: Path) -> tuple[dict[str, Snapshot], list[str]]:
    """node -> snapshot from a directory of ``*.json`` (one per node), and what could not be
    read: a file that is no snapshot, and a node with two files (neither is kept)."""
    snaps: dict[str, Snapshot] = {}
    files: dict[str, list[str]] = {}
    problems: list[str] = []
    try:
        paths = sorted(directory.glob("*.json"))
    except OSError as err:
        return {}, [f"{directory}: {err.strerror or err}"]
    for path in paths:
        try:
            snap = _snapshot(path)
        except ParseError as err:
            problems.append(f"{path.name}: {err}")
            continue
        files.setdefault(snap.node, []).append(path.name)
        snaps[snap.node] = snap
    for node, names in files.items():
        if len(names) > 1:
            del snaps[node]
            problems.append(f"{len(names)} snapshots of {node} ({', '.join(names)}): which "
                            "one is the node's cannot be told")
    return snaps, problems


def read_snapshots(path: Path) -> dict[str, Snapshot]:
    """node -> snapshot from one file or a directory of them; ParseError for the first thing
    that is wrong (a user named them: nothing is skipped)."""
    if not path.is_dir():
        snap = read_snapshot_file(path)
        return {snap.node: snap}
    snaps, problems = read_phase(path)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ParseError(f"{path}: {problems[0]}{more}")
    if not snaps:
        raise ParseError(f"{path}: no *.json snapshot in it")
    return snaps


def thresholds_path(ref_dir: Path, system: str) -> Path:
    return Path(ref_dir) / SUBDIR / f"{system}.yaml"


def load_thresholds(path: Path) -> tuple[Thresholds, str | None]:
    """The thresholds in ``path`` and the problem with the file (None when fine). No file: the
    defaults (every error counts), no problem."""
    if not path.exists():
        return Thresholds(), None
    import yaml

    try:
        text = read_text(path, "thresholds file", 1 << 20)
    except ParseError as err:
        return Thresholds(), str(err)
    try:
        return Thresholds.from_dict(yaml.safe_load(text)), None
    except (yaml.YAMLError, ValueError, RecursionError) as err:
        return Thresholds(), f"{path}: {' '.join(str(err).split())[:300]}"


def system_thresholds(system: str, option: str | os.PathLike | None = None
                      ) -> tuple[Thresholds, str | None, Path]:
    """The thresholds of ``system`` from the reference directory (``option``, else
    ``$RFM_REFERENCE_PREFIX``, else the repository's), the problem with its file, and its
    path."""
    path = thresholds_path(reference_dir(option), system)
    thresholds, problem = load_thresholds(path)
    return thresholds, problem, path

"""What `fabric-report` writes: checked before any work, written atomically, and never in
place of a symlink or a special file.

An output path (`--json`, `--html DIR`'s files, `-o`) that exists must be a regular file:
a symlink is not followed nor replaced (it may point at a file that is not ours), a device,
FIFO or socket is not replaced (as root, `--json /dev/full` used to replace the device with a
regular file). Each file is written to a temporary file beside it and renamed over it, so a
reader never sees half a file, after the same check once more.
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

from fabrictest.report.records.results import ResultsError

#: the files `html` and `history --html` write in their directory
OUTPUT_GLOBS = ("index.html", "*.png")


def _kind(mode: int) -> str | None:
    """Why a path of this mode must not be replaced, or None for a regular file."""
    if stat.S_ISLNK(mode):
        return "is a symlink"
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISREG(mode):
        return None
    what = ("a character device" if stat.S_ISCHR(mode) else "a block device"
            if stat.S_ISBLK(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "not a regular file")
    return f"is {what}"


def refuse_special(option: str, path: str | os.PathLike) -> None:
    """Refuse an existing output path that is not a regular file (never followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as err:
        raise ResultsError(f"{option} {path}: {err.strerror or err}") from err
    why = _kind(mode)
    if why == "is a directory":
        raise ResultsError(f"{option} {path}: is a directory")
    if why:
        raise ResultsError(f"{option} {path}: {why}: not replaced (give the path of a regular "
                           "file, or of none)")


def writable_file(option: str, path: str) -> None:
    """Refuse an output file that could not be written, or that must not be replaced
    (checked before any work)."""
    p = Path(path)
    refuse_special(option, p)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ResultsError(f"{option} {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ResultsError(f"{option} {path}: not writable")


def writable_dir(option: str, path: str) -> Path:
    """Create an output directory (or refuse it) before any work; refuse one whose report
    files (index.html, *.png) include a symlink or a special file."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ResultsError(f"{option} {path}: cannot create it ({err.strerror or err})") from err
    if not os.access(p, os.W_OK):
        raise ResultsError(f"{option} {path}: not writable")
    for pattern in OUTPUT_GLOBS:
        for f in sorted(p.glob(pattern)):
            refuse_special(option, f)
    probe = p / f".fabric-report-probe-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise ResultsError(f"{option} {path}: cannot write in it ({err.strerror or err})") \
            from err
    return p


def write_bytes(path: str | os.PathLike, data: bytes, option: str = "-o") -> None:
    """`data` to `path` atomically; never in place of a symlink or a special file."""
    path = Path(path)
    refuse_special(option, path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        refuse_special(option, path)
        os.replace(tmp, path)
    except OSError as err:
        raise ResultsError(f"{option} {path}: {err.strerror or err}") from err
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path: str | os.PathLike, text: str, option: str = "-o") -> None:
    write_bytes(path, text.encode("utf-8"), option)


def write_json(path: str, data: dict) -> None:
    """`--json PATH`, written atomically (a reader never sees half a file)."""
    write_text(path, json.dumps(data, indent=1) + "\n", "--json")


def save_figure(fig, path: str | os.PathLike, **kwargs) -> None:
    """A matplotlib figure as a PNG at `path` (atomically, as :func:`write_bytes`)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", **kwargs)
    write_bytes(path, buf.getvalue(), "-o")

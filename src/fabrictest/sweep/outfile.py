"""The sweep's output file (`--json`): written whole, and never in place of something that is
not a regular file.

As root, replacing the path blindly turns `--json /dev/full` into a regular file where the
device was, and `--json link` into a file where a symbolic link (perhaps to another user's
file) was. So a path that exists must be a regular file, not a link, both when the options are
checked and again just before the file is moved into place; the temporary file is created
exclusively, never through a link.
"""

from __future__ import annotations

import os
import stat


class OutputPathError(ValueError):
    """One line: why the sweep will not write there."""


def target_problem(path: str) -> str | None:
    """Why `path` must not be written (replaced) by the sweep, or None."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"cannot look at it ({err.strerror or err})"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link (fabric-sweep does not write through or replace one: " \
               "give the file's own path)"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory"
    if not stat.S_ISREG(st.st_mode):
        kind = ("a character device" if stat.S_ISCHR(st.st_mode) else
                "a block device" if stat.S_ISBLK(st.st_mode) else
                "a named pipe" if stat.S_ISFIFO(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        return f"is {kind}, not a regular file (fabric-sweep would replace it)"
    return None


def write_whole(path: str, write) -> None:
    """Call `write(fh)` on a new temporary file next to `path`, then move it into place: a
    reader never sees half a file. OutputPathError when `path` has become something that must
    not be replaced; OSError when the disk says no."""
    problem = target_problem(path)
    if problem:
        raise OutputPathError(problem)
    tmp = f"{path}.tmp{os.getpid()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            write(fh)
        problem = target_problem(path)  # again: it may have changed while we measured
        if problem:
            raise OutputPathError(problem)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)

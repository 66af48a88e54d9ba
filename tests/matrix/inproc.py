"""A command's ``main`` called in this process (as its console script calls it, without the
start-up cost): (exit status, stdout, stderr)."""

from __future__ import annotations

import contextlib
import io


def call(main, *argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as stop:  # argparse's usage errors
            rc = stop.code if isinstance(stop.code, int) else 2
    return rc, out.getvalue(), err.getvalue()

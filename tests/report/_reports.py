"""Run reports written here, in ReFrame's shape (`--report-file`), one session per file: the
figures a test needs, each with its unit (and reference, where given), an hour apart."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

START = dt.datetime(2026, 10, 1, tzinfo=dt.timezone.utc)


def testcase(uuid: str, when: float, figures: dict, test: str = "TxRxTest %scenario=paired",
             nodes=("node01", "node02"), result: str = "pass", **extra) -> dict:
    """A test case of session `uuid`; `figures`: {name: (value, unit) or (value, unit, ref,
    lower, upper)}."""
    pv = {}
    for name, fig in figures.items():
        value, unit, *band = fig
        ref, lower, upper = (list(band) + [None, None, None])[:3]
        pv[f"sys:default:{name}"] = [value, ref, lower, upper, unit, "pass"]
    return {"name": test.split(" ")[0], "display_name": test, "system": "sys",
            "partition": "default", "environ": "builtin", "session_uuid": uuid,
            "job_completion_time_unix": when, "job_nodelist": list(nodes), "result": result,
            "fail_phase": None, "perfvalues": pv, **extra}


def report(i: int, figures: dict, prefix: str = "0000", **kw) -> dict:
    uuid = f"{prefix[:4]:0<4}{i:04d}-0000-4000-8000-{i:012d}"
    when = (START + dt.timedelta(hours=i)).timestamp()
    return {"session_info": {"uuid": uuid, "time_start_unix": when, "hostname": "vm",
                             "time_start": (START + dt.timedelta(hours=i)).isoformat()},
            "runs": [{"testcases": [testcase(uuid, when, figures, **kw)]}]}


def write(out: Path, sessions: list[dict], name: str = "run", **kw) -> str:
    """One run report per entry of `sessions` ({figure: (value, unit[, ref, lower, upper])}),
    in order; returns the glob naming them."""
    out.mkdir(parents=True, exist_ok=True)
    for i, figures in enumerate(sessions):
        (out / f"{name}-{i:05d}.json").write_text(json.dumps(report(i, figures, **kw)))
    return str(out / f"{name}-*.json")


def fabric_report(*args) -> tuple[int, str, str]:
    """`fabric-report ARGS` in this process (as the command runs it, without its start-up
    cost): (exit status, stdout, stderr)."""
    import contextlib
    import io

    from fabrictest.report.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as stop:  # argparse's usage errors
            rc = stop.code if isinstance(stop.code, int) else 2
    return rc, out.getvalue(), err.getvalue()

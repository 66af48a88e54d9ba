"""The test cases of an acceptance run, sorted by the stage they belong to, and the files they
left behind (their output directory when they passed, their stage directory when they failed:
ReFrame copies ``keep_files`` and the job's output only for a passing test).

* stage 1: the health family (``NicHealthTest``, tagged ``preflight``);
* the node-pair sweep (``SweepTest``): stage 2, read from its ``sweep.json``;
* the build fixture (``FabricBinaries``) runs nothing on the nodes: in no stage;
* every other test case: stage 2 (its counter snapshots are stage 3's).
"""

from __future__ import annotations

from pathlib import Path

from fabrictest.counters.files import read_text
from fabrictest.parsers.errors import ParseError
from fabrictest.report.attribute.failures import case_name

#: the largest output of a test read whole (a health check prints a few KB per node)
MAX_OUTPUT = 64 << 20
STAGE1, SWEEP, BUILD, PERFORMANCE = "stage1", "sweep", "build", "performance"


def last_runs(testcases: list[dict]) -> list[dict]:
    """The last run of each test case (retries count once), in the order first seen."""
    last: dict[tuple, dict] = {}
    for tc in testcases:
        key = (tc.get("name"), tc.get("display_name"), tc.get("system"), tc.get("partition"),
               tc.get("environ"),
               tc.get("session_uuid"))
        last[key] = tc
    return list(last.values())


def role(tc: dict) -> str:
    name = str(tc.get("name") or tc.get("display_name") or "")
    head = name.split(" ")[0].split("%")[0]
    tags = tc.get("tags") if isinstance(tc.get("tags"), list) else []
    if head.startswith("FabricBinaries") or tc.get("fixture") is True:
        return BUILD
    if head == "NicHealthTest" or "preflight" in tags:
        return STAGE1
    if head == "SweepTest":
        return SWEEP
    return PERFORMANCE


def label(tc: dict) -> str:
    """The test case as a person reads it: its display name and where it ran (as
    ``attribute`` names it)."""
    return case_name(tc)


def case_file(tc: dict, name: str | None) -> Path | None:
    """The first of the test case's output and stage directories that holds ``name``."""
    if not name:
        return None
    for d in (tc.get("outputdir"), tc.get("stagedir")):
        if d and (Path(d) / name).is_file():
            return Path(d) / name
    return None


def read_output(tc: dict, name: str | None = None) -> tuple[str | None, str]:
    """(the text of the job's stdout, or of ``name``; "") or (None, why it cannot be read)."""
    name = name or tc.get("job_stdout") or "rfm_job.out"
    path = case_file(tc, name)
    if path is None:
        dirs = [d for d in (tc.get("outputdir"), tc.get("stagedir")) if d]
        return None, f"{label(tc)}: no {name} in {' or '.join(dirs) or 'its directories'}"
    try:
        return read_text(path, "test output", MAX_OUTPUT), ""
    except ParseError as err:
        return None, f"{label(tc)}: {err}"

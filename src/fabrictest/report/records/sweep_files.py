"""The node-pair sweep's JSON files a report reads: `--sweep FILE` (a `fabric-sweep --json`
file) and the `sweep.json` a ReFrame `SweepTest` leaves in its output directory (when it
passed) or its stage directory (when it failed)."""

from __future__ import annotations

import json
from pathlib import Path

from fabrictest.counters.files import read_text
from fabrictest.parsers.errors import ParseError
from fabrictest.report.records.results import ResultsError

#: a sweep of 100,000 nodes writes under 1 GiB; past this, not a sweep file
MAX_SWEEP_BYTES = 1 << 30


def sweeps_from(testcases: list[dict]) -> list[tuple[str, dict]]:
    """The sweep.json of every test case that ran a sweep: in its output directory (ReFrame
    copies it there for a passing test) or, for a failing one, its stage directory (kept)."""
    out, seen = [], set()
    for tc in testcases:
        for d in (tc.get("outputdir"), tc.get("stagedir")):
            path = Path(d) / "sweep.json" if d else None
            if path is None or not path.is_file():
                continue
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if not isinstance(data, dict) or any(k not in data for k in SWEEP_KEYS):
                continue
            key = (tc.get("display_name"), tc.get("system"), tc.get("partition"),
                   tc.get("job_completion_time_unix"))
            if key not in seen:
                seen.add(key)
                out.append((f"{tc.get('display_name')} on {tc.get('system')}:"
                            f"{tc.get('partition')} ({path})", data))
            break
    return out


SWEEP_KEYS = ("nodes", "pairs", "verdict", "level", "nodes_table", "unit", "rounds_used")


def read_sweep(path: str) -> dict:
    """`--sweep FILE`: a fabric-sweep JSON file (never a pipe or a device: refused without
    waiting); ResultsError (one line) for anything else."""
    try:
        data = json.loads(read_text(Path(path), "fabric-sweep JSON file", MAX_SWEEP_BYTES))
    except ParseError as err:
        raise ResultsError(f"--sweep {err}") from None
    except ValueError as err:
        raise ResultsError(f"--sweep {path}: not a fabric-sweep JSON file ({err})") from None
    missing = [k for k in SWEEP_KEYS if not isinstance(data, dict) or k not in data]
    if missing:
        raise ResultsError(f"--sweep {path}: not a fabric-sweep JSON file "
                           f"(no {', '.join(missing)})")
    return data

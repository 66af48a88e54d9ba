"""The jobs ReFrame would submit: ``reframe --dry-run`` in a subprocess, over the system's own
configuration with its topology (and node count) replaced by the plan's.

One path for the job list: the families make their cases (listing, placement, node sets from
``extras.topology``) and ReFrame writes their job scripts; nothing here repeats that logic. A
small configuration file in a temporary directory loads ``config/reframe/settings.py`` and,
for the chosen system only, sets every partition's ``extras.topology`` to the plan's topology
file, ``num_nodes`` to its node count (and ``nodes`` to its names where the partition lists
them), and drops the hand-written ``node_sets``/``node_set_sizes`` (they describe another
machine). It also writes the partitions' facts the plan needs (``max_jobs``) beside itself.
The dry run at 10,000 nodes takes about as long as at 64 (docs/plan.md has the figures).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

#: seconds the dry run may take (the slingshot system's 96 cases: 10-20 s on a loaded host)
DRY_RUN_TIMEOUT = 600.0

_CONFIG = '''\
import importlib.util, json, os
_spec = importlib.util.spec_from_file_location("fabrictest_plan_settings", {settings!r})
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
site_configuration = _mod.site_configuration
_override = json.loads({override!r})
_facts = []
for _system in site_configuration["systems"]:
    if _system["name"] != _override["system"]:
        continue
    for _part in _system["partitions"]:
        _extras = _part.setdefault("extras", {{}})
        if _override.get("topology"):
            _extras["topology"] = _override["topology"]
            _extras["num_nodes"] = len(_override["nodes"])
            if "nodes" in _extras:
                _extras["nodes"] = _override["nodes"]
            _extras.pop("node_sets", None)
            _extras.pop("node_set_sizes", None)
        _facts.append({{"name": _part["name"], "max_jobs": _part.get("max_jobs", 8),
                        "scheduler": _part.get("scheduler"),
                        "num_nodes": _extras.get("num_nodes", len(_extras.get("nodes", [])) or 1),
                        "topology": _extras.get("topology")}})
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "partitions.json"), "w") as _fh:
    json.dump(_facts, _fh)
'''
_SBATCH = re.compile(r"^#SBATCH\s+--([a-z-]+)(?:=(.*))?$")
_SWEEP_ROUNDS = re.compile(r"fabric-sweep\b.*\s--rounds[ =](\d+)")


class DryRunError(RuntimeError):
    """One line: why the dry run gave no job list."""


@dataclass
class Case:
    """One test case of the dry run: what its report and its job script say."""

    name: str  # the display name
    family: str  # the test class
    tags: list[str]
    partition: str
    time_limit_s: float | None
    num_tasks: int
    tasks_per_node: int | None
    sbatch: dict[str, str] = field(default_factory=dict)  # option -> value ('' when bare)
    counter_snapshots: int = 0  # `fabric-health counters` launches in the job script
    sweep_rounds: int | None = None  # `fabric-sweep ... --rounds N` in the job script
    local: bool = False  # runs where ReFrame runs, in no allocation (the test's `local`)
    unique_name: str = ""
    depends_on: list[str] = field(default_factory=list)  # the unique names it waits for


@dataclass
class DryRun:
    cases: list[Case]
    partitions: list[dict]
    seconds: float


def reframe_exe() -> str:
    cand = Path(sys.executable).with_name("reframe")
    found = str(cand) if cand.exists() else shutil.which("reframe")
    if not found:
        raise DryRunError("reframe is not installed (scripts/install.sh suite, then activate "
                          ".venv)")
    return found


def read_job_script(text: str) -> tuple[dict[str, str], int]:
    """The ``#SBATCH`` options of a job script, and how many counter snapshots it takes."""
    options = {}
    for line in text.splitlines():
        m = _SBATCH.match(line.strip())
        if m:
            options[m.group(1)] = (m.group(2) or "").strip().strip('"')
    snapshots = sum(1 for line in text.splitlines() if "fabric-health counters" in line
                    and not line.lstrip().startswith("#"))
    return options, snapshots


def sweep_rounds(text: str) -> int | None:
    """The screening rounds the job's ``fabric-sweep`` is told (``--rounds N``), if any."""
    m = _SWEEP_ROUNDS.search(text)
    return int(m.group(1)) if m else None


def _case(tc: dict) -> Case:
    script = Path(tc.get("stagedir") or "") / "rfm_job.sh"
    try:
        text = script.read_text(errors="replace")
    except OSError:
        text = ""
    options, snapshots = read_job_script(text)
    limit = tc.get("time_limit")
    return Case(name=tc["display_name"], family=tc["name"].split("_")[0].split("%")[0].strip(),
                tags=sorted(tc.get("tags") or []), partition=tc.get("partition") or "",
                time_limit_s=float(limit) if limit is not None else None,
                num_tasks=int(tc.get("num_tasks") or 1),
                tasks_per_node=(int(tc["num_tasks_per_node"])
                                if tc.get("num_tasks_per_node") else None),
                sbatch=options, counter_snapshots=snapshots,
                sweep_rounds=sweep_rounds(text), local=bool(tc.get("local")),
                unique_name=tc.get("unique_name") or "",
                depends_on=list(tc.get("dependencies_conceptual") or []))


def dry_run(system: str, work: Path, topology: Path | None, nodes: list[str] | None,
            repo: Path, extra_args: list[str] | None = None,
            timeout: float = DRY_RUN_TIMEOUT) -> DryRun:
    """``reframe --dry-run --mode acceptance`` of ``system`` in ``work`` (a directory of ours)."""
    repo = repo.resolve()
    settings = repo / "config" / "reframe" / "settings.py"
    override = {"system": system, "topology": str(topology.resolve()) if topology else None,
                "nodes": nodes or []}
    config = work / "plan_settings.py"
    config.write_text(_CONFIG.format(settings=str(settings), override=json.dumps(override)))
    report = work / "report.json"
    env = dict(os.environ, RFM_CONFIG_FILES=str(config), RFM_COLORIZE="n",
               FABRICTEST_RESULTS_DB=str(work / "results.db"),
               FABRICTEST_RFM_LOG=str(work / "reframe.log"))
    cmd = [reframe_exe(), "-c", str(repo / "reframe_tests"), "--system", system,
           "--dry-run", "--mode", "acceptance", "--prefix", str(work / "rfm"),
           "--report-file", str(report), *(extra_args or [])]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise DryRunError(f"reframe --dry-run --system {system} took more than "
                          f"{timeout:g} s") from None
    seconds = time.monotonic() - start
    try:
        data = json.loads(report.read_text())
        partitions = json.loads((work / "partitions.json").read_text())
    except (OSError, ValueError):
        tail = " ".join((proc.stderr or proc.stdout or "").split())[-300:]
        raise DryRunError(f"reframe --dry-run --system {system} wrote no report (exit "
                          f"{proc.returncode}): {tail}") from None
    cases = [_case(tc) for run in data.get("runs", [])[:1] for tc in run.get("testcases", [])
             if not tc.get("fixture")]
    if not cases:
        raise DryRunError(f"reframe --dry-run --system {system} listed no test case")
    return DryRun(cases=cases, partitions=partitions, seconds=seconds)


__all__ = ["DRY_RUN_TIMEOUT", "Case", "DryRun", "DryRunError", "dry_run", "read_job_script",
           "sweep_rounds"]

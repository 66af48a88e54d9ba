"""Helpers for the ReFrame tests: run `reframe` in a subprocess with the project's settings, an
isolated prefix, results database and log, and a hard timeout; read its JSON run report."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "config" / "reframe" / "settings.py"
TESTS_DIR = ROOT / "reframe_tests"
#: systems whose listing depends on this host's state (vcluster: a running cluster's; its tests
#: give it a VCLUSTER_STATE_DIR of their own), left out of SYSTEMS
STATEFUL_SYSTEMS = ("vcluster",)


def system_names(root: Path = ROOT) -> tuple[str, ...]:
    """Every system: a file config/reframe/systems/<name>.py (settings.py loads each one not
    starting with `_`), so that a new system is listed, dry-run and checked from its first
    commit, with no list here to edit."""
    found = (root / "config" / "reframe" / "systems").glob("*.py")
    return tuple(sorted(p.stem for p in found if not p.stem.startswith("_")))


SYSTEMS = tuple(s for s in system_names() if s not in STATEFUL_SYSTEMS)


def reframe_exe() -> str | None:
    cand = Path(sys.executable).with_name("reframe")
    return str(cand) if cand.exists() else shutil.which("reframe")


@dataclass
class RfmRun:
    returncode: int
    output: str
    seconds: float
    prefix: Path
    report: dict | None

    def cases(self) -> list[dict]:
        if not self.report:
            return []
        out = []
        for run in self.report.get("runs", []):
            out.extend(run.get("testcases", []))
        return out

    def case(self, display_prefix: str, system: str | None = None) -> dict:
        """The test case whose display name (spaces removed) starts with `display_prefix`."""
        want = display_prefix.replace(" ", "")
        found = [
            c
            for c in self.cases()
            if c["display_name"].replace(" ", "").startswith(want)
            and (system is None or c["system"].startswith(system))
        ]
        if not found:
            names = sorted({c["display_name"] for c in self.cases()})
            raise AssertionError(f"no test case {display_prefix!r} in {names}")
        return found[0]

    def skip_reason(self, display_prefix: str) -> str | None:
        """The reason printed on the test's SKIP line (the JSON report does not keep it)."""
        want = display_prefix.replace(" ", "")
        for line in self.output.splitlines():
            if "SKIP" not in line or "]" not in line:
                continue
            body = line.split("]", 1)[1]
            name = re.sub(r"^\s*\(\s*\d+/\d+\)\s*", "", body).split(" /", 1)[0]
            if name.replace(" ", "").startswith(want):
                m = re.search(r"\[([^\]]*)\]\s*$", line)
                return m.group(1) if m else ""
        return None

    def job_script(self, display_prefix: str) -> str:
        case = self.case(display_prefix)
        return (Path(case["stagedir"]) / "rfm_job.sh").read_text()


def run_reframe(
    args, tmp: Path, timeout: float = 300, env: dict | None = None, preexec_fn=None,
    root: Path = ROOT,
) -> RfmRun:
    """`reframe` on the suite of the checkout at `root` (its settings, families and references;
    another root: a copy a test has changed)."""
    exe = reframe_exe()
    if exe is None:
        import pytest

        pytest.skip("reframe is not installed: run scripts/install.sh and activate .venv")
    tmp.mkdir(parents=True, exist_ok=True)
    report = tmp / "report.json"
    full_env = dict(os.environ)
    full_env.update(
        {
            "RFM_CONFIG_FILES": str(root / SETTINGS.relative_to(ROOT)),
            "RFM_REFERENCE_PREFIX": str(root / "reference"),
            "FABRICTEST_RESULTS_DB": str(tmp / "results.db"),
            "FABRICTEST_RFM_LOG": str(tmp / "reframe.log"),
            "RFM_COLORIZE": "n",
        }
    )
    if os.geteuid() == 0:
        full_env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        full_env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    full_env.update(env or {})
    cmd = [
        exe,
        "-c",
        str(root / TESTS_DIR.relative_to(ROOT)),
        "--prefix",
        str(tmp / "rfm"),
        "--perflogdir",
        str(tmp / "perflogs"),
        "--report-file",
        str(report),
        *args,
    ]
    start = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            cwd=root,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,
            preexec_fn=preexec_fn,
        )
    except subprocess.TimeoutExpired as err:
        raise AssertionError(
            f"{' '.join(cmd)} did not finish in {timeout}s:\n{err.stdout}\n{err.stderr}"
        ) from err
    data = json.loads(report.read_text()) if report.exists() else None
    return RfmRun(proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start, tmp, data)

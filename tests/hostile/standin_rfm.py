"""One `reframe -r --system local` over stand-in benchmark programs, for the hostile cases that
judge a family's verdict on a crafted output (cases_identity.py, cases_collectives.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(os.environ.get("HOSTILE_ROOT") or Path(__file__).resolve().parents[2]).resolve()
TIMEOUT_S = 400


def run_standins(work: Path, bins: Path, selection: list[str]) -> dict[str, str]:
    """ReFrame on `local` with OSU_HOME, IMB_HOME and PATH at the stand-ins in ``bins`` and
    ``selection`` (its -n/-P options): {display name without spaces: PASSED or the fail
    reason}, or {"hang": why} when it does not finish within TIMEOUT_S."""
    venv = ROOT / ".venv" / "bin"
    exe = venv / "reframe" if (venv / "reframe").exists() else Path(sys.executable).with_name(
        "reframe")
    env = dict(os.environ, OSU_HOME=str(bins), IMB_HOME=str(bins),
               PATH=f"{bins}{os.pathsep}{venv}{os.pathsep}{os.environ.get('PATH', '')}",
               RFM_CONFIG_FILES=str(ROOT / "config" / "reframe" / "settings.py"),
               RFM_REFERENCE_PREFIX=str(ROOT / "reference"), RFM_COLORIZE="n",
               FABRICTEST_RESULTS_DB=str(work / "results.db"),
               FABRICTEST_RFM_LOG=str(work / "reframe.log"))
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    argv = [str(exe), "-c", str(ROOT / "reframe_tests"), "--system", "local", "-r",
            "--prefix", str(work / "prefix"), "--perflogdir", str(work / "perflogs"),
            "--report-file", str(work / "report.json"), "-S", "missing_reference=warn",
            *selection]
    try:
        subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=env,
                       cwd=work, start_new_session=True)
    except subprocess.TimeoutExpired:
        return {"hang": f"reframe did not finish within {TIMEOUT_S} s (a hang)"}
    report = work / "report.json"
    cases = json.loads(report.read_text()).get("runs", [{}])[0].get("testcases", []) \
        if report.exists() else []
    return {tc["display_name"].replace(" ", ""): (
        "PASSED" if tc.get("result") == "pass" else " ".join(str(tc.get("fail_reason")).split()))
        for tc in cases}

"""The job scripts `reframe --dry-run` writes for every system, compared with the recorded ones
in ``golden/job_scripts-<system>.json``: a refactoring of the base, the launchers or the
configuration must not change a single line a system runs (the architecture issue's "dry-run job
scripts identical before and after").

A deliberate change of what a system runs is recorded again with
``FABRICTEST_UPDATE_GOLDEN=1 python -m pytest tests/reframe/test_job_scripts_golden.py`` and the
diff of the JSON file reviewed in the commit.

The runs are isolated from this machine's benchmark installs (``OSU_HOME``/``IMB_HOME`` empty)
and from a running vcluster (``VCLUSTER_STATE_DIR`` an empty directory: the 4-node default), so
the recorded scripts do not depend on where the test runs. Paths under the repository and the
ReFrame prefix are written as ``{ROOT}`` and ``{PREFIX}``, other paths under the test's
temporary directory as ``{TMP}``.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest
from _rfm import ROOT, run_reframe, system_names

pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).resolve().parent / "golden"
ALL_SYSTEMS = system_names()
SCRIPTS = ("rfm_job.sh", "rfm_build.sh")


def job_scripts(run, tmp: Path) -> dict[str, str]:
    """{'<display name> @<partition>+<environ> <script>': normalised text} of every case that
    wrote a script."""
    out = {}
    for case in run.cases():
        stage = Path(case["stagedir"] or "")
        for name in SCRIPTS:
            path = stage / name
            if not path.is_file():
                continue
            text = path.read_text().replace(str(tmp / "rfm"), "{PREFIX}")
            text = text.replace(str(tmp), "{TMP}").replace(str(ROOT), "{ROOT}")
            key = f"{case['display_name']} @{case['partition']}+{case['environ']} {name}"
            out[key] = text
    return out


def _diff(want: dict[str, str], got: dict[str, str]) -> str:
    lines = []
    for key in sorted(set(want) - set(got)):
        lines.append(f"- no longer written: {key}")
    for key in sorted(set(got) - set(want)):
        lines.append(f"+ new: {key}")
    for key in sorted(set(want) & set(got)):
        if want[key] != got[key]:
            lines.append(f"~ changed: {key}")
            lines += difflib.unified_diff(want[key].splitlines(), got[key].splitlines(),
                                          "recorded", "now", lineterm="", n=0)
    return "\n".join(lines)


@pytest.mark.parametrize("system", ALL_SYSTEMS)
def test_dry_run_job_scripts_are_unchanged(system, tmp_path):
    (tmp_path / "no-vcluster").mkdir()
    env = {"OSU_HOME": "", "IMB_HOME": "", "VCLUSTER_STATE_DIR": str(tmp_path / "no-vcluster")}
    run = run_reframe(["--system", system, "--dry-run"], tmp_path, timeout=300, env=env)
    assert run.returncode == 0, run.output[-3000:]
    got = job_scripts(run, tmp_path)
    assert got, f"--dry-run on {system} wrote no job script"
    golden = GOLDEN / f"job_scripts-{system}.json"
    if os.environ.get("FABRICTEST_UPDATE_GOLDEN") == "1":
        golden.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert golden.is_file(), (f"no recorded job scripts for {system} ({golden.name}): record "
                              "them with FABRICTEST_UPDATE_GOLDEN=1 and review them")
    want = json.loads(golden.read_text())
    assert got == want, f"{system}: job scripts differ from {golden.name}:\n{_diff(want, got)}"

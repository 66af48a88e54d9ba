"""A run that selects nothing is a failure (issue 40, ReFrame #3599): plain `reframe -r -n X`
with nothing to run ends "PASSED Ran 0/0", exit 0, and ReFrame has no hook a selection could be
judged in; scripts/reframe-selected.sh (what scripts/run-suite.sh runs) says so in one line
and exits 1, and otherwise passes reframe's output and exit status through."""

from __future__ import annotations

import os
import subprocess

import pytest
from _rfm import ROOT, SETTINGS, reframe_exe

WRAPPER = ROOT / "scripts" / "reframe-selected.sh"
LINE = ("reframe-selected.sh: error: nothing was selected: no test case of this selection runs "
        "on this system (reframe said PASSED, Ran 0/0); 'reframe -l -vv' says why")


def _run(args, tmp_path, path_first=None, timeout=120):
    env = {**os.environ, "RFM_CONFIG_FILES": str(SETTINGS), "RFM_COLORIZE": "n",
           "FABRICTEST_RESULTS_DB": str(tmp_path / "results.db"),
           "FABRICTEST_RFM_LOG": str(tmp_path / "reframe.log"), "OSU_HOME": "", "IMB_HOME": ""}
    if path_first:
        env["PATH"] = f"{path_first}:{env['PATH']}"
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=tmp_path)


def test_a_run_that_selects_nothing_exits_1_with_one_line(tmp_path):
    exe = reframe_exe()
    if exe is None:
        pytest.skip("reframe is not installed: run scripts/install.sh and activate .venv")
    args = ["-c", str(ROOT / "reframe_tests"), "-r", "--system", "local", "-n",
            "NoSuchTestAnywhere", "--prefix", str(tmp_path / "rfm")]
    plain = _run([exe, *args], tmp_path)
    assert plain.returncode == 0 and "Ran 0/0 test case(s)" in plain.stdout, (
        "ReFrame no longer passes an empty run: reframe-selected.sh may be dropped",
        plain.stdout[-2000:])
    wrapped = _run([str(WRAPPER), *args], tmp_path, path_first=os.path.dirname(exe))
    assert wrapped.returncode == 1, wrapped.stdout[-2000:] + wrapped.stderr
    assert wrapped.stderr.strip().splitlines()[-1] == LINE, wrapped.stderr
    assert "Ran 0/0 test case(s)" in wrapped.stdout  # reframe's own output is still shown


def _fake_reframe(tmp_path, out: str, rc: int):
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    fake = bindir / "reframe"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' '{out}'\necho 'from stderr' >&2\nexit {rc}\n")
    fake.chmod(0o755)
    return bindir


@pytest.mark.parametrize(("out", "rc", "expected", "said"), [
    ("[ PASSED ] Ran 3/3 test case(s) from 3 check(s)", 0, 0, False),
    ("[ FAILED ] Ran 2/3 test case(s) from 3 check(s)", 1, 1, False),
    ("[ FAILED ] Ran 0/0 test case(s) from 0 check(s)", 2, 2, False),  # already a failure
    ("[ PASSED ] Ran 0/0 test case(s) from 0 check(s)", 0, 1, True),
    ("- TxRxTest (listing)", 0, 0, False),  # a listing runs nothing and says no "Ran"
])
def test_the_wrapper_keeps_reframes_output_and_status(tmp_path, out, rc, expected, said):
    proc = _run([str(WRAPPER), "-r"], tmp_path, path_first=_fake_reframe(tmp_path, out, rc))
    assert proc.returncode == expected, proc
    assert proc.stdout == out + "\n"
    assert proc.stderr.startswith("from stderr\n")
    assert (LINE in proc.stderr) == said, proc.stderr


def test_run_suite_runs_the_suite_through_the_wrapper():
    text = (ROOT / "scripts" / "run-suite.sh").read_text()
    assert 'exec "$ROOT/scripts/reframe-selected.sh" -c reframe_tests -r --system local "$@"' \
        in text

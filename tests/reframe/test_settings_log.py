"""The ReFrame configuration on a fresh checkout (no `output/` yet) and its debug logs: the first
`reframe` call works, each call gets its own log (named by time and process, not from the
command line, which the configuration does not read), and a query made while a run is in
progress (`fabric-report compare`, which loads the same configuration to read stored sessions)
does not truncate the run's log."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _rfm import ROOT, reframe_exe

pytestmark = pytest.mark.slow

COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "output", "stage", "perflogs", "__pycache__", ".pytest_cache",
    ".ruff_cache", "*.egg-info", "alltomany", "bisection_bw", "bw_window",
)


@pytest.fixture
def fresh_checkout(tmp_path) -> Path:
    """The repository's files as a fresh clone has them: no output/, stage/ or builds."""
    repo = tmp_path / "checkout"
    shutil.copytree(ROOT, repo, ignore=COPY_IGNORE)
    assert not (repo / "output").exists()
    return repo


def _env(repo: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RFM_", "FABRICTEST_"))}
    env.update(
        RFM_CONFIG_FILES=str(repo / "config" / "reframe" / "settings.py"),
        RFM_REFERENCE_PREFIX=str(repo / "reference"),
        FABRICTEST_RESULTS_DB=str(tmp / "results.db"),
        RFM_COLORIZE="n",
        OSU_HOME="",
        IMB_HOME="",
    )
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def _reframe() -> str:
    exe = reframe_exe()
    if exe is None:
        pytest.skip("reframe is not installed: run scripts/install.sh and activate .venv")
    return exe


def test_first_call_on_a_fresh_checkout_loads_the_configuration(fresh_checkout, tmp_path):
    proc = subprocess.run(
        [_reframe(), "-c", str(fresh_checkout / "reframe_tests"), "-l", "--system", "local"],
        cwd=fresh_checkout, env=_env(fresh_checkout, tmp_path), capture_output=True, text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "failed to load configuration" not in proc.stdout + proc.stderr
    logs = list((fresh_checkout / "output" / "logs").glob("reframe-*-*.log"))
    assert len(logs) == 1 and logs[0].stat().st_size > 0, logs  # the listing's own log


def test_the_configuration_reads_nothing_from_the_command_line():
    """Configuration without side effects on the command line: the log's name comes from the
    clock and the process (every call its own), whatever argv says."""
    for path in (ROOT / "config" / "reframe").rglob("*.py"):
        tree = ast.parse(path.read_text())
        used = [n.lineno for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and n.attr in ("argv", "orig_argv")]
        assert not used, f"{path} reads the command line at lines {used}"


def test_a_query_does_not_truncate_a_running_suites_log(fresh_checkout, tmp_path):
    if shutil.which("mpirun") is None or shutil.which("mpicc") is None:
        pytest.skip("mpirun/mpicc not on PATH: run scripts/install.sh and activate .venv")
    env = _env(fresh_checkout, tmp_path)
    logs = fresh_checkout / "output" / "logs"
    run = subprocess.Popen(
        [_reframe(), "-c", str(fresh_checkout / "reframe_tests"), "-r", "--system", "local",
         "-n", "BisectionTest", "--prefix", str(tmp_path / "rfm"),
         # this test is about the log; the figure is judged elsewhere (and the machine may be busy)
         "--skip-performance-check"],
        cwd=fresh_checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        mine: list[Path] = []
        while time.monotonic() < deadline and run.poll() is None:
            mine = [p for p in logs.glob(f"reframe-*-{run.pid}.log") if p.stat().st_size > 0]
            if mine:
                break
            time.sleep(0.2)
        assert mine, "the run wrote no log of its own under output/logs/"
        before = mine[0].read_bytes()
        report = Path(sys.executable).with_name("fabric-report")
        query = [str(report), "compare", "--tag", "stack=a", "--tag", "stack=b"]
        if not report.exists():
            query = [_reframe(), "--list-stored-sessions"]
        subprocess.run(query, cwd=fresh_checkout, env=env, capture_output=True, timeout=300)
        assert run.poll() is None, "the run ended before the query: nothing was tested"
        out, _ = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, out[-3000:]
    after = mine[0].read_bytes()
    assert after.startswith(before), "the run's log lost what it had written"
    assert b"\0" not in after, "the run's log was truncated under it (a hole of NUL bytes)"
    assert len(after) > len(before)
    # the query logged elsewhere (fabric-report: a temporary file; reframe: its own log)
    assert b"stored-sessions" not in after, "the query wrote into the run's log"


def test_ci_runs_the_suite_before_the_tests():
    """CI on a clean clone must run the README's main command first, so that a missing
    first-run step (like output/ for the log) fails CI."""
    commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    suite = next(i for i, c in enumerate(commands) if c == "./scripts/run-suite.sh")
    tests = next(i for i, c in enumerate(commands) if c.endswith("./scripts/run-tests.sh"))
    assert suite < tests, commands

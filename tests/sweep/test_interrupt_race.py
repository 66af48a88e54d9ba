"""Ctrl-C while a run is being launched: the interrupt kills the runs it sees, and a run whose
process starts just after it must not then wait its whole time limit (under load a launch
takes seconds, and the sweep sat out `--pair-timeout` per round: 240 s for a 4 s Ctrl-C)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from fabrictest.sweep import runners
from fabrictest.sweep.runners import CommandRunner
from fabrictest.sweep.runs import INTERRUPTED


class _Measurement:
    unit, name, sender_rank = "Gbps", "hang", 1


class _Hang(CommandRunner):
    def command(self, src, dst):
        return [sys.executable, "-c", "import time; time.sleep(600)"], None


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_a_run_started_as_ctrl_c_lands_is_killed_not_waited_for(monkeypatch):
    runner = _Hang(_Measurement(), pair_timeout=60)
    real_popen = subprocess.Popen

    def popen_as_ctrl_c_lands(*args, **kwargs):
        # the interrupt arrives between the runner's stop check and the process's start
        runner._stop.set()
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(runners.subprocess, "Popen", popen_as_ctrl_c_lands)
    t0 = time.monotonic()
    status, _rc, _out, _secs = runner._execute(*runner.command("a", "b"))
    assert time.monotonic() - t0 < 10, "waited for the run's time limit"
    assert status == INTERRUPTED
    assert not runner._procs

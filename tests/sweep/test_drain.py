"""`fabric-sweep --drain`: the scontrol commands of the suspects, refused when it must be."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fabrictest.sweep import drain
from fabrictest.sweep.core import run_sweep
from fabrictest.sweep.simulate import SimulatedRunner

BIN = Path(sys.executable).parent
NODES = [f"node{i:02d}" for i in range(1, 9)]


def sweep_cli(*args, env=None):
    return subprocess.run([str(BIN / "fabric-sweep"), "node[01-08]", "--launcher", "sim",
                           "--no-pairs", "-q", "--seed", "3", *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_dry_run_prints_the_command_of_the_suspect_only():
    proc = sweep_cli("--sim-slow", "node03=0.6", "--drain")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    drains = [line for line in lines if line.startswith("drain")]
    assert len(drains) == 1
    assert drains[0].startswith("drain (dry run; --confirm to run): scontrol update "
                                "NodeName=node03 State=DRAIN 'Reason=fabric-sweep: node03 ")
    assert "pairs slow sending" in drains[0]


def test_healthy_sweep_drains_nothing():
    proc = sweep_cli("--drain")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("suspects: none\ndrain: nothing to drain")


def test_too_many_suspects_are_refused():
    slow = ["--sim-slow", "node01=0.4", "--sim-slow", "node02=0.4:tx", "--sim-slow",
            "node05=0.4:rx"]
    proc = sweep_cli(*slow, "--drain")
    assert proc.returncode == 1
    tail = proc.stdout.rstrip().splitlines()[-1]
    assert tail.startswith("drain: refused: 3 of 8 nodes would be drained (38% > "
                           "--max-drain-fraction 25%)"), proc.stdout
    assert "scontrol update" not in proc.stdout
    ok = sweep_cli(*slow, "--drain", "--max-drain-fraction", "0.5")
    assert sum(line.startswith("drain (dry run") for line in ok.stdout.splitlines()) == 3


def test_undecided_or_interrupted_verdict_drains_nothing():
    res = run_sweep(NODES, SimulatedRunner(NODES, sigma=0.05, slow={"node03": 0.5}, seed=1),
                    seed=1)
    assert drain.plan(res, 0.25).commands
    res.verdict.undecided.append(("node05", "receive", "no clean run"))
    p = drain.plan(res, 0.25)
    assert not p.commands and p.lines(True) == [
        "drain: refused: 1 node-directions are undecided: the verdict is not whole"]
    res.verdict.undecided.clear()
    res.interrupted = True
    assert drain.plan(res, 0.25).refused.startswith("the sweep was interrupted")


@pytest.mark.parametrize("args, message", [
    (["--confirm"], "--confirm runs the commands of --drain: give --drain too"),
    (["--drain", "--yes"], "--drain --confirm drains real nodes: not with --launcher sim"),
    (["--drain", "--max-drain-fraction", "1.5"], "--max-drain-fraction must be in (0, 1]"),
    (["--drain", "--max-drain-fraction", "0"], "--max-drain-fraction must be in (0, 1]"),
])
def test_refused_before_any_run(args, message):
    proc = sweep_cli(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"fabric-sweep: error: {message}"), proc.stderr


@pytest.mark.proc  # through fabrictest code that starts its commands
def test_execute_runs_scontrol_and_reports_a_failure(tmp_path, monkeypatch):
    log = tmp_path / "calls"
    fake = tmp_path / "scontrol"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n"
                    "case \"$2\" in NodeName=node05) echo 'Invalid node name' >&2; exit 1;; "
                    "esac\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    p = drain.DrainPlan(commands=[
        ["scontrol", "update", "NodeName=node03", "State=DRAIN", "Reason=fabric-sweep: x"],
        ["scontrol", "update", "NodeName=node05", "State=DRAIN", "Reason=fabric-sweep: y"]])
    errors = drain.execute(p)
    assert errors == ["drain: failed: node05: scontrol exit 1: Invalid node name"]
    calls = log.read_text().splitlines()
    assert calls == ["update NodeName=node03 State=DRAIN Reason=fabric-sweep: x",
                     "update NodeName=node05 State=DRAIN Reason=fabric-sweep: y"]


def test_reason_is_one_bounded_line():
    text = drain.reason("suspect: node03 send 0.1 Gbps\n" + "x" * 400)
    assert "\n" not in text and len(text) == drain.REASON_LIMIT and text.endswith("...")
    assert text.startswith("fabric-sweep: node03 send 0.1 Gbps")
    assert np.isfinite(drain.DEFAULT_MAX_FRACTION)

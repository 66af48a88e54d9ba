"""`fabric-sweep` refuses options that make no sense before any work: one line, exit 2.

Black-box: the installed console script, its exit status, its first line on stderr, nothing on
stdout (no sweep ran, no report printed) and no traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).parent / "fabric-sweep")
SIM = ["node[01-08]", "--launcher", "sim", "--seed", "1"]


def run(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *argv], capture_output=True, text=True, timeout=timeout)


def assert_refused(proc: subprocess.CompletedProcess, first_line: str) -> None:
    err = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-500:])
    assert err and err[0].startswith("fabric-sweep: error: "), proc.stderr
    assert first_line in err[0], err[0]
    assert len(err) == 1, proc.stderr  # one line, no usage block, no traceback
    assert proc.stdout == ""  # nothing was measured or reported


@pytest.mark.parametrize(
    "argv, first_line",
    [
        (["--rounds", "0"], "--rounds must be at least 1, got 0"),
        (["--rounds", "-3"], "--rounds must be at least 1, got -3"),
        (["--rounds", "abc"], "argument --rounds: invalid integer 'abc'"),
        (["--expect", "-5"], "--expect must be a positive finite number, got -5"),
        (["--expect", "0"], "--expect must be a positive finite number, got 0"),
        (["--expect", "nan"], "--expect must be a positive finite number, got nan"),
        (["--expect", "inf"], "--expect must be a positive finite number, got inf"),
        (["--pair-timeout", "0"], "--pair-timeout must be a positive finite number"),
        (["--pair-timeout", "-1"], "--pair-timeout must be a positive finite number"),
        (["--pair-timeout", "inf"], "--pair-timeout must be a positive finite number"),
        (["--pair-timeout", "nan"], "--pair-timeout must be a positive finite number"),
        (["--pair-timeout", "99999"], "--pair-timeout must be at most 3600"),
        (["--max-concurrent", "0"], "--max-concurrent must be at least 1, got 0"),
        (["--nmsg", "0"], "--nmsg must be at least 1, got 0"),
        (["--nmsg", "1e12"], "argument --nmsg: invalid integer '1e12'"),
        (["--nmsg", str(1 << 64)], "--nmsg must be at most"),
        (["--msg-size", "0"], "--msg-size must be at least 1, got 0"),
        (["--num-blks", "-1"], "--num-blks must be at least 1, got -1"),
        (["--num-cmsgs", "0"], "--num-cmsgs must be at least 1, got 0"),
        (["--osu-size", "0"], "--osu-size must be at least 1, got 0"),
        (["--seed", "-1"], "--seed must be 0 or more, got -1"),
        (["--sim-sigma", "-0.1"], "--sim-sigma must be between 0 and 3"),
        (["--sim-sigma", "nan"], "--sim-sigma must be between 0 and 3"),
        (["--min-drop", "1.5"], "--min-drop must be between 0 and 1"),
        (["--fdr", "0"], "--fdr must be between 0 and 1"),
        (["--fdr", "1"], "--fdr must be between 0 and 1"),
        (["--max-rounds", "0"], "--max-rounds must be at least 1, got 0"),
        (["--rounds", "3", "--max-rounds", "2"], "--max-rounds 2 is smaller than --rounds 3"),
        (["--max-rounds", "5000"], "--max-rounds must be at most 1000"),
        (["--pair-seconds", "-1"], "--pair-seconds must be a positive finite number"),
        (["--sim-pair-seconds", "-1"], "--sim-pair-seconds must be between 0 and 60"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_numbers_are_refused(argv, first_line):
    assert_refused(run(*SIM, *argv), first_line)


@pytest.mark.parametrize(
    "argv, first_line",
    [
        (["--sim-slow", "node01=abc"], "--sim-slow 'node01=abc': FACTOR 'abc' is not a number"),
        (["--sim-slow", "n=abc"], "--sim-slow 'n=abc': FACTOR 'abc' is not a number"),
        (["--sim-slow", "node01"], "--sim-slow 'node01': expected NODE=FACTOR"),
        (["--sim-slow", "node01="], "--sim-slow 'node01=': FACTOR '' is not a number"),
        (["--sim-slow", "=0.5"], "--sim-slow '=0.5': no node named"),
        (["--sim-slow", "node01=0"], "FACTOR must be in (0, 1], got 0"),
        (["--sim-slow", "node01=1.5"], "FACTOR must be in (0, 1], got 1.5"),
        (["--sim-slow", "node01=inf"], "FACTOR must be in (0, 1], got inf"),
        (["--sim-slow", "node99=0.5"], "node99 is not one of the sweep's nodes"),
        (["--sim-slow", "node[01-=0.5"], "bad hostlist expression"),
        (["--sim-slow", "node01=0.5", "--sim-slow", "node[01-02]=0.4"],
         "node01 tx is given twice"),
        (["--sim-slow", "node01=0.5:tx", "--sim-slow", "node01=0.4:tx"],
         "node01 tx is given twice"),
        (["--sim-slow", "node01=0.5:up"], "--sim-slow 'node01=0.5:up': direction 'up' is not"),
        (["--sim-slow", "node01=0.5:"], "direction '' is not tx or rx"),
        (["--sim-slow", "node01=abc:tx"], "FACTOR 'abc' is not a number"),
        (["--sim-down", "node01:sideways"], "direction 'sideways' is not tx or rx"),
        (["--sim-down", "node01:rx", "--sim-down", "node01"], "node01 rx is given twice"),
        (["--sim-slow", "@"], "--sim-slow '@': no file named"),
        (["--sim-slow", "@/nonexistent/faults"], "--sim-slow @/nonexistent/faults: No such"),
        (["--sim-down", "@/nonexistent"], "--sim-down @/nonexistent: No such file"),
        (["--sim-down", "node01=0.5"], "--sim-down 'node01=0.5': expected NODE"),
        (["--sim-down", "node99"], "node99 is not one of the sweep's nodes"),
        (["--sim-down", ""], "--sim-down '': no node named"),
    ],
)
def test_malformed_simulation_specs_are_refused(argv, first_line):
    assert_refused(run(*SIM, *argv), first_line)


@pytest.mark.parametrize(
    "content, first_line",
    [
        ("node01=0.5:tx\nnode02=half\n", "@{f} line 2: 'node02=half': FACTOR 'half' is not"),
        ("# nothing but a comment\n\n", "@{f}: no spec in the file"),
        ("@other\n", "@{f} line 1: '@other': no @FILE inside a file"),
        ("node01=0.5\nnode77=0.5:rx\n", "@{f} line 2: 'node77=0.5:rx': node77 is not one of"),
        ("node01=0.5:tx\nnode01=0.2:tx\n",
         "@{f} line 2: 'node01=0.2:tx': node01 tx is given twice"),
    ],
)
def test_malformed_spec_files_name_file_and_line(tmp_path, content, first_line):
    f = tmp_path / "faults.txt"
    f.write_text(content)
    assert_refused(run(*SIM, "--sim-slow", f"@{f}"),
                   "--sim-slow " + first_line.format(f=f))


def test_simulation_specs_need_the_simulation():
    proc = run("node[01-04]", "--launcher", "mpirun", "--sim-slow", "node01=0.5")
    assert_refused(proc, "--sim-slow and --sim-down need --launcher sim")


def test_missing_or_empty_hostfile(tmp_path):
    assert_refused(run("--hostfile", "/nonexistent", "--launcher", "sim"),
                   "--hostfile /nonexistent: no such file")
    empty = tmp_path / "hosts"
    empty.write_text("# nothing\n\n")
    assert_refused(run("--hostfile", str(empty), "--launcher", "sim"), "names no node")


@pytest.mark.parametrize("where", ["/proc/x", "missing-dir/x.json", "."])
def test_unwritable_json_is_refused_before_the_sweep(tmp_path, where):
    path = where if where.startswith("/") else str(tmp_path / where)
    if where == ".":
        path = str(tmp_path)
    # a real launcher that would take a while: nothing may start before the refusal
    proc = run("node[01-04]", "--launcher", "mpirun", "--all-local", "--json", path,
               timeout=30)
    assert_refused(proc, f"--json {path}: ")


def test_txrx_limits_are_checked_up_front():
    proc = run("node[01-04]", "--launcher", "mpirun", "--all-local", "--msg-size", "12")
    assert_refused(proc, "txrx would refuse it: --msg-size 12")

"""txrx's --help (examples, exit codes), and rank 0's progress line on long runs: the rate so far
and the time left on stderr every --progress seconds, none with --quiet or on a short run."""

from __future__ import annotations

import io
import re
import shlex
import subprocess
import sys

import pytest

from fabrictest.parsers.txrx import missing, parse_txrx
from fabrictest.txrx.cli import EPILOG, parse
from fabrictest.txrx.errors import EXIT_FAULT, EXIT_LOSS, EXIT_OK, EXIT_USAGE
from fabrictest.txrx.options import validate
from fabrictest.txrx.progress import Progress, duration

TOOL = [sys.executable, "-m", "fabrictest.txrx"]
SMALL = ["--method", "mpi", "--msg-size", "8192", "--num-blks", "4", "--num-cmsgs", "16"]
PROGRESS = re.compile(r"^INFO:__main__:progress: receiver 0: (\d+) of (\d+) messages "
                      r"\(([\d.]+) %\) in .+?, (\S+) Gbps so far, about (.+) left$", re.M)


def test_help_has_examples_and_every_exit_code():
    out = subprocess.run([*TOOL, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    text = out.stdout
    assert "examples:" in text and "exit status:" in text
    for code in (EXIT_OK, EXIT_FAULT, EXIT_USAGE, EXIT_LOSS):
        assert re.search(rf"^  {code}  \S", text, re.M), code
    assert "--quiet" in text and "--progress SECONDS" in text


def test_every_help_example_is_a_valid_command_line():
    examples = [line.split("txrx", 1)[1].split("  ")[0] for line in EPILOG.splitlines()
                if line.strip().startswith("mpirun")]
    assert len(examples) >= 4
    for args in examples:
        opts = parse(shlex.split(args))
        validate(opts, opts.world_size)


@pytest.mark.parametrize("bad", ["0", "-1", "nan", "inf", "1e9"])
def test_bad_progress_interval_is_refused(bad):
    out = subprocess.run([*TOOL, "--method", "mpi", "--progress", bad], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "--progress must be a finite number of seconds" in lines[0]


def test_progress_line_reports_rate_and_time_left():
    now = [100.0]
    out = io.StringIO()
    p = Progress(expected=1000, msg_size=125_000, who="receiver 0", interval=5.0,
                 clock=lambda: now[0], out=out)
    p.update(10)
    now[0] = 104.9
    p.update(400)
    assert out.getvalue() == ""  # shorter than the interval: nothing
    now[0] = 110.0
    p.update(250)  # 250 messages of 1 Mbit in 10 s: 25 msg/s, 0.025 Gbps; 750 left: 30 s
    assert out.getvalue() == ("INFO:__main__:progress: receiver 0: 250 of 1000 messages (25.0 %) "
                              "in 10 s, 0.025 Gbps so far, about 30 s left\n")
    now[0] = 112.0
    p.update(300)
    assert p.lines == 1  # the next one 5 s later


def test_duration_words():
    assert [duration(s) for s in (7.2, 95, 4000)] == ["7 s", "1 min 35 s", "1 h 06 min"]


@pytest.mark.mpi
def test_long_run_prints_progress_on_rank_0_and_quiet_none(mpirun):
    # the receive loop of 60000 messages takes 0.1-0.3 s here (under 0.2 s on a fast CI host,
    # where an interval of 0.2 s printed nothing): 10 ms gives several lines on any host
    args = [*TOOL, *SMALL, "--nmsg", "60000", "--progress", "0.01"]
    p = mpirun(2, args, timeout=180, check=True)
    lines = PROGRESS.findall(p.stderr)
    assert lines, p.stderr[-2000:]
    for got, expected, share, gbps, left in lines:
        assert int(expected) == 60000 and 0 < int(got) <= 60000
        assert float(share) == pytest.approx(100 * int(got) / 60000, abs=0.06)
        assert float(gbps) > 0 and left
    assert "progress" not in p.stdout  # stdout is the report, unchanged
    assert missing(parse_txrx(p.stdout), 1, 1) == []
    q = mpirun(2, [*args, "--quiet"], timeout=180, check=True)
    assert "progress" not in q.stderr + q.stdout
    assert missing(parse_txrx(q.stdout), 1, 1) == []

"""The tool says when it is the bottleneck (issue 34): each rank's own time per message against
what the line rate needs, in its lines, rank 0's warning and --json, read back by the suite's
parser. A rank that cannot fill the link is reported tool-bound; one that can is not."""

from __future__ import annotations

import json
import re
import sys

import pytest

from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.txrx import parse_txrx
from fabrictest.txrx.bottleneck import LoopTime, judge, line, need_per_message
from fabrictest.txrx.errors import UsageError
from fabrictest.txrx.options import Options, validate

TOOL = [sys.executable, "-m", "fabrictest.txrx"]
OWN = re.compile(r"^INFO:__main__:Rank 0 (receiver|transmitter) own time per message is "
                 r"([\d.e+-]+) us \(([\d.e+-]+) us at the line rate of ([\d.e+-]+) Gbps\): "
                 r"(tool-bound|not tool-bound)$", re.M)


def test_need_per_message_is_the_line_rate_s_time_per_message():
    # the figure: 100 Gb/s at 64 KiB needs 190,735 messages/s, 5.24 us each
    assert need_per_message(65536, 100.0) == pytest.approx(5.24288e-6)
    assert 1 / need_per_message(65536, 100.0) == pytest.approx(190_735, abs=1)


def test_verdict_either_way_and_unknown_without_a_line_rate():
    own = LoopTime()
    own.add(9.1e-6 * 32, 32)  # the 9.1 us per 64 KiB message
    at_100 = judge(own, 65536, 100.0)
    assert at_100.tool_bound is True
    assert line("Rank 0 receiver", at_100) == (
        "Rank 0 receiver own time per message is 9.1 us (5.24 us at the line rate of 100 Gbps):"
        " tool-bound")
    assert judge(own, 65536, 25.0).tool_bound is False  # 21 us allowed at 25 Gbps
    unknown = judge(own, 65536, None)
    assert unknown.tool_bound is None and "line rate unknown" in line("Rank 0 receiver", unknown)
    assert judge(LoopTime(), 65536, 100.0).tool_bound is None  # no message handled


def test_own_time_is_the_median_batch_so_a_preempted_batch_does_not_count():
    own = LoopTime()
    for _ in range(99):
        own.add(32e-6, 32)  # 1 us per message
    own.add(4e-3, 32)  # the scheduler took the core for 4 ms during one batch
    assert own.per_message() == pytest.approx(1e-6)
    assert own.seconds / own.messages > 2e-6  # the mean would have doubled it


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), 1e6])
def test_impossible_line_rate_is_refused(bad):
    with pytest.raises(UsageError, match="--line-rate must be a finite number of Gbps"):
        validate(Options(method="mpi", line_rate=bad), 2)


def test_parser_reads_the_verdict_and_refuses_one_that_contradicts_its_figures():
    head = "INFO:__main__:Rank 0 transmitter data rate is 2.5 Gbps\n"
    bound = "INFO:__main__:Rank 0 receiver own time per message is 9.1 us (5.24 us at the line "
    rep = parse_txrx(head + bound + "rate of 100 Gbps): tool-bound\n")
    (own,) = rep.tool_bound()
    assert (own.role, own.index, own.own_us, own.need_us, own.line_rate_gbps) == (
        "receiver", 0, 9.1, 5.24, 100.0)
    assert not parse_txrx(head).tool_bound()
    with pytest.raises(ParseError, match="contradicts its figures"):
        parse_txrx(head + bound + "rate of 100 Gbps): not tool-bound\n")
    with pytest.raises(ParseError, match="repeats a rank's own-time line"):
        parse_txrx(head + (bound + "rate of 100 Gbps): tool-bound\n") * 2)


@pytest.mark.mpi
def test_run_that_cannot_fill_the_line_rate_says_tool_bound(mpirun, tmp_path):
    # 8-byte messages at 100 Gbps: 0.64 ns per message, which no rank of any tool can do
    js = tmp_path / "r.json"
    args = ["--method", "mpi", "--msg-size", "8", "--num-blks", "4", "--num-cmsgs", "16",
            "--nmsg", "2000", "--line-rate", "100", "--json", str(js)]  # fmt: skip
    p = mpirun(2, [*TOOL, *args], timeout=90)
    assert p.returncode == 0, p.stderr  # the run is whole: the flag is a verdict on its figures
    found = {m[0]: m for m in OWN.findall(p.stdout)}
    assert set(found) == {"receiver", "transmitter"}, p.stdout
    assert all(v[4] == "tool-bound" and float(v[3]) == 100 for v in found.values())
    assert "WARNING:__main__:tool-bound: Rank 0 receiver spends" in p.stderr
    assert "its rates measure txrx, not the link" in p.stderr
    doc = json.loads(js.read_text())
    assert doc["tool_bound"] is True and doc["line_rate_gbps"] == 100.0
    assert all(r["tool_bound"] is True and r["own_time_per_msg_s"] > 0 for r in doc["ranks"])
    rep = parse_txrx(p.stdout)
    assert {(o.role, o.tool_bound) for o in rep.own_times} == {("receiver", True),
                                                               ("transmitter", True)}


@pytest.mark.mpi
def test_run_that_can_fill_the_line_rate_is_not_tool_bound(mpirun, tmp_path):
    # 64 KiB at 0.01 Gbps: 52 ms per message allowed
    js = tmp_path / "r.json"
    args = ["--method", "mpi", "--num-blks", "4", "--num-cmsgs", "16", "--nmsg", "500",
            "--line-rate", "0.01", "--json", str(js)]  # fmt: skip
    p = mpirun(2, [*TOOL, *args], timeout=90)
    assert p.returncode == 0, p.stderr
    assert [m[4] for m in OWN.findall(p.stdout)] == ["not tool-bound"] * 2, p.stdout
    assert "tool-bound" not in p.stderr
    doc = json.loads(js.read_text())
    assert doc["tool_bound"] is False and not parse_txrx(p.stdout).tool_bound()

"""Only finite, physically possible figures are results: in every parser's recorded real output
one figure is replaced by `inf`, `nan`, a negative or a zero value (where the tool prints only
positive ones), and `missing()` names it; the untouched recording is whole."""

from __future__ import annotations

import re

import pytest
from recordings import read

from fabrictest.parsers import alltomany, bisection, imb, osu, perftest, txrx

BAD = ["inf", "nan", "-3.5", "0.00"]


def _replace_line(text: str, pattern: str, new: str) -> str:
    out, n = re.subn(pattern, new, text, count=1, flags=re.M)
    assert n == 1, pattern
    return out


@pytest.mark.parametrize("bad", BAD)
def test_osu_bandwidth_not_a_figure(bad):
    text = read("osu_bw-7.4-ompi4.1-local.txt")
    assert osu.missing(osu.parse_osu(text)) == []
    result = osu.parse_osu(_replace_line(text, r"^1048576 +12755\.25$", f"1048576 {bad:>20}"))
    problems = osu.missing(result)
    assert problems == [f"osu_bw: Bandwidth (MB/s) at 1 MiB is {float(bad):g}, not a finite "
                        "positive number"], problems


@pytest.mark.parametrize("bad", BAD)
def test_osu_latency_not_a_figure(bad):
    text = read("osu_latency-7.4-ompi4.1-local.txt")
    result = osu.parse_osu(text)
    assert osu.missing(result) == []
    size = result.rows[3].size
    text = _replace_line(text, rf"^{size} +\S+$", f"{size} {bad:>20}")
    assert any(f"at {size} B is {float(bad):g}" in p for p in osu.missing(osu.parse_osu(text)))


@pytest.mark.parametrize("bad", BAD)
def test_imb_bandwidth_not_a_figure(bad):
    text = read("imb-2021.7-pingpong-ompi4.1-local.txt")
    assert imb.missing(imb.parse_imb(text), "PingPong") == []
    text = _replace_line(text, r"^( +1048576 +40 +158\.01) +6636\.02$", rf"\1 {bad:>12}")
    problems = imb.missing(imb.parse_imb(text), "PingPong")
    assert problems == [f"PingPong: Mbytes/sec at 1 MiB is {float(bad):g}, not a finite "
                        "positive number"], problems


@pytest.mark.parametrize("bad", ["inf", "nan", "-6.25"])
def test_imb_time_not_a_figure(bad):
    text = read("imb-2021.7-pingpong-ompi4.1-local.txt")
    text = _replace_line(text, r"^( +0 +1000) +6\.25( +0\.00)$", rf"\1 {bad:>12}\2")
    problems = imb.missing(imb.parse_imb(text), "PingPong")
    assert problems == [f"PingPong: t[usec] at 0 B is {float(bad):g}, not a finite number "
                        ">= 0"], problems


def test_imb_zero_bandwidth_at_zero_bytes_is_what_imb_prints():
    text = read("imb-2021.7-pingpong-ompi4.1-local.txt")
    assert imb.parse_imb(text).benchmark("PingPong").row(0).mbytes_per_sec == 0.0
    assert imb.missing(imb.parse_imb(text), "PingPong") == []


@pytest.mark.parametrize("bad", BAD)
def test_perftest_bandwidth_not_a_figure(bad):
    text = read("ib_send_bw-ib-cx6-mbsec-client.txt")
    assert perftest.missing(perftest.parse_perftest(text)) == []
    text = _replace_line(text, r"^( 4 +1000 +8\.76) +8\.75( +2\.295007)$", rf"\1 {bad}\2")
    problems = perftest.missing(perftest.parse_perftest(text))
    assert problems == [f"perftest Send BW: at 4 B average bandwidth is {float(bad):g}, "
                        "not a finite positive number"], problems


@pytest.mark.parametrize("bad", BAD)
def test_bisection_bandwidth_not_a_figure(bad):
    row = ("4 Ranks, Msg Size:      {size} bytes, Node BW:    {bw} MB/sec/node,  "
           "Aggregate BW:   0.76 GB/sec\n")
    text = " Number of Process 4PPN: 2, Number of nodes: 2, Num_reps = 2\n" + "".join(
        row.format(size=s, bw=bad if s == 4096 else "381.77") for s in bisection.SIZES)
    problems = bisection.missing(bisection.parse_bisection(text), ranks=4)
    assert problems == [f"bisection: node bandwidth at 4 KiB is {float(bad):g}, not a finite "
                        "positive number"], problems


@pytest.mark.parametrize(("line", "bad", "expected"), [
    ("transmitter data rate is", "-97.7", "transmitter 0: rate -97.7 Gbps or elapsed time"),
    ("transmitter data rate is", "0", "transmitter 0: rate 0 Gbps or elapsed time"),
    ("transmitter elapsed time is", "inf", "transmitter 0: rate or elapsed time not a finite"),
    ("receiver from transmitter 0, elapsed time is", "-0.5",
     "receiver 0 <- transmitter 0: elapsed time negative or zero"),
    ("receiver from transmitter 0, elapsed time is", "0",
     "receiver 0 <- transmitter 0: elapsed time negative or zero"),
    ("receiver from transmitter 0, data rate is", "nan",
     "receiver 0 <- transmitter 0: data rate not a finite number"),
])
def test_txrx_figure_not_a_figure(line, bad, expected):
    text = read("seed000-txrx-1pair.txt")
    assert txrx.missing(txrx.parse_txrx(text), 1, 1) == []
    text = _replace_line(text, rf"(Rank 0 {line}) \S+", rf"\1 {bad}")
    problems = txrx.missing(txrx.parse_txrx(text), 1, 1)
    assert any(p.startswith(expected) for p in problems), problems


@pytest.mark.parametrize(("field", "bad"), [("end_to_end", "inf"), ("end_to_end", "0"),
                                            ("irecv", "-1e-06"), ("waitall", "nan")])
def test_alltomany_time_not_a_figure(field, bad):
    line = ("alltomany-times rep=1 irecv=1.0e-06 isend=1.0e-06 waitall=1.0e-06 "
            "end_to_end=4.0e-06 at=1,2 irecv_at=5e-07,1e-06 end_to_end_at=2e-06,4e-06")
    line = re.sub(rf"\b{field}=\S+", f"{field}={bad}", line)
    text = ("-" * 59 + "\nTotal number of MPI processes        = 2\n"
            "Total number of iterations           = 2\n"
            + "".join(f"{label:<37}= 0.0000 sec\n" for label in (
                "Max time of posting irecv", "Max time of posting isend",
                "Max time of MPI_Waitall()", "Max end-to-end time"))
            + "(Max means the maximum among all 2 processes)\n"
            "Repetitions                          = 1 (median)\n" + line + "\n" + "-" * 59 + "\n")
    problems = alltomany.missing(alltomany.parse_alltomany(text), 2, 2, repetitions=1)
    assert problems and all(f"repetition 1 {field} time is {float(bad):g}" in p
                            for p in problems), problems


def test_alltomany_block_negative_time():
    block = ("-" * 59 + "\nTotal number of MPI processes        = 512\n"
             "Total number of iterations           = 2\n"
             "Max time of posting irecv            = -0.0117 sec\n"
             "Max time of posting isend            = 0.0041 sec\n"
             "Max time of MPI_Waitall()            = 0.0791 sec\n"
             "Max end-to-end time                  = 0.0829 sec\n"
             "(Max means the maximum among all 512 processes)\n" + "-" * 59 + "\n")
    problems = alltomany.missing(alltomany.parse_alltomany(block))
    assert problems == ["all-to-many: 'Max time of posting irecv' is -0.0117, not a finite "
                        "number >= 0"], problems

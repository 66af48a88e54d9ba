"""Outputs as sites wrap them (tests/data/real-outputs-wrapped/SOURCES.md): a job script's lines
before and after the tool's output are ignored and the output is read exactly (the same figures
as the tool's own lines alone), a line inside a table is not ignored, several runs in one
output are refused unless asked for, and a last line without its newline is a cut for every
parser here."""

from __future__ import annotations

import re

import pytest
from recordings import DATA, read

from fabrictest.parsers import ParseError, imb, launch, osu, perftest, rdma_link, txrx

WRAPPED = DATA / "real-outputs-wrapped"
SINGLE = sorted(p for p in WRAPPED.glob("osu_*.txt") if "two-runs" not in p.name)


def _tool_lines(text: str) -> str:
    """Only OSU's own lines: its `#` lines and its rows (what the wrapper did not print)."""
    keep = [x for x in text.splitlines(keepends=True)
            if x.startswith("# ") or re.match(r"^\d+\s+[\d.]+(\s+\S+)*\s*$", x)]
    return "".join(keep)


def test_the_wrapped_recordings_are_listed():
    names = sorted(p.name for p in WRAPPED.glob("*.txt"))
    sources = (WRAPPED / "SOURCES.md").read_text()
    assert len(names) >= 4 and all(name in sources for name in names)


@pytest.mark.parametrize("path", SINGLE, ids=lambda p: p.name)
def test_wrapper_lines_are_ignored_and_the_output_read_exactly(path):
    text = path.read_text()
    assert text != _tool_lines(text)  # there is a wrapper
    wrapped, alone = osu.parse_osu(text), osu.parse_osu(_tool_lines(text))
    assert wrapped.rows == alone.rows and wrapped.title == alone.title
    assert wrapped.inside == []
    top, first = wrapped.sizes()[-1], wrapped.sizes()[0]
    assert osu.missing(wrapped, top, first, benchmark=f"osu_{wrapped.benchmark}") == []
    assert launch.launch_failures(text) == []  # flux-shell's ERROR lines are no launch failure


@pytest.mark.parametrize("path", SINGLE, ids=lambda p: p.name)
def test_a_line_inside_the_table_is_not_ignored(path):
    lines = path.read_text().splitlines(keepends=True)
    rows = [i for i, x in enumerate(lines) if re.match(r"^\d+\s+[\d.]+", x)]
    text = "".join([*lines[:rows[5]], "real\t0m3.214s\n", *lines[rows[5]:]])
    result = osu.parse_osu(text)
    problems = osu.missing(result, result.sizes()[-1], result.sizes()[0])
    assert problems == [f"osu_{result.benchmark}: a line inside its table that is not OSU's: "
                        "'real\\t0m3.214s'"]


def test_two_runs_in_one_output_are_refused_unless_asked_for():
    text = read_wrapped("osu_allreduce-5.8-echo-lines-two-runs-azure-cyclecloud.txt")
    with pytest.raises(ParseError, match=r"2 OSU runs in one output .*which one is the run's"):
        osu.parse_osu(text)
    first, second = osu.parse_osu_all(text)  # a family that ran two asks for both
    assert (first.at(4), second.at(4)) == (227.11, 137.90)
    assert (first.at(1048576), second.at(1048576)) == (51357.86, 52498.01)
    for run in (first, second):
        assert osu.missing(run, 1 << 20, 4, benchmark="osu_allreduce") == []


def read_wrapped(name: str) -> str:
    return (WRAPPED / name).read_text()


def test_imb_lines_before_its_title_and_after_its_closing_line_are_ignored():
    text = read("imb-2021.7-pingpong-ompi4.1-local.txt")
    wrapped = ("Loading intel-oneapi-mpi/2021.7\n+ srun -N 2 IMB-MPI1 pingpong\n" + text
               + "real\t0m12.5s\n0 errors\n")
    assert imb.parse_imb(wrapped).benchmarks == imb.parse_imb(text).benchmarks
    assert imb.missing(imb.parse_imb(wrapped), "PingPong") == []


def test_imb_run_printed_twice_is_refused():
    text = read("imb-2021.7-pingpong-ompi4.1-local.txt")
    with pytest.raises(ParseError, match=r"2 IMB runs in one output"):
        imb.parse_imb(text + text)


def test_perftest_lines_after_its_closing_rule_are_ignored_and_a_second_run_refused():
    text = read("ib_write_bw-roce-uc-qp2-gbits.txt")
    wrapped = text + "Connection type : RC\nJob 42 done: 0 errors\n"
    assert perftest.parse_perftest(wrapped).rows == perftest.parse_perftest(text).rows
    assert perftest.parse_perftest(wrapped).transport == "UC"
    with pytest.raises(ParseError, match=r"two perftest runs in one output"):
        perftest.parse_perftest(text + text)


def test_txrx_log_printed_twice_is_refused():
    text = read("seed000-txrx-1pair.txt")
    with pytest.raises(ParseError, match=r"repeats a line"):
        txrx.parse_txrx(text + text)


# -- a last line without its newline is a cut, for every parser here ---------------------------
CUT_LAST_LINE = [
    ("osu", "osu_bw-7.4-ompi4.1-local.txt",
     lambda t: osu.missing(osu.parse_osu(t))),
    ("imb", "imb-2021.7-pingpong-ompi4.1-local.txt",
     lambda t: imb.missing(imb.parse_imb(t), "PingPong")),
    ("perftest", "ib_write_bw-roce-uc-qp2-gbits.txt",
     lambda t: perftest.missing(perftest.parse_perftest(t))),
    ("txrx", "seed000-txrx-1pair.txt",
     lambda t: txrx.missing(txrx.parse_txrx(t), 1, 1)),
    ("rdma_link", "rdma-link-show-irdma-e810.txt",
     lambda t: rdma_link.missing(rdma_link.parse_rdma_link(t), t)),
]


@pytest.mark.parametrize(("tool", "name", "judge"), CUT_LAST_LINE, ids=[c[0] for c in CUT_LAST_LINE])
def test_a_whole_output_without_its_last_newline_is_cut(tool, name, judge):
    text = read(name)
    assert judge(text) == []
    problems = judge(text.rstrip("\n"))
    assert any("mid-line" in p or "cut short" in p for p in problems), problems


def test_rdma_link_cut_state_is_not_read_as_a_state():
    text = read("rdma-link-show-irdma-e810.txt")
    cut = text[: text.rindex("LINK_UP") + 4]  # ... physical_state LINK
    assert rdma_link.missing(rdma_link.parse_rdma_link(cut), cut) == [
        "rdma link: output ends mid-line (cut short)",
        "rdma link irdma1/1: unknown physical_state 'LINK' (cut short?)",
    ]


def test_launch_status_cut_mid_line_is_no_status():
    text = "fabrictest: exit status of the launch: 13\n"
    assert launch.exit_statuses(text) == {"the launch": 13}
    assert launch.exit_statuses(text[:-2]) == {}  # "...: 1" is not status 1
    (failure,) = launch.launch_failures(text[:-2])
    assert failure.kind == "cut" and "cut short" in launch.describe([failure])
    srun = "srun: error: node03: tasks 0-3: Exited with exit code 13"
    (failure,) = launch.launch_failures(srun[:-1])  # "... exit code 1" is not code 1
    assert failure.kind == "cut" and failure.code is None
    assert launch.launch_failures(srun + "\n")[0].code == 13

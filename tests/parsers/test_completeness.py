"""Completeness: every recorded whole output is whole, and the same output cut short anywhere
before its last essential line (a row, a closing line) is not, or is refused with ParseError.
Also: text that is not the tool's output raises ParseError and never another exception."""

from __future__ import annotations

import math
import re

import pytest
from recordings import read, recordings

from fabrictest.parsers import (
    ParseError,
    alltomany,
    bisection,
    ibv_devinfo,
    imb,
    osu,
    perftest,
    rdma_link,
    sinfo,
    txrx,
)
from fabrictest.parsers.health import missing as health_missing
from fabrictest.parsers.health import parse_health

MiB4 = 1 << 22

# the largest size each OSU recording's command asked for (4 MiB: OSU's default)
OSU_MAX = {
    "osu_latency-7.2-single-size-internode-ib-aion.txt": (8192, 8192),  # -m 8192:8192
    "osu_bw-7.2-single-size-internode-ib-aion.txt": (1 << 20, 1 << 20),  # -m 1048576:1048576
    "osu_get_bw-7.4-ompi4.1-vcluster-osc-pt2pt.txt": (1, 65536),  # the quick profile
    "osu_alltoall-7.5.1-36ranks-one-node-ompi5-oci.txt": (1, 1 << 26),  # -m 1:67108864
    "osu_allreduce-7.5.1-int-144ranks-ompi5-ucx-roce-oci.txt": (4, 1 << 28),  # -m 4:268435456
}
# not whole on purpose: no rows (MPI_ERR_WIN), OSU 7.4's own validation failing (the run stops)
NOT_WHOLE = ("no-rows", "-fails")
OSU_FILES = [p for p in recordings("osu_*.txt") if not any(m in p.name for m in NOT_WHOLE)]
OSU_FILES += recordings("seed003-osu_*.txt")
IMB_MAX = {"seed001-imb2018-pingpong-25gbe-glued-command.txt": 1 << 28,
           "seed001-imb2018-pingpong-ib-ucx.txt": 1 << 28}
# -msglog a:b of the public collective runs: (2**a, 2**b)
IMB_RANGE = {"imb-2021.7-alltoall-np36-msglog25-ompi5-oci.txt": (1 << 25, 1 << 25),
             "imb-2021.7-allreduce-np144-msglog28-ompi5-ucx-roce-oci.txt": (1 << 28, 1 << 28),
             "imb-2021.2-allreduce-np144-msglog27-28-impi-roce-oci.txt": (1 << 27, 1 << 28)}
IMB_FILES = recordings("imb-*.txt") + recordings("seed001-imb*.txt")
PERFTEST_FILES = recordings("ib_*_bw-*.txt")
# really cut: the author's copy stops at the 512 B row / the author cut the closing rule
PERFTEST_CUT = {"ib_write_bw-roce-qp8-gbits-truncated.txt", "ib_write_bw-roce-cx6dx-gbits-q1.txt"}
TXRX_LAYOUT = {  # nrx, nlink of the SEREN tx/rx notes' demos
    "seed000-txrx-10pairs-same-node.txt": (10, 10),
    "seed000-txrx-1pair.txt": (1, 1),
    "seed000-txrx-1rx-2tx.txt": (1, 2),
    "seed000-txrx-2pairs.txt": (2, 2),
    # ours, --buffer cuda on an H100 (tests/data/real-outputs-local/SOURCES.md)
    "txrx-cuda-ompi4.1-h100.txt": (1, 1),
    "txrx-cuda-increment-ompi4.1-h100.txt": (1, 2),
    "txrx-cuda-many-to-one-reframe-local-h100.txt": (1, 2),
}


def _line_cuts(text: str, upto: int) -> list[str]:
    """``text`` cut at every line end before offset ``upto``, and inside the line ending
    there (mid-line: the last character dropped)."""
    cuts = []
    end = text.find("\n")
    while 0 <= end < upto:
        cuts.append(text[: end + 1])
        end = text.find("\n", end + 1)
    last_line_end = text.rfind("\n", 0, upto)
    cuts.append(text[: upto - 1] if upto - 1 > last_line_end + 1 else text[: upto - 2])
    return cuts


def _end_of_last(text: str, predicate) -> int:
    """Offset just after the last line satisfying ``predicate`` (its newline excluded)."""
    offset, end = 0, 0
    for line in text.splitlines(keepends=True):
        if predicate(line):
            end = offset + len(line.rstrip("\n"))
        offset += len(line)
    assert end, "no essential line found"
    return end


def _incomplete(check) -> bool:
    try:
        return bool(check())
    except ParseError:
        return True


# -- OSU ---------------------------------------------------------------------------------------


def _osu_expected(name: str) -> tuple[int | None, int | None]:
    """(first, top) the recording's command asked for; None: OSU's defaults (the first size
    printed, 0 or 1, or a collective's datatype; 4 MiB, 1 MiB for a collective)."""
    return OSU_MAX.get(name, (None, None))


@pytest.mark.parametrize("path", OSU_FILES, ids=lambda p: p.name)
def test_osu_recordings_are_whole(path):
    lo, hi = _osu_expected(path.name)
    for res in osu.parse_osu_all(path.read_text()):
        assert osu.missing(res, max_size=hi, min_size=lo) == []


@pytest.mark.parametrize("path", OSU_FILES, ids=lambda p: p.name)
def test_osu_cut_anywhere_is_not_whole(path):
    text = path.read_text()
    lo, hi = _osu_expected(path.name)
    upto = _end_of_last(text, lambda line: line.lstrip()[:1].isdigit())  # barrier: indented
    for cut in _line_cuts(text, upto):
        assert _incomplete(lambda c=cut: osu.missing(osu.parse_osu_all(c)[-1], hi, lo)), cut[-80:]


def test_osu_message_says_what_is_missing():
    head = "".join(read("osu_latency-7.4-ompi4.1-local.txt").splitlines(keepends=True)[:7])
    assert osu.missing(osu.parse_osu(head), name="osu_latency") == [
        "osu_latency: 3 of 23 sizes; last 4 B, expected up to 4 MiB"
    ]
    whole = osu.parse_osu(read("osu_bw-7.4-ompi4.1-local.txt"))
    # a run of 64 KiB judged against a request of 4 MiB, and the reverse
    assert osu.missing(whole, max_size=65536, min_size=1)[0].startswith("osu_bw: 23 sizes")


# -- IMB ---------------------------------------------------------------------------------------


def _imb_benchmark(text: str) -> str:
    return imb.parse_imb(text).benchmarks[0].name


def _imb_range(name: str) -> tuple[int, int]:
    return IMB_RANGE.get(name, (1, IMB_MAX.get(name, MiB4)))


@pytest.mark.parametrize("path", IMB_FILES, ids=lambda p: p.name)
def test_imb_recordings_are_whole(path):
    text = path.read_text()
    lo, hi = _imb_range(path.name)
    assert imb.missing(imb.parse_imb(text), _imb_benchmark(text), hi, lo) == []


@pytest.mark.parametrize("path", IMB_FILES, ids=lambda p: p.name)
def test_imb_cut_anywhere_is_not_whole(path):
    text = path.read_text()
    bench, (lo, top) = _imb_benchmark(text), _imb_range(path.name)
    upto = _end_of_last(text, lambda line: "All processes entering MPI_Finalize" in line)
    for cut in _line_cuts(text, upto):
        assert _incomplete(lambda c=cut: imb.missing(imb.parse_imb(c), bench, top, lo)), cut[-80:]


def test_imb_without_finalize_or_with_a_short_block():
    text = read("imb-2021.7-pingpong-ompi4.1-local.txt")
    no_end = text[: text.index("# All processes entering MPI_Finalize")]
    assert imb.missing(imb.parse_imb(no_end), "PingPong") == [
        "IMB did not finish: no '# All processes entering MPI_Finalize' line"
    ]
    assert imb.missing(imb.parse_imb(text), "Uniband") == [
        "Uniband: IMB was asked to run PingPong", "Uniband: no block"]
    # the requested -msglog 28 against a run of -msglog 22
    assert "24 of 30 sizes; last 4 MiB, expected up to 256 MiB" in imb.missing(
        imb.parse_imb(text), "PingPong", 1 << 28
    )[0]


# -- perftest ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PERFTEST_FILES, ids=lambda p: p.name)
def test_perftest_complete_unless_really_cut(path):
    res = perftest.parse_perftest(path.read_text())
    assert res.complete == (path.name not in PERFTEST_CUT)
    assert (perftest.missing(res) == []) == (path.name not in PERFTEST_CUT)


def test_perftest_abort_banner_is_not_its_closing_rule():
    text = read("ib_write_bw-roce-qp8-gbits-truncated.txt")
    banner = "-" * 74 + "\nMPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD\n" + "-" * 74
    res = perftest.parse_perftest(text + banner + "\n")
    assert not res.complete
    assert perftest.missing(res) == [
        "perftest RDMA_Write BW: no closing rule after the rows (cut short)"
    ]


def test_perftest_cut_before_its_closing_rule():
    text = read("ib_write_bw-roce-uc-qp2-gbits.txt")
    upto = len(text.rstrip("\n"))
    for cut in _line_cuts(text, upto):
        assert _incomplete(lambda c=cut: perftest.missing(perftest.parse_perftest(c))), cut[-80:]
    assert perftest.missing(perftest.parse_perftest(text), msg_size=65536) == []
    assert perftest.missing(perftest.parse_perftest(text), msg_size=1000) == [
        "perftest RDMA_Write BW: no row for 1000 B"
    ]


# -- bisection, all-to-many ----------------------------------------------------------------------


def test_bisection_seed_is_whole_and_cuts_are_not():
    text = read("seed003-bisection-np4.txt")
    assert bisection.missing(bisection.parse_bisection(text), ranks=4) == []
    assert bisection.missing(bisection.parse_bisection(text), ranks=8) == [
        "bisection: rows report [4] ranks, expected 8",
        "bisection: 'Number of Process 4', expected 8",
    ]
    upto = _end_of_last(text, lambda line: "Aggregate BW" in line)
    for cut in _line_cuts(text, upto):
        assert _incomplete(lambda c=cut: bisection.missing(bisection.parse_bisection(c))), cut[-80:]
    head = text[: text.index("4 Ranks, Msg Size:      8192")]
    assert bisection.missing(bisection.parse_bisection(head)) == [
        "bisection: 3 of 12 sizes; last 4 KiB, expected up to 2 MiB"
    ]


def test_bisection_device_buffers_whole_and_cuts_are_not():
    text = read("bisection_bw-cuda-device-ompi4.1-h100.txt")  # -s 4k -e 4m, 2 ranks
    sizes = [4096 << k for k in range(11)]
    assert bisection.missing(bisection.parse_bisection(text), ranks=2, sizes=sizes) == []
    upto = _end_of_last(text, lambda line: "Aggregate BW" in line)
    for cut in _line_cuts(text, upto):
        assert _incomplete(lambda c=cut: bisection.missing(bisection.parse_bisection(c),
                                                           sizes=sizes)), cut[-80:]


def test_alltomany_device_buffers_whole_and_cuts_are_not():
    text = read("alltomany-cuda-device-ompi4.1-h100.txt")  # -p 2 -b 1k -n 50 -r 3, 4 ranks
    whole = alltomany.parse_alltomany(text)
    assert alltomany.missing(whole, iterations=50, nprocs=4, repetitions=3) == []
    upto = _end_of_last(text, lambda line: set(line.strip()) == {"-"})
    for cut in _line_cuts(text, upto):
        got = alltomany.parse_alltomany_all(cut) if "Total number of MPI" in cut else []
        assert not got or alltomany.missing(got[-1], iterations=50, repetitions=3), cut[-80:]


def test_alltomany_seed_blocks_are_whole_and_cuts_are_not():
    text = read("seed004-alltomany-4runs.txt")
    blocks = alltomany.parse_alltomany_all(text)
    assert [alltomany.missing(b, iterations=n, nprocs=512) for b, n in
            zip(blocks, (2, 8, 16, 32), strict=True)] == [[]] * 4
    upto = _end_of_last(text, lambda line: set(line.strip()) == {"-"})
    for cut in _line_cuts(text, upto):
        got = alltomany.parse_alltomany_all(cut) if "Total number of MPI" in cut else []
        assert len(got) < 4 or alltomany.missing(got[-1], iterations=32), cut[-80:]
    assert alltomany.missing(blocks[0], iterations=4) == [
        "all-to-many: 2 iterations, expected 4"
    ]


# -- tx/rx -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TXRX_LAYOUT))
def test_txrx_seeds_are_whole_and_cuts_are_not(name):
    text = read(name)
    nrx, nlink = TXRX_LAYOUT[name]
    assert txrx.missing(txrx.parse_txrx(text), nrx, nlink) == []
    upto = _end_of_last(text, lambda line: " receiver from transmitter " in line
                        or " transmitter " in line and " is " in line)
    for cut in _line_cuts(text, upto):
        assert _incomplete(lambda c=cut: txrx.missing(txrx.parse_txrx(c), nrx, nlink)), cut[-80:]


def test_txrx_counts_that_are_not_counts_raise_parse_error():
    for value in ("nan", "inf", "1.5", "-3"):
        text = f"INFO:__main__:Rank 0 receiver from transmitter 0, message missed is {value}\n"
        with pytest.raises(ParseError, match="message count"):
            txrx.parse_txrx(text)


def test_txrx_nan_rate_is_not_whole():
    text = re.sub(r"data rate is [\d.]+ Gbps", "data rate is nan Gbps", read("seed000-txrx-1pair.txt"),
                  count=1)
    rep = txrx.parse_txrx(text)
    assert any(math.isnan(s.gbps) for s in rep.streams)
    assert txrx.missing(rep, 1, 1) == ["receiver 0 <- transmitter 0: data rate not a finite number"]


# -- fabric-health, ibv_devinfo, sinfo -----------------------------------------------------------


def test_health_lines_whole_per_node():
    node = ("HEALTH n01 mlx5_0/1 port_state: PASS PORT_ACTIVE\n"
            "HEALTH n01 -/- gc_thresh1: PASS 1024 >= 10\n")
    whole = node + "HEALTH summary: 2 checks, 0 failed\n"
    assert health_missing(parse_health(whole), 1) == []
    assert health_missing(parse_health(whole), 2) == ["fabric-health: 1 of 2 nodes reported"]
    assert health_missing(parse_health(node), 1) == [
        "fabric-health: 0 'HEALTH summary' lines for 1 nodes (a node stopped before its summary)"
    ]
    short = node.splitlines(keepends=True)[0] + "HEALTH summary: 2 checks, 0 failed\n"
    assert health_missing(parse_health(short), 1) == [
        "fabric-health: the summaries count 2 checks, 1 check lines printed"
    ]


@pytest.mark.parametrize("path", recordings("ibv_devinfo*.txt"), ids=lambda p: p.name)
def test_ibv_devinfo_recordings_whole_and_cut_blocks_not(path):
    text = path.read_text()
    assert ibv_devinfo.missing(ibv_devinfo.parse_ibv_devinfo(text), text) == []
    lines = text.splitlines(keepends=True)
    last_port = max(i for i, line in enumerate(lines) if line.strip().startswith("port:"))
    # cut inside the last port block, before its link_layer (or, with -v, its phys_state)
    essential = "phys_state" if "max_qp" in text else "link_layer"
    stop = next(i for i in range(last_port, len(lines)) if essential in lines[i])
    for k in range(last_port + 1, stop):
        cut = "".join(lines[:k])
        assert ibv_devinfo.missing(ibv_devinfo.parse_ibv_devinfo(cut), cut), lines[k - 1]
    # no port block at all
    header = "".join(lines[: next(i for i, x in enumerate(lines) if "port:" in x)])
    assert ibv_devinfo.missing(ibv_devinfo.parse_ibv_devinfo(header), header)


def test_ibv_devinfo_gid_cut_mid_line():
    text = read("ibv_devinfo-v-roce-cx4lx-mofed4-spaces.txt").rstrip("\n")
    cut = text[:-6]  # GID[  3]: 0000:...:ffff:c0a8:f  (no newline)
    problems = ibv_devinfo.missing(ibv_devinfo.parse_ibv_devinfo(cut), cut)
    assert "ibv_devinfo: output ends mid-line (cut short)" in problems
    assert any("GID[3] is not a whole address" in p for p in problems), problems


def test_sinfo_header_only_raises_parse_error():
    for header in ("PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n",
                   "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT "
                   "AVAIL_FE REASON\n"):
        with pytest.raises(ParseError, match="no rows"):
            sinfo.parse_sinfo(header)


# -- never another exception on text that is not the tool's output ------------------------------

PARSERS = {
    "osu": osu.parse_osu_all,
    "imb": imb.parse_imb,
    "perftest": perftest.parse_perftest,
    "txrx": txrx.parse_txrx,
    "alltomany": alltomany.parse_alltomany_all,
    "bisection": bisection.parse_bisection,
    "ibv_devinfo": ibv_devinfo.parse_ibv_devinfo,
    "rdma_link": rdma_link.parse_rdma_link,
    "sinfo": sinfo.parse_sinfo,
    "health": parse_health,
}
NOT_OUTPUT = [
    "",
    "\n\n",
    "Segmentation fault (core dumped)\n",
    "-" * 74 + "\nMPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\n" + "-" * 74 + "\n",
    "nan inf -1 1e999\n",
    "\x00\x01binary\xff\n",
    "[1, 2]\n",
    '[{"ifname": "mlx5_0", "port": "x"}]\n',
]


@pytest.mark.parametrize("name", sorted(PARSERS))
@pytest.mark.parametrize("text", NOT_OUTPUT, ids=range(len(NOT_OUTPUT)))
def test_not_the_tools_output_raises_parse_error_only(name, text):
    try:
        PARSERS[name](text)
    except ParseError:
        pass  # the one exception allowed

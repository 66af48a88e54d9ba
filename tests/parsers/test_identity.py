"""Every figure is what it claims to be (issue 27): the parsers' identity rules on the
issue's examples, each a real recording changed the way the example says. The same outputs
through ReFrame (a stand-in `osu_bw`) are in tests/hostile/cases_identity.py."""

from __future__ import annotations

import re

import pytest
from recordings import read

from fabrictest.parsers import ParseError, imb, osu, perftest, physical, txrx

BW = "osu_bw-7.4-ompi4.1-local.txt"
LOCAL_GBPS = 40_000  # the local system's line rate: its shared memory's ceiling


def _rows(text: str, factor: float) -> str:
    return re.sub(r"^(\d+ +)([\d.]+)$", lambda m: f"{m[1]}{float(m[2]) * factor:.2f}", text,
                  flags=re.M)


def _osu_bw(text: str) -> list[str]:
    """What OsuPt2PtTest%benchmark=osu_bw asks of its output."""
    result = osu.parse_osu(text)
    return osu.missing(result, benchmark="osu_bw") + osu.above_line_rate(result, LOCAL_GBPS)


def test_a_healthy_osu_bw_is_whole():
    assert _osu_bw(read(BW)) == []


def test_osu_latency_table_for_osu_bw():
    problems = _osu_bw(read("osu_latency-7.4-ompi4.1-local.txt"))
    assert problems[:2] == [
        "osu_bw: the output is 'OSU MPI Latency Test v7.4' (osu_latency), not osu_bw",
        "osu_bw: the column header says 'Avg Latency(us)' (us), expected MB/s",
    ]


def test_bi_directional_title_for_osu_bw():
    text = read(BW).replace("# OSU MPI Bandwidth Test", "# OSU MPI Bi-Directional Bandwidth Test")
    assert _osu_bw(text) == ["osu_bw: the output is 'OSU MPI Bi-Directional Bandwidth Test v7.4' "
                             "(osu_bibw), not osu_bw"]


def test_the_table_twice_second_at_a_hundredth():
    text = read(BW) + _rows(read(BW), 0.01 / 12063.60)
    with pytest.raises(ParseError, match=r"^2 OSU runs in one output"):
        _osu_bw(text)


def test_the_rows_twice_without_a_second_title():
    lines = read(BW).splitlines(keepends=True)
    text = "".join(lines) + "".join(lines[3:])
    with pytest.raises(ParseError, match=r"prints size 1 B twice"):
        _osu_bw(text)


def test_a_4_mib_row_of_a_hundredth_beside_a_healthy_peak():
    text = re.sub(r"^4194304 +12063\.60$", "4194304                 0.01", read(BW), flags=re.M)
    assert _osu_bw(text) == [
        "osu_bw: 0.01 MB/s at 4 MiB is below 0.01 of the 10500.9 MB/s the smaller sizes reach (at "
        "256 KiB): a bandwidth that collapses at the largest sizes is a fault, not noise"]


def test_a_dip_in_the_middle_of_the_curve_is_not_a_fault():
    # the recording itself falls from 5934.62 to 1381.68 MB/s between 2 and 4 KiB
    assert osu.missing(osu.parse_osu(read(BW))) == []


def test_1e12_mb_per_s():
    text = re.sub(r"^4194304 +12063\.60$", "4194304        1000000000000.00", read(BW),
                  flags=re.M)
    assert _osu_bw(text) == [
        "osu_bw at 4 MiB: 8e+09 Gb/s (1e+12 MB/s) is above 40000 Gb/s line rate x 1.1 margin = "
        "44000 Gb/s: impossible"]


def test_the_line_rate_bounds_each_benchmark_by_its_directions_and_links():
    bw = osu.parse_osu(read(BW))  # peak 12755.25 MB/s = 102 Gb/s
    assert osu.above_line_rate(bw, 100) == []  # within 100 Gb/s x 1.1
    assert osu.above_line_rate(bw, 25) == [
        "osu_bw at 1 KiB: 42.91 Gb/s (5363.26 MB/s) is above 25 Gb/s line rate x 1.1 margin = "
        "27.5 Gb/s: impossible (and 10 more sizes)"]
    bibw = osu.parse_osu(read("osu_bibw-7.4-ompi4.1-local.txt"))  # 24755 MB/s = 198 Gb/s
    assert osu.above_line_rate(bibw, 100) == []  # both directions: 2 x 100 x 1.1
    assert "2 directions x 90 Gb/s line rate" in osu.above_line_rate(bibw, 90)[0]
    mbw = osu.parse_osu(read("osu_mbw_mr-5.7-pairs620-slingshot.txt"))  # 378906 MB/s, 31 pairs
    assert osu.above_line_rate(mbw, 100, links=31) == []
    assert osu.above_line_rate(mbw, 100, links=1) != []
    latency = osu.parse_osu(read("osu_latency-7.4-ompi4.1-local.txt"))
    assert osu.above_line_rate(latency, 0.001) == []  # a latency is no rate


@pytest.mark.parametrize(("old", "new", "unit"), [("(MB/s)", "(GB/s)", "GB/s"),
                                                   ("(MB/s)", "(Mbit/s)", "Mbit/s")])
def test_another_unit_in_the_header(old, new, unit):
    text = read(BW).replace(f"Bandwidth {old}", f"Bandwidth {new}")
    assert _osu_bw(text) == [f"osu_bw: the column header says 'Bandwidth {new}' ({unit}), "
                             "expected MB/s"]


def test_a_latency_in_ms_is_not_read_as_us():
    text = read("osu_latency-5.3.2-mvapich2-ib.txt").replace("Latency (us)", "Latency (ms)")
    result = osu.parse_osu(text)
    assert result.unit == "ms"
    assert osu.missing(result, benchmark="osu_latency") == [
        "osu_latency: the column header says 'Latency (ms)' (ms), expected us"]


def test_a_sibling_title_before_the_rows_is_refused():
    text = read(BW).replace("# Datatype", "# OSU MPI Latency Test v7.4\n# Datatype", 1)
    with pytest.raises(ParseError, match=r"two titles before its rows"):
        osu.parse_osu(text)


def test_a_row_with_more_columns_than_the_header_is_not_a_row():
    text = read(BW).replace("8192                 3109.47", "8192                 3109.47  17")
    result = osu.parse_osu(text)
    assert 8192 not in result.sizes()
    assert "8192                 3109.47  17" in result.inside


# -- IMB -----------------------------------------------------------------------------------------
PINGPONG = "imb-2021.7-pingpong-ompi4.1-local.txt"


def test_imb_block_twice_is_refused():
    text = read(PINGPONG)
    start = text.rindex("\n#---", 0, text.index("# Benchmarking")) + 1
    block = text[start:text.index("# All processes")]
    with pytest.raises(ParseError, match=r"two PingPong blocks for 2 processes"):
        imb.parse_imb(text.replace(block, block + block))


def test_imb_row_twice_is_refused():
    text = read(PINGPONG).replace("         1024         1000         6.73       152.08\n",
                                  "         1024         1000         6.73       152.08\n"
                                  "         1024         1000      6730.00         0.15\n")
    with pytest.raises(ParseError, match=r"prints 1 KiB twice"):
        imb.parse_imb(text)


def test_imb_another_unit_in_the_header_is_not_the_benchmarks():
    text = read(PINGPONG).replace("t[usec]", "t[msec]")
    assert imb.missing(imb.parse_imb(text), "PingPong") == [
        "PingPong: the column header '#bytes #repetitions      t[msec]   Mbytes/sec' is not "
        "PingPong's"]


def test_imb_sibling_block_is_refused():
    text = read(PINGPONG).replace("# Benchmarking PingPong", "# Benchmarking PingPing")
    assert imb.missing(imb.parse_imb(text), "PingPong") == [
        "PingPong: a block of PingPing, which IMB was not asked to run",
        "PingPong: no block"]


def test_imb_rate_above_the_line_rate_and_a_collapse():
    text = read(PINGPONG)
    assert imb.above_line_rate(imb.parse_imb(text), "PingPong", 100) == []
    assert imb.above_line_rate(imb.parse_imb(text), "PingPong", 25)  # 6636 MB/s = 53 Gb/s
    collapsed = text.replace("      4194304           10      1009.73      4153.89",
                             "      4194304           10   1009730.00         4.15")
    assert imb.missing(imb.parse_imb(collapsed), "PingPong")[0].startswith(
        "PingPong: 4.15 MB/s at 4 MiB is below 0.01 of the 4929.93 MB/s the smaller sizes reach")


def test_imb_biband_counts_both_directions():
    result = imb.parse_imb(read("imb-2019u5-biband-np2-np4-ib-impi2019.txt"))
    # np=2: 9094.93 MB/s = 72.8 Gb/s over both directions of a 40 Gb/s link (2 x 40 x 1.1 = 88)
    assert [p for p in imb.above_line_rate(result, "Biband", 40) if "np=2" in p] == []
    assert imb.pairs("Biband", 4) == 2 and imb.pairs("PingPong", 4) == 1


# -- perftest ------------------------------------------------------------------------------------
UC = "ib_write_bw-roce-uc-qp2-gbits.txt"


def test_perftest_identity():
    text = read(UC)
    result = perftest.parse_perftest(text)
    assert perftest.missing(result, test="RDMA_Write BW", units="Gb/sec") == []
    send = perftest.parse_perftest(text.replace("RDMA_Write BW Test", "Send BW Test"))
    assert perftest.missing(send, test="RDMA_Write BW", units="Gb/sec") == [
        "perftest Send BW: the output is perftest's Send BW Test, not RDMA_Write BW"]
    mib = perftest.parse_perftest(text.replace("[Gb/sec]", "[MB/sec]"))
    assert perftest.missing(mib, test="RDMA_Write BW", units="Gb/sec") == [
        "perftest RDMA_Write BW: bandwidth in MB/sec, expected Gb/sec"]
    with pytest.raises(ParseError, match=r"BW peak in Gb/sec, BW average in MB/sec"):
        perftest.parse_perftest(text.replace("BW average[Gb/sec]", "BW average[MB/sec]"))


def test_perftest_row_twice_and_a_deleted_row():
    text = read(UC)
    row = " 65536      10000            98.01              98.01              0.186932\n"
    with pytest.raises(ParseError, match=r"prints 64 KiB twice"):
        perftest.parse_perftest(text.replace(row, row + row.replace("98.01 ", "9.80 ")))
    problems = perftest.missing(perftest.parse_perftest(text.replace(row, "")))
    assert problems[0].startswith("perftest RDMA_Write BW: rows of 2 B, 4 B, 8 B")


def test_perftest_average_above_the_line_rate():
    result = perftest.parse_perftest(read(UC))  # 98.03 Gb/s
    assert perftest.above_line_rate(result, 100) == []
    assert perftest.above_line_rate(result, 25)[0].startswith(
        "perftest RDMA_Write BW average at 1 KiB: 50.29 Gb/s (50.29 Gb/sec) is above 25 Gb/s")


# -- tx/rx ---------------------------------------------------------------------------------------
PAIR = "seed000-txrx-1pair.txt"


def test_txrx_line_twice_is_refused_not_last_wins():
    text = read(PAIR)
    line = next(x for x in text.splitlines() if "receiver from transmitter 0, data rate" in x)
    with pytest.raises(ParseError, match=r"repeats a line"):
        txrx.parse_txrx(text + line.replace("97.7", "0.01") + "\n")


@pytest.mark.parametrize("unit", ["Mbps", "GB/s", "bps"])
def test_txrx_rate_in_another_unit_is_refused(unit):
    text = read(PAIR).replace(" Gbps", f" {unit}", 1)
    with pytest.raises(ParseError, match=rf"data rate in {re.escape(unit)}, expected Gbps"):
        txrx.parse_txrx(text)


def test_txrx_rate_above_the_line_rate():
    text = read(PAIR)
    rep = txrx.parse_txrx(text)
    hosts = {(0, 0): ("seren-02", "seren-01")}
    assert txrx.above_line_rate(rep, 1, 100, 40_000, hosts) == []
    fast = txrx.parse_txrx(re.sub(r"data rate is [\d.]+ Gbps", "data rate is 1e12 Gbps", text))
    problems = txrx.above_line_rate(fast, 1, 100, 40_000, hosts)
    assert problems[0] == ("stream seren-02->seren-01 (receiver 0 <- transmitter 0) data rate: "
                           "1e+12 Gb/s is above 100 Gb/s line rate x 1.1 margin = 110 Gb/s: "
                           "impossible")
    # within one host the ceiling is the host's memory, not the link
    same = {(0, 0): ("seren-01", "seren-01")}
    assert txrx.above_line_rate(rep, 1, 100, 40_000, same) == []
    assert "shared-memory ceiling" in txrx.above_line_rate(fast, 1, 100, 40_000, same)[0]


def test_txrx_receiving_host_sum_above_the_line_rate():
    text = read("seed000-txrx-1rx-2tx.txt")  # 2 x 52 Gbps into one receiver
    rep = txrx.parse_txrx(text)
    apart = {(0, 0): ("a", "r"), (0, 1): ("b", "r")}
    assert txrx.above_line_rate(rep, 1, 100, 40_000, apart) == []  # 104 <= 110
    assert txrx.above_line_rate(rep, 1, 56, 40_000, apart)[-1].startswith(
        "r receives from other hosts: 104 Gb/s is above 56 Gb/s line rate")


def test_the_margin_and_floor_are_stated():
    assert physical.MARGIN == 1.10 and physical.TOP_FLOOR == 0.01
    assert physical.Ceiling(100, 2, 3).words() == (
        "3 links x 2 directions x 100 Gb/s line rate x 1.1 margin = 660 Gb/s")

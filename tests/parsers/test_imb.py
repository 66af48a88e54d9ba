from __future__ import annotations

import pytest
from recordings import read, recordings

from fabrictest.parsers import ParseError, imb
from fabrictest.parsers.imb import parse_imb

FILES = recordings("imb-*.txt", "real-outputs") + recordings("seed*imb*.txt", "seeds")




@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_imb_file_parses(path):
    r = parse_imb(path.read_text())
    assert r.version and r.version.startswith(("2018", "2019", "2021"))
    assert r.finalized
    assert r.benchmarks
    for b in r.benchmarks:
        assert b.nprocs >= 2 and b.rows
        assert b.rows[0].bytes == 0 and b.rows[0].repetitions == 1000
        if b.columns == imb.COLLECTIVE_COLUMNS:
            assert all(row.t_avg > 0 for row in b.rows[1:])  # a collective: times only
        else:
            assert b.peak_bandwidth() > 0
        assert [row.bytes for row in b.rows] == sorted(row.bytes for row in b.rows)


def test_seed001_infiniband():
    r = parse_imb(read("seed001-imb2018-pingpong-ib-ucx.txt"))
    assert r.version == "2018"
    pp = r.benchmark("PingPong", nprocs=2)
    assert pp.latency_at(0) == 1.81
    assert pp.peak_bandwidth() == 12333.91
    assert pp.largest().bytes == 268435456 and pp.largest().mbytes_per_sec == 12239.18
    assert pp.row(65536).repetitions == 640
    assert len(pp.rows) == 30


def test_seed001_ethernet_with_glued_command_line():
    r = parse_imb(read("seed001-imb2018-pingpong-25gbe-glued-command.txt"))
    pp = r.benchmark("pingpong")
    assert pp.latency_at(0) == 16.20
    assert pp.peak_bandwidth() == 2482.27


def test_title_variants():
    assert parse_imb(read("imb-2018-pingpong-azure-hc44rs-edr-impi2018.txt")).title == (
        "Intel (R) MPI Benchmarks 2018, MPI-1 part"
    )
    assert parse_imb(read("imb-2019u5-pingpong-ib-impi2019.txt")).version == "2019 Update 5"
    assert parse_imb(read("imb-2019u6-uniband-np2-np4-roce-ompi3.txt")).version == "2019 Update 6"
    assert parse_imb(read("imb-2021.3-pingpong-azure-hbv3-ib-hpcx.txt")).version == "2021.3"


def test_pingpong_values():
    r = parse_imb(read("imb-2018-pingpong-azure-hc44rs-edr-impi2018.txt"))
    pp = r.benchmark("PingPong")
    assert (pp.latency_at(0), pp.peak_bandwidth(), pp.row(4194304).t_usec) == (
        1.97,
        5523.54,
        1156.95,
    )
    r = parse_imb(read("imb-2021.3-pingpong-azure-hbv3-ib-hpcx.txt"))
    assert r.benchmark("PingPong").peak_bandwidth() == 10526.36
    assert r.benchmark("PingPong").latency_at(0) == 2.24


def test_npmin_blocks():
    r = parse_imb(read("imb-2019u5-biband-np2-np4-ib-impi2019.txt"))
    assert [(b.name, b.nprocs, b.waiting) for b in r.benchmarks] == [
        ("Biband", 2, 2),
        ("Biband", 4, 0),
    ]
    np2 = r.benchmark("Biband", nprocs=2)
    assert np2.row(0).msg_per_sec == 4460347 and np2.row(0).t_usec is None
    assert np2.peak_bandwidth() == 9094.93
    assert r.benchmark("Biband").nprocs == 4  # the largest np by default
    assert r.benchmark("Biband").peak_bandwidth() == 17798.29
    with pytest.raises(KeyError):
        np2.latency_at(0)
    uni = parse_imb(read("imb-2019u6-uniband-np2-np4-roce-ompi3.txt"))
    assert uni.benchmark("Uniband", nprocs=2).peak_bandwidth() == 16250.96
    assert uni.benchmark("Uniband", nprocs=4).row(4194304).mbytes_per_sec == 5786.22
    with pytest.raises(KeyError):
        uni.benchmark("PingPong")


def test_collective_columns():
    text = (
        "#----------------------------------------------------------------\n"
        "#    Intel(R) MPI Benchmarks 2021.3, MPI-1 part\n"
        "#----------------------------------------------------------------\n"
        "#----------------------------------------------------------------\n"
        "# Benchmarking Allreduce \n# #processes = 4 \n"
        "#----------------------------------------------------------------\n"
        "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n"
        "            0         1000         0.03         0.04         0.03\n"
        "            4         1000         1.10         1.50         1.30\n"
    )
    b = parse_imb(text).benchmark("Allreduce", nprocs=4)
    assert b.row(4).t_avg == 1.30 and b.row(4).t_max == 1.50 and b.latency_at(4) == 1.30
    assert b.slowest_at(4) == 1.50  # the slowest rank's time (ImbTest's latency_large_max)


def test_slowest_rank_of_a_recorded_allreduce():
    r = parse_imb(read("imb-2021.7-allreduce-np2-ompi4.1-local.txt"))
    b = r.benchmark("Allreduce")
    assert (b.latency_at(1048576), b.slowest_at(1048576)) == (3672.07, 3688.21)
    pingpong = parse_imb(read("imb-2021.7-pingpong-ompi4.1-local.txt"))
    with pytest.raises(KeyError, match="no t_max column"):
        pingpong.benchmark("PingPong").slowest_at(0)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "#------\n#    Intel(R) MPI Benchmarks 2019 Update 5, MPI-1 part\n#-----\n# Benchmarking PingPong\n"
        "# #processes = 2\n       #bytes #repetitions      t[usec]   Mbytes/sec\n",
        "# OSU MPI Latency Test v5.3.2\n# Size          Latency (us)\n0    1.07\n",
    ],
    ids=["empty", "header-only", "wrong-tool"],
)
def test_not_imb_raises(text):
    with pytest.raises(ParseError):
        parse_imb(text)


def test_imb_2019_more_systems():
    """An Intel MPI startup warning before the banner is not part of the table; one
    `#processes = 2` Uniband block on its own is whole."""
    warned = parse_imb(read("imb-2019u6-pingpong-ib-impi2019-startup-warning-csd3.txt"))
    pp = warned.benchmark("PingPong")
    assert (warned.version, pp.latency_at(0), pp.row(4194304).t_usec) == (
        "2019 Update 6", 1.09, 347.52)
    roce = parse_imb(read("imb-2019u5-pingpong-roce-ompi4-alaska.txt")).benchmark("PingPong")
    assert (roce.latency_at(0), roce.row(4194304).mbytes_per_sec) == (2.07, 3043.13)
    uni = parse_imb(read("imb-2019u5-uniband-np2-roce-impi2019-alaska.txt"))
    assert [(b.name, b.nprocs) for b in uni.benchmarks] == [("Uniband", 2)]
    assert uni.benchmarks[0].row(4194304).msg_per_sec == 684


def test_zero_repetitions_measured_nothing():
    """issue 40: a row of ``#repetitions 0`` is refused (IMB times at least one)."""
    name = "imb-2018-pingpong-azure-hc44rs-edr-impi2018.txt"
    row = "            0         1000         1.97         0.00"
    assert row in read(name)
    assert imb.missing(parse_imb(read(name)), "PingPong") == []
    text = read(name).replace(row, "            0            0         1.97         0.00")
    assert "PingPong: #repetitions 0 at 0 B: nothing was measured" in imb.missing(
        parse_imb(text), "PingPong")

"""Parsers on our own recordings of OSU 7.4 and IMB 2021.7 (Open MPI 4.1), run by the ReFrame
tests on `local` and `vcluster` (tests/data/real-outputs-local/SOURCES.md)."""

from __future__ import annotations

import pytest
from recordings import DATA, read

from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.imb import parse_imb
from fabrictest.parsers.osu import parse_osu

LOCAL = DATA / "real-outputs-local"
SIZES_4M = [2**i for i in range(23)]  # 1 .. 4 MiB, OSU 7.4's default range (no size 0)




def test_every_local_recording_is_listed_and_parsed():
    names = sorted(p.name for p in LOCAL.glob("*.txt"))
    sources = (LOCAL / "SOURCES.md").read_text()
    assert len(names) >= 10
    for name in names:
        assert f"`{name}`" in sources, name
        assert name.startswith(("osu_", "imb-", "congestion-", "gpcnet-", "alltomany-",
                                "bisection_bw-", "txrx-", "lldpctl-")), name


@pytest.mark.parametrize(
    ("name", "benchmark", "unit"),
    [
        ("osu_latency-7.4-ompi4.1-local.txt", "latency", "us"),
        ("osu_bw-7.4-ompi4.1-local.txt", "bw", "MB/s"),
        ("osu_bibw-7.4-ompi4.1-local.txt", "bibw", "MB/s"),
        ("osu_get_bw-7.4-ompi4.1-local.txt", "get_bw", "MB/s"),
    ],
)
def test_osu_74_pt2pt(name, benchmark, unit):
    res = parse_osu(read(name))
    assert res.version == "7.4"
    assert res.benchmark == benchmark
    assert res.unit == unit
    assert res.datatype == "MPI_CHAR"
    assert res.sizes() == SIZES_4M
    assert res.validated is None
    assert all(row.value > 0 for row in res.rows)


def test_osu_74_values():
    assert parse_osu(read("osu_latency-7.4-ompi4.1-local.txt")).at(1) == pytest.approx(0.16)
    assert parse_osu(read("osu_bw-7.4-ompi4.1-local.txt")).peak() == pytest.approx(12755.25)
    assert parse_osu(read("osu_bibw-7.4-ompi4.1-local.txt")).peak() == pytest.approx(24755.17)
    get = parse_osu(read("osu_get_bw-7.4-ompi4.1-local.txt"))
    assert get.window_creation == "MPI_Win_allocate"
    assert get.synchronization == "MPI_Win_flush"
    assert get.peak() == pytest.approx(34826.19)


def test_osu_74_mbw_mr():
    res = parse_osu(read("osu_mbw_mr-7.4-ompi4.1-local.txt"))
    assert res.benchmark == "mbw_mr"
    assert (res.pairs, res.window_size) == (1, 64)
    assert res.sizes() == SIZES_4M
    assert res.rows[0].extra["messages_per_s"] == pytest.approx(11319800.28)
    assert res.peak() == pytest.approx(13387.16)


def test_osu_74_get_bw_vcluster():
    res = parse_osu(read("osu_get_bw-7.4-ompi4.1-vcluster-osc-pt2pt.txt"))
    assert res.benchmark == "get_bw"
    assert res.sizes() == [2**i for i in range(17)]  # -m 1:65536
    assert 20 < res.peak() < 25  # 200 Mbit/s link
    # Open MPI's osc/rdma over btl/tcp: title and header, then MPI_ERR_WIN on stderr
    with pytest.raises(ParseError, match="no result rows"):
        parse_osu(read("osu_get_bw-7.4-ompi4.1-vcluster-osc-rdma-no-rows.txt"))


IMB_SIZES = [0] + [2**i for i in range(23)]  # -msglog 22


@pytest.mark.parametrize(
    ("name", "benchmark", "columns"),
    [
        ("imb-2021.7-pingpong-ompi4.1-local.txt", "PingPong", ["t_usec", "mbytes_per_sec"]),
        ("imb-2021.7-uniband-ompi4.1-local.txt", "Uniband", ["mbytes_per_sec", "msg_per_sec"]),
        ("imb-2021.7-biband-ompi4.1-local.txt", "Biband", ["mbytes_per_sec", "msg_per_sec"]),
    ],
)
def test_imb_2021_7(name, benchmark, columns):
    res = parse_imb(read(name))
    assert res.version == "2021.7"
    assert res.title == "Intel(R) MPI Benchmarks 2021.7, MPI-1 part"
    assert res.finalized
    block = res.benchmark(benchmark)
    assert block.nprocs == 2
    assert block.columns == ["bytes", "repetitions", *columns]
    assert [r.bytes for r in block.rows] == IMB_SIZES
    assert block.peak_bandwidth() > 0


def test_imb_2021_7_values():
    ping = parse_imb(read("imb-2021.7-pingpong-ompi4.1-local.txt")).benchmark("PingPong")
    assert ping.latency_at(0) == pytest.approx(6.25)
    assert ping.peak_bandwidth() == pytest.approx(6636.02)
    uni = parse_imb(read("imb-2021.7-uniband-ompi4.1-local.txt")).benchmark("Uniband")
    assert uni.peak_bandwidth() == pytest.approx(2968.53)
    assert uni.row(0).msg_per_sec > 0
    bi = parse_imb(read("imb-2021.7-biband-ompi4.1-local.txt")).benchmark("Biband")
    assert bi.peak_bandwidth() == pytest.approx(3635.55)

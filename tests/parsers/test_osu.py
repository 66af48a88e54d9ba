from __future__ import annotations

import pytest
from recordings import read, recordings

from fabrictest.parsers import ParseError, osu
from fabrictest.parsers.osu import parse_osu, parse_osu_all, placement_problems
from fabrictest.parsers.osu_names import expected_unit

FILES = recordings("osu_*.txt", "real-outputs") + recordings("seed*osu*.txt", "seeds")




@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_osu_file_parses(path):
    r = parse_osu(path.read_text())
    assert r.rows and all(row.size >= 0 and row.value >= 0 for row in r.rows)
    assert r.version and r.version[0] in "57"
    assert r.unit in ("us", "MB/s")
    expected = path.name.split("-")[0].removeprefix("seed003").removeprefix("osu_")
    if path.name.startswith("seed"):
        expected = path.name.split("-")[1].removeprefix("osu_")
    assert r.benchmark == expected
    assert r.unit == expected_unit(r.benchmark)
    sizes = r.sizes()
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    assert r.peak() == max(r.values().values())
    assert r.largest().size == max(sizes)
    if "validation" in path.name:
        assert r.validation == [True] * len(r.rows) and r.validated is True
    else:
        assert r.validation is None and r.validated is None


def test_seed003_get_bw():
    r = parse_osu(read("seed003-osu_get_bw-5.7-edge.txt"))
    assert (r.benchmark, r.version, r.unit) == ("get_bw", "5.7", "MB/s")
    assert r.at(4194304) == 12248.76
    assert r.at(1) == 1.41
    assert r.window_creation == "MPI_Win_allocate"
    assert r.synchronization == "MPI_Win_flush"
    assert len(r.rows) == 23


def test_seed003_mbw_mr_tables():
    g1 = parse_osu(read("seed003-osu_mbw_mr-5.7-pairs620-group1.txt"))
    assert (g1.benchmark, g1.pairs, g1.window_size) == ("mbw_mr", 620, 64)
    assert g1.at(4194304) == 378065.80
    assert g1.largest().extra["messages_per_s"] == 90137.91
    assert g1.peak() == 378906.21  # at 262144, not the largest size
    assert g1.rows[0].extra == {"messages_per_s": 1348549706.72}
    g2 = parse_osu(read("seed003-osu_mbw_mr-5.7-pairs60-group2.txt"))
    assert (g2.pairs, g2.at(4194304)) == (60, 241629.03)
    glob = parse_osu(read("seed003-osu_mbw_mr-5.7-pairs256-global.txt"))
    assert (glob.pairs, glob.at(4194304)) == (256, 296699.17)
    # the Slingshot acceptance notes' "Peak BW/Node" is the largest-size rate over the node
    # pairs: 378065.80/31
    assert round(g1.at(4194304) / 31) == 12196


def test_mbw_mr_real_recordings_same_as_seed():
    real = parse_osu(read("osu_mbw_mr-5.7-pairs620-slingshot.txt"))
    seed = parse_osu(read("seed003-osu_mbw_mr-5.7-pairs620-group1.txt"))
    assert real.rows == seed.rows and real.pairs == 620


def test_osu_7_1_duplicated_title_and_datatype_after_header():
    r = parse_osu(read("osu_mbw_mr-7.1-pairs1024-slingshot-dup-header.txt"))
    assert (r.version, r.pairs, r.window_size, r.datatype) == ("7.1", 1024, 64, "MPI_CHAR")
    assert r.title == "OSU MPI Multiple Bandwidth / Message Rate Test v7.1"
    assert r.at(1) == 2238.68 and r.rows[0].extra["messages_per_s"] == 2238678471.43
    assert r.peak() == 5558304.69
    assert len(parse_osu_all(read("osu_mbw_mr-7.1-pairs1024-slingshot-dup-header.txt"))) == 1


def test_osu_7_5_latency_validation_after_stderr_noise():
    r = parse_osu(read("osu_latency-7.5-validation-slingshot-mpich-stderr-noise.txt"))
    assert (r.benchmark, r.version, r.unit, r.datatype) == ("latency", "7.5", "us", "MPI_CHAR")
    assert r.columns == ["Avg Latency(us)", "Validation"]
    assert r.at(1) == 3.00 and r.at(4194304) == 181.46
    assert len(r.validation) == 23 and all(r.validation)
    assert r.rows[0].extra == {}


def test_osu_latency_5_and_7_2():
    r = parse_osu(read("osu_latency-5.3.2-mvapich2-ib.txt"))
    assert (r.version, r.at(0), r.at(8), r.largest().value) == ("5.3.2", 1.07, 1.15, 355.08)
    single = parse_osu(read("osu_latency-7.2-single-size-internode-ib-aion.txt"))
    assert single.sizes() == [8192] and single.at(8192) == 4.21 and single.datatype == "MPI_CHAR"


def test_osu_cuda_titles():
    bw = parse_osu(read("osu_bw-7.5-cuda-DD-validation-slingshot-ompi.txt"))
    assert (bw.benchmark, bw.accelerator, bw.peak()) == ("bw", "CUDA", 23989.54)
    bibw = parse_osu(read("osu_bibw-7.5-cuda-DD-validation-slingshot-mpich.txt"))
    assert (bibw.benchmark, bibw.accelerator, bibw.at(4194304)) == ("bibw", "CUDA", 46437.18)
    host = parse_osu(read("osu_bw-5.6.3-ompi3-ucx-roce.txt"))
    assert (host.accelerator, host.at(4194304), host.version) == (None, 5785.05, "5.6.3")
    assert parse_osu(read("osu_bibw-5.3.2-mvapich2-ib.txt")).at(4194304) == 24320.34


def test_validation_failure_is_reported():
    text = "# OSU MPI Bandwidth Test v7.5\n# Size      Bandwidth (MB/s)        Validation\n1   1.0   Pass\n2   2.0   Fail\n"
    r = parse_osu(text)
    assert r.validation == [True, False] and r.validated is False


def test_extra_columns_tail_latency_and_collectives():
    text = (
        "# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n"
        "# Size       Avg Latency(us)   P50 Tail Lat(us)   P90 Tail Lat(us)   P99 Tail Lat(us)\n"
        "1                       1.50              1.40              1.70              2.90\n"
    )
    row = parse_osu(text).rows[0]
    assert row.value == 1.5 and row.extra == {"p50": 1.4, "p90": 1.7, "p99": 2.9}
    coll = parse_osu(
        "# OSU MPI Allreduce Latency Test v7.3\n"
        "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
        "4                       5.00              4.00              6.00        1000\n"
    )
    assert coll.benchmark == "allreduce"
    assert coll.rows[0].extra == {"min_latency": 4.0, "max_latency": 6.0, "iterations": 1000.0}


def test_several_runs_in_one_output():
    text = read("seed003-osu_mbw_mr-5.7-pairs620-group1.txt") + read(
        "seed003-osu_mbw_mr-5.7-pairs60-group2.txt"
    )
    runs = parse_osu_all(text)
    assert [r.pairs for r in runs] == [620, 60]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        "# OSU MPI Latency Test v7.5\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n",
        "# OSU MPI Latency Test v5.7\n",
        "4 Ranks, Msg Size:      1024 bytes, Node BW:    381.77 MB/sec/node,  Aggregate BW:   0.38 GB/sec\n",
    ],
    ids=["empty", "blank", "header-only", "title-only", "wrong-tool"],
)
def test_not_osu_raises(text):
    with pytest.raises(ParseError):
        parse_osu(text)


def test_wrong_tool_recordings_raise():
    with pytest.raises(ParseError):
        parse_osu(read("imb-2019u5-pingpong-ib-impi2019.txt"))
    with pytest.raises(ParseError):
        parse_osu(read("ib_write_bw-roce-cx6dx-gbits-q1.txt"))


def test_parse_error_is_value_error():
    assert issubclass(ParseError, ValueError)


def test_osu_5_6_and_5_8_host_and_cuda_device_buffers():
    """OMB 5.6.x on InfiniBand and RoCE, 5.8 on EFA, and 5.8 MPI-CUDA with device buffers
    (the `# Send Buffer on DEVICE (D) ...` line sits between the title and the header)."""
    lat = parse_osu(read("osu_latency-5.6.3-ompi3-ucx-ib-csd3.txt"))
    assert (lat.version, lat.at(0), lat.at(4194304)) == ("5.6.3", 0.98, 346.79)
    assert parse_osu(read("osu_bw-5.6.2-impi2019-verbs-roce-alaska.txt")).at(4194304) == 2932.93
    assert parse_osu(read("osu_bibw-5.6.3-ompi3-ucx-ib-csd3.txt")).at(4194304) == 24601.60
    efa = parse_osu(read("osu_latency-5.8-efa-aws-hpc6a-eks.txt"))
    assert (efa.benchmark, efa.version, efa.at(0)) == ("latency", "5.8", 15.53)
    dd_lat = parse_osu(read("osu_latency-5.8-cuda-DD-azure-cyclecloud-ib.txt"))
    assert (dd_lat.title, dd_lat.at(0), dd_lat.at(1)) == (
        "OSU MPI-CUDA Latency Test v5.8", 1.74, 17.81)
    dd_bw = parse_osu(read("osu_bw-5.8-cuda-DD-azure-cyclecloud-ib.txt"))
    assert (dd_bw.benchmark, dd_bw.unit, dd_bw.at(4194304)) == ("bw", "MB/s", 9384.39)
    assert (dd_bw.buffers, dd_lat.buffers, lat.buffers) == ("D D", "D D", None)


def test_gpu_placement_is_checked_against_what_was_asked():
    """OsuGpuAwareTest's check: a GPU title, and the printed placement equal to the mode."""
    dd = parse_osu(read("osu_bw-5.8-cuda-DD-azure-cyclecloud-ib.txt"))
    assert placement_problems(dd, "D D", "cuda") == []
    assert placement_problems(dd, "H D", "cuda", "osu_bw H D") == [
        "osu_bw H D: OSU placed the buffers D D, not H D"]
    assert placement_problems(dd, "D D", "rocm") == ["osu_bw: OSU ran with CUDA, not rocm"]
    host = parse_osu(read("osu_bw-5.6.3-ompi3-ucx-roce.txt"))
    (why,) = placement_problems(host, "D D", "cuda")
    assert "names no GPU API: OSU ran without cuda support" in why
    v75 = parse_osu(read("osu_bw-7.5-cuda-DD-validation-slingshot-ompi.txt"))
    assert v75.buffers is None and placement_problems(v75, "D D", "cuda") == []
    mixed = parse_osu("# OSU MPI-ROCM Bandwidth Test v7.4\n"
                      "# Send Buffer on HOST (H) and Receive Buffer on MANAGED (MD)\n"
                      "# Size      Bandwidth (MB/s)\n1 0.5\n")
    assert mixed.buffers == "H MD" and placement_problems(mixed, "H D", "rocm") == [
        "osu_bw: OSU placed the buffers H MD, not H D"]


def test_osu_7_2_bw_single_size_datatype_after_header():
    r = parse_osu(read("osu_bw-7.2-single-size-internode-ib-aion.txt"))
    assert (r.benchmark, r.version, [row.size for row in r.rows], r.at(1048576)) == (
        "bw", "7.2", [1048576], 12311.83)


# -- issue 40: a compiler's or MPI's own line between rows is no other table -------------------

BW_563 = "osu_bw-5.6.3-ompi3-ucx-roce.txt"
ROW_64 = "64                    371.23\n"


@pytest.mark.parametrize("noise", [
    "3 warnings", "3 warnings generated.", "1 warning generated.",
    "0 inform,   3 warnings,   0 severes, 0 fatal for main",
    "[node01:12345] 3 more processes have sent help message help-mpi-btl-base.txt / btl:no-nics",
    '[node01:12345] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error '
    "messages",
])
def test_a_tool_warning_line_among_the_rows_is_not_a_foreign_table(noise):
    text = read(BW_563).replace(ROW_64, ROW_64 + noise + "\n")
    assert osu.missing(osu.parse_osu(text), benchmark="osu_bw") == []


@pytest.mark.parametrize("foreign", ["3 errors", "real\t0m3.214s", "128  99999.99  1.0",
                                     "# OSU MPI Latency Test v5.6.3"])
def test_other_lines_among_the_rows_stay_refused(foreign):
    text = read(BW_563).replace(ROW_64, ROW_64 + foreign + "\n")
    try:
        problems = osu.missing(osu.parse_osu(text), benchmark="osu_bw")
    except ParseError:
        return
    assert problems, foreign

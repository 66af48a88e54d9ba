"""Collectives in the OSU and IMB parsers (issues 29 and 32): every name OSU gives them, their
size series (OSU from the datatype's size, IMB's reductions 0, 4, 8 ...), osu_barrier's one
figure, and the least time a collective's bytes take through a link."""

from __future__ import annotations

import re

import pytest
from recordings import read

from fabrictest.parsers import ParseError, collectives, imb, osu
from fabrictest.parsers.osu_names import benchmark_name

#: every title OSU 7.4's collective programs print (strings of the installed binaries),
#: program -> the title's name between "OSU MPI" and "Test"
OSU74_TITLES = {
    "osu_allgather": "Allgather Latency", "osu_allgatherv": "Allgatherv Latency",
    "osu_allreduce": "Allreduce Latency",
    "osu_alltoall": "All-to-All Personalized Exchange Latency",
    "osu_alltoallv": "All-to-Allv Personalized Exchange Latency",
    "osu_alltoallw": "All-to-Allw Personalized Exchange Latency",
    "osu_barrier": "Barrier Latency", "osu_bcast": "Broadcast Latency",
    "osu_gather": "Gather Latency", "osu_reduce": "Reduce Latency",
    "osu_reduce_scatter": "Reduce_scatter Latency",
    "osu_reduce_scatter_block": "Reduce_scatter_block Latency",
    "osu_scatter": "Scatter Latency", "osu_iallreduce": "Non-blocking Allreduce Latency",
    "osu_ialltoall": "Non-blocking All-to-All Latency",
    "osu_ialltoallv": "Non-blocking All-to-Allv Personalized Exchange Latency",
    "osu_ibarrier": "Non-blocking Barrier Latency",
    "osu_ibcast": "Non-Blocking Broadcast Latency",
    "osu_neighbor_allgather": "Neighborhood Allgather Latency",
    "osu_neighbor_alltoallv": "Neighborhood All-to-Allv Latency",
    "osu_ineighbor_allgatherv": "Non-blocking Neighborhood Allgatherv Latency",
}


@pytest.mark.parametrize(("program", "title"), sorted(OSU74_TITLES.items()))
def test_every_collective_title_names_its_program(program, title):
    assert benchmark_name("MPI", title) == (program.removeprefix("osu_"), None)
    assert benchmark_name("MPI-CUDA", title) == (program.removeprefix("osu_"), "CUDA")


def test_osu_alltoall_is_alltoall_in_5x_and_7x():
    """Issue 29: OSU 7.5's all-to-all (and 5.x's, 7.4's) is `alltoall`, not
    `all_to_all_personalized_exchange_latency`."""
    for name in ("osu_alltoall-5.6.2-64ranks-ompi4-ucx-ib-alaska.txt",
                 "osu_alltoall-7.4-validation-ompi4.1-local.txt",
                 "osu_alltoall-7.5-validation-8ranks-slingshot-ompi.txt",
                 "osu_alltoall-7.5.1-36ranks-one-node-ompi5-oci.txt"):
        r = osu.parse_osu(read(name))
        assert r.benchmark == "alltoall", name
        assert osu.identity_problems(r, "osu_alltoall") == []
        assert osu.identity_problems(r, "osu_allreduce") != []


@pytest.mark.parametrize(("name", "first"), [
    ("osu_allreduce-5.6.2-64ranks-ompi4-ucx-ib-alaska.txt", 4),  # 5.x: MPI_FLOAT, no line
    ("osu_allgather-5.6.2-64ranks-impi2019-ib-alaska.txt", 1),
    ("osu_allreduce-7.4-validation-float-ompi4.1-local.txt", 4),  # -T mpi_float
    ("osu_reduce_scatter-7.4-validation-float-ompi4.1-local.txt", 4),
    ("osu_bcast-7.4-validation-ompi4.1-local.txt", 1),  # MPI_CHAR
])
def test_a_collective_series_starts_at_its_datatype(name, first):
    r = osu.parse_osu(read(name))
    assert r.sizes()[0] == first and r.sizes()[-1] == 1 << 20
    assert osu.missing(r) == []  # the default top of a collective: 1 MiB
    assert osu.missing(r, min_size=1) == []  # -m 1:TOP of a reduction starts at its element
    cut = osu.parse_osu("".join(x for x in read(name).splitlines(keepends=True)
                                if not x.startswith(f"{first} ")))
    assert any("missing" in p for p in osu.missing(cut)), cut.sizes()[:3]


def test_a_char_allreduce_from_4_bytes_is_not_whole():
    """MPI_CHAR starts at 1 B: a 7.4 allreduce printing 4 B first lost its first rows."""
    text = read("osu_allreduce-7.4-validation-float-ompi4.1-local.txt").replace(
        "MPI_FLOAT", "MPI_CHAR")
    assert "missing 1 B, 2 B" in " ".join(osu.missing(osu.parse_osu(text)))


def test_osu_75_int_allreduce_after_a_ucx_line():
    r = osu.parse_osu(read("osu_allreduce-7.5.1-int-144ranks-ompi5-ucx-roce-oci.txt"))
    assert (r.benchmark, r.version, r.datatype) == ("allreduce", "7.5", "MPI_INT")
    assert osu.missing(r, 1 << 28, 4) == [] and osu.missing(r, 1 << 28, 1) == []
    assert r.at(8) == 15.34 and r.at(1 << 28) == 496306.98


def test_osu_validation_failure_is_a_failure_and_cut():
    """OSU 7.4's own MPI_CHAR allreduce check fails at 16 B and stops the run."""
    r = osu.parse_osu(read("osu_allreduce-7.4-validation-char-fails-ompi4.1-local.txt"))
    assert r.validated is False and r.validation == [True] * 4 + [False]
    problems = osu.missing(r, benchmark="osu_allreduce")
    assert problems == ["osu_allreduce: 5 of 21 sizes; last 16 B, expected up to 1 MiB"], problems


@pytest.mark.parametrize("name", ["osu_barrier-7.4-ompi4.1-local.txt",
                                  "osu_barrier-7.4-full-ompi4.1-local.txt"])
def test_barrier_is_one_figure_without_a_size(name):
    text = read(name)
    r = osu.parse_osu(text)
    assert (r.benchmark, r.sized, r.unit, len(r.rows)) == ("barrier", False, "us", 1)
    assert osu.missing(r, benchmark="osu_barrier") == []
    assert osu.missing(osu.parse_osu(text.rstrip("\n")))[0].endswith("output ends mid-line "
                                                                      "(cut short)")
    with pytest.raises(ParseError, match="prints its figure twice"):
        osu.parse_osu(text + text.splitlines(keepends=True)[-1])
    with pytest.raises(ParseError, match="no '# Avg Latency\\(us\\)' column header"):
        osu.parse_osu("".join(x for x in text.splitlines(keepends=True)
                              if "Latency(us)" not in x))


def test_barrier_in_another_unit_is_refused():
    text = read("osu_barrier-7.4-ompi4.1-local.txt").replace("Latency(us)", "Latency(ms)")
    assert "expected us" in osu.missing(osu.parse_osu(text), benchmark="osu_barrier")[0]


# -- IMB ----------------------------------------------------------------------------------------


def test_a_whole_imb_allreduce_is_whole():
    """Issue 29: IMB's reductions print 0, 4, 8 ... bytes, never 1 or 2."""
    r = imb.parse_imb(read("imb-2021.7-allreduce-np2-ompi4.1-local.txt"))
    sizes = [row.bytes for row in r.benchmark("Allreduce").rows]
    assert sizes[:3] == [0, 4, 8] and sizes[-1] == 1 << 22
    assert imb.missing(r, "Allreduce") == []
    assert imb.expected_sizes("Allreduce", 16) == [0, 4, 8, 16]
    assert imb.expected_sizes("Alltoall", 4) == [0, 1, 2, 4]
    assert imb.expected_sizes("Barrier") == [0]


def test_imb_allreduce_without_its_4_byte_row_is_not_whole():
    text = read("imb-2021.7-allreduce-np2-ompi4.1-local.txt")
    cut = re.sub(r"^ +4 +100 .*\n", "", text, count=1, flags=re.M)
    assert cut != text
    assert "missing 4 B" in imb.missing(imb.parse_imb(cut), "Allreduce")[0]


def test_imb_alltoall_needs_1_and_2_bytes():
    text = read("imb-2021.7-alltoall-np2-ompi4.1-local.txt")
    cut = re.sub(r"^ +[12] +100 .*\n", "", text, flags=re.M)
    assert "missing 1 B, 2 B" in imb.missing(imb.parse_imb(cut), "Alltoall")[0]


@pytest.mark.parametrize(("name", "bench", "lo", "hi"), [
    ("imb-2021.7-alltoall-np36-msglog25-ompi5-oci.txt", "Alltoall", 1 << 25, 1 << 25),
    ("imb-2021.7-allreduce-np144-msglog28-ompi5-ucx-roce-oci.txt", "Allreduce", 1 << 28, 1 << 28),
    ("imb-2021.2-allreduce-np144-msglog27-28-impi-roce-oci.txt", "Allreduce", 1 << 27, 1 << 28),
])
def test_public_imb_collectives_with_msglog_ranges(name, bench, lo, hi):
    r = imb.parse_imb(read(name))
    assert imb.missing(r, bench, hi, lo) == []
    assert imb.missing(r, bench, hi) != []  # -msglog b alone would print every size from 1
    assert imb.too_fast(r, bench, 100) == []  # 100 Gb/s: their cluster network


def test_imb_times_out_of_order_are_not_a_run():
    text = read("imb-2021.7-bcast-np2-ompi4.1-local.txt")
    line = next(x for x in text.splitlines() if re.match(r"^ +1024 +100 ", x))
    reps, t_min, t_max, t_avg = line.split()[1:]
    bad = text.replace(line, line.replace(t_min, f"{float(t_max) * 10:.2f}", 1))
    assert "not min <= avg <= max" in " ".join(imb.missing(imb.parse_imb(bad), "Bcast"))


# -- what a link can carry ------------------------------------------------------------------------


def test_a_collective_faster_than_its_link_is_impossible():
    """On the vcluster's 200 Mbit/s links a 1 MiB allreduce takes at least 19 ms (half the
    vector across, / the margin): a latency x 10^-3 is refused, the recorded ones pass at the
    rates of their own fabrics."""
    r = osu.parse_osu(read("osu_allreduce-5.6.2-64ranks-ompi4-ucx-ib-alaska.txt"))
    assert osu.too_fast(r, 100) == []  # EDR InfiniBand
    fast = [(row.size, row.value / 1000) for row in r.rows]
    lines = collectives.faster_than_links("allreduce", fast, 0.2, "osu_allreduce")
    assert lines and lines[-1].startswith("osu_allreduce at 1 MiB: 3.73069 us is less than 0.5 x "
                                          "1 MiB takes at 0.2 Gb/s line rate"), lines
    assert collectives.faster_than_links("barrier", fast, 0.2, "x") == []
    assert collectives.faster_than_links("alltoall", [(1 << 20, 38200.0)], 0.2, "x") == []
    assert collectives.faster_than_links("alltoall", [(1 << 20, 38000.0)], 0.2, "x") != []


def test_imb_collective_faster_than_its_link():
    r = imb.parse_imb(read("imb-2021.7-allgather-np2-ompi4.1-local.txt"))
    assert imb.too_fast(r, "Allgather", 40_000) == []  # the shared-memory ceiling
    assert imb.too_fast(r, "Allgather", 0.2)  # 1 ms at 4 MiB would be 33 Gb/s
    assert imb.too_fast(r, "PingPong", 0.2) == []  # no such block: nothing to judge


def test_default_tops():
    assert osu.default_max_size("allreduce") == 1 << 20
    assert osu.default_max_size("ialltoall") == 1 << 20
    assert osu.default_max_size("bw") == 1 << 22
    assert collectives.element_size("allreduce", None) == 4
    assert collectives.element_size("alltoall", None) == 1
    assert collectives.element_size("alltoall", "MPI_INT.") == 4
    assert collectives.element_size("bcast", "MPI_DOUBLE") == 8


# -- issue 40: the datatype asked, -f's spread ---------------------------------------------------

FLOAT_ALLREDUCE = "osu_allreduce-7.4-validation-float-ompi4.1-local.txt"


def test_a_char_allreduce_where_float_was_asked_is_refused():
    r = osu.parse_osu(read(FLOAT_ALLREDUCE))
    assert osu.datatype_problems(r, "mpi_float") == []
    assert osu.missing(r, datatype="mpi_float") == []
    char = osu.parse_osu(read(FLOAT_ALLREDUCE).replace("MPI_FLOAT", "MPI_CHAR"))
    assert osu.datatype_problems(char, "mpi_float", "osu_allreduce") == [
        "osu_allreduce: datatype MPI_CHAR, asked MPI_FLOAT (-T mpi_float)"]
    unnamed = osu.parse_osu("".join(line for line in read(FLOAT_ALLREDUCE).splitlines(True)
                                    if "Datatype" not in line))
    assert "datatype not printed" in osu.datatype_problems(unnamed, "mpi_float")[0]


BARRIER_FULL = "osu_barrier-7.4-full-ompi4.1-local.txt"
BARRIER_ROW = "          3996.26           3994.81           3997.72          20"


@pytest.mark.parametrize(("row", "problem"), [
    ("          3996.26           3997.72           3994.81          20",
     "min 3997.72, avg 3996.26, max 3994.81 us: not min <= avg <= max"),
    ("          3998.00           3994.81           3997.72          20",
     "min 3994.81, avg 3998, max 3997.72 us: not min <= avg <= max"),
    ("          3996.26           3994.81           3997.72           0",
     "0 iterations: nothing was measured"),
])
def test_full_output_min_above_max_or_no_iterations_is_refused(row, problem):
    assert osu.missing(osu.parse_osu(read(BARRIER_FULL)), benchmark="osu_barrier") == []
    text = read(BARRIER_FULL).replace(BARRIER_ROW, row)
    problems = osu.missing(osu.parse_osu(text), benchmark="osu_barrier")
    assert any(problem in p for p in problems), problems

"""nccl-tests / rccl-tests (fabrictest.parsers.nccl) on the public outputs in
tests/data/real-outputs/ (SOURCES-project.md): each whole run read exactly, every cut of it
judged incomplete or refused, and the figures held to nccl-tests' own arithmetic (sizes, algbw =
size / time, busbw = algbw x factor, the average), so that a scaled, duplicated or foreign row
is caught."""

from __future__ import annotations

import re

import pytest
from recordings import read

from fabrictest.gpus import SHARED_MEMORY_GBPS
from fabrictest.parsers import ParseError, physical
from fabrictest.parsers.nccl import above_line_rate, missing, parse_nccl, printed_size

GiB = 1 << 30
#: recording -> (benchmark, -b, -e, ranks) of its command
WHOLE = {
    "nccl-all_reduce_perf-2nodes-16xh100-a3mega.txt": ("all_reduce_perf", 8, 8 * GiB, 16),
    "rccl-all_reduce_perf-1node-8xmi300x.txt": ("all_reduce_perf", 8, 8 * GiB, 8),
    "rccl-all_reduce_perf-2nodes-16xmi300x-e16G.txt": ("all_reduce_perf", 8, 16 * GiB, 16),
    "nccl-alltoall_perf-1rank-rtx5090-one-size.txt": ("alltoall_perf", 32 << 20, 32 << 20, 1),
}


def check(name: str, text: str | None = None) -> list[str]:
    benchmark, lo, hi, ranks = WHOLE[name]
    return missing(parse_nccl(read(name) if text is None else text), benchmark, lo, hi,
                   ranks=ranks)


def incomplete(name: str, text: str) -> bool:
    try:
        return bool(check(name, text))
    except ParseError:
        return True


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_whole_recordings_are_read_exactly(name):
    assert check(name) == []


def test_the_h100_run_figure_by_figure():
    res = parse_nccl(read("nccl-all_reduce_perf-2nodes-16xh100-a3mega.txt"))
    assert (len(res.rows), len(res.ranks), res.avg_busbw) == (31, 16, 70.742)
    assert [r.size for r in res.rows] == [8 << k for k in range(31)]
    top = res.largest()
    assert (top.size, top.count, top.redop, top.root) == (8 * GiB, 2 * GiB, "sum", -1)
    assert (top.out_of_place.time_us, top.out_of_place.algbw, top.out_of_place.busbw) == (
        47535.0, 180.71, 338.82)
    assert (top.in_place.busbw, top.out_of_place.wrong, top.in_place.wrong) == (337.35, 0, 0)
    assert {r.host for r in res.ranks} == {"ztan-mig-235z", "ztan-mig-gq73"}
    assert res.params.validation == 1 and res.out_of_bounds == 0


def test_rccl_runs_with_their_version_lines():
    one = parse_nccl(read("rccl-all_reduce_perf-1node-8xmi300x.txt"))
    assert one.library == "rccl-tests: Version develop:a7809b3"
    assert one.largest().out_of_place.busbw == 315.69
    two = parse_nccl(read("rccl-all_reduce_perf-2nodes-16xmi300x-e16G.txt"))
    assert [r.rank for r in two.ranks] == list(range(16))  # rank lines without "Group"
    assert two.largest().size == 16 * GiB and two.avg_busbw == 92.3318


def test_one_rank_alltoall_has_no_bus_bandwidth():
    res = parse_nccl(read("nccl-alltoall_perf-1rank-rtx5090-one-size.txt"))
    (row,) = res.rows
    assert (row.out_of_place.busbw, row.in_place.wrong, res.avg_busbw) == (0.0, None, 0.0)
    # the same output is not all_reduce_perf's: its rows say redop none
    problems = missing(res, "all_reduce_perf", 32 << 20, 32 << 20, ranks=1)
    assert any("redop none" in p for p in problems), problems


def test_the_cut_mi355x_copy_says_what_it_lacks():
    res = parse_nccl(read("rccl-all_reduce_perf-2nodes-16xmi355x-cut-no-summary.txt"))
    assert missing(res, "all_reduce_perf", 8, 16 * GiB, ranks=16) == [
        "all_reduce_perf: no 'nThread N nGpus G minBytes ...' parameter line",
        "all_reduce_perf: 31 of 32 sizes; last 8 GiB, expected up to 16 GiB",
        "all_reduce_perf: no '# Out of bounds values' line",
        "all_reduce_perf: no '# Avg bus bandwidth' line (cut short)",
    ]


def test_the_old_layout_is_refused_in_one_line():
    with pytest.raises(ParseError, match="old layout"):
        parse_nccl(read("nccl-alltoall_perf-64ranks-old-layout-error-column.txt"))


@pytest.mark.parametrize("text", ["", "   \n", "# OSU MPI Bandwidth Test v7.4\n1 2.0\n",
                                  "Segmentation fault (core dumped)\n", "nan inf -1 1e999\n",
                                  "\x00\x01binary\xff\n", "8 2 float sum -1 1 0 0 0 1 0 0 0\n",
                                  "#       size         count      type   redop    root     time"
                                  "   algbw   busbw #wrong     time   algbw   busbw #wrong\n"])
def test_not_nccl_output_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_nccl(text)


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_every_cut_is_incomplete(name):
    """Cut after every line, and inside every line, up to the closing average line: each is
    judged incomplete or refused (the whole text is not)."""
    text = read(name)
    end = text.index("# Avg bus bandwidth")
    end = text.index("\n", end) if "\n" in text[end:] else len(text)
    cuts = 0
    for i, ch in enumerate(text[:end]):
        if ch == "\n":
            for cut in (text[: i + 1], text[:i], text[: max(i - 1, 0)]):
                assert incomplete(name, cut), repr(cut[-120:])
                cuts += 1
    assert cuts > 10 and not incomplete(name, text)


# -- identity: what a scaled, duplicated or foreign row looks like ------------------------------

H100 = "nccl-all_reduce_perf-2nodes-16xh100-a3mega.txt"
ROW_8G = ("  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0"
          "    47743  179.92  337.35      0")


def variant(old: str, new: str, name: str = H100) -> list[str]:
    text = read(name)
    assert old in text
    return check(name, text.replace(old, new, 1))


def test_a_scaled_bandwidth_is_not_size_over_time():
    problems = variant(ROW_8G, ROW_8G.replace("180.71  338.82", "271.07  508.23"))
    assert any("algbw 271.07 GB/s is not size/time" in p for p in problems), problems


def test_a_bus_bandwidth_off_the_benchmark_factor():
    problems = variant(ROW_8G, ROW_8G.replace("338.82", "169.41"))
    assert any("busbw 169.41 GB/s is not algbw x 1.875" in p for p in problems), problems


def test_wrong_elements_fail():
    problems = variant(ROW_8G, ROW_8G[:-1] + "3")
    assert any("#wrong 3: elements failed the check" in p for p in problems), problems
    problems = variant("# Out of bounds values : 0 OK", "# Out of bounds values : 2 FAILED")
    assert "all_reduce_perf: 2 out-of-bounds values (FAILED)" in problems


def test_a_duplicated_or_dropped_row_is_seen():
    text = read(H100)
    doubled = text.replace(ROW_8G + "\n", ROW_8G + "\n" + ROW_8G + "\n")
    problems = check(H100, doubled)
    assert any("32 rows, expected 31" in p or "average bus bandwidth" in p for p in problems)
    dropped = re.sub(r"^ +1048576 .*\n", "", text, flags=re.M)
    problems = check(H100, dropped)
    assert any("row 18 prints 2097152 B" in p for p in problems), problems
    assert any("not the mean of the rows'" in p for p in problems), problems


def test_another_size_series_or_rank_count_is_not_the_run_asked():
    res = parse_nccl(read(H100))
    assert "ran minBytes 8 maxBytes 8589934592 step 2(factor), asked -b 8 -e 1073741824 -f 2" in (
        " ".join(missing(res, "all_reduce_perf", 8, GiB, ranks=16)))
    assert "all_reduce_perf: 16 ranks listed, expected 8" in missing(
        res, "all_reduce_perf", 8, 8 * GiB, ranks=8)


def test_changed_units_and_impossible_figures():
    units = "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
    problems = variant(units, units.replace("(GB/s)  (GB/s)", "(MB/s)  (MB/s)", 1))
    assert any(p.startswith("all_reduce_perf: units (us) (MB/s) (MB/s)") for p in problems)
    for bad in ("nan", "inf", "-180.71"):
        problems = variant(ROW_8G, ROW_8G.replace("180.71", bad))
        assert any("is not a possible figure" in p for p in problems), (bad, problems)


def test_validation_off_and_unchecked_rows_fail():
    problems = variant("validation: 1", "validation: 0")
    assert any("the results were not checked" in p for p in problems)
    problems = variant(ROW_8G, ROW_8G[:-7] + "    N/A")
    assert any("(in-place): #wrong N/A" in p for p in problems), problems


def test_two_runs_in_one_output():
    text = read(H100)
    assert "all_reduce_perf: 2 runs (parameter lines) in one output" in check(H100, text + text)


def test_a_named_benchmark_must_be_the_one_asked():
    text = "# Collective test starting: alltoall_perf\n" + read(H100)
    assert "all_reduce_perf: the output is alltoall_perf's" in check(H100, text)


def test_rows_between_library_lines_are_read():
    text = read(H100).replace(ROW_8G, "NCCL version 2.21.5+cuda12.4\n"
                              "node03:123:456 [0] NCCL INFO Channel 00/32\n" + ROW_8G)
    assert check(H100, text) == []


# -- alltoall's sizes: a multiple of ranks x 16 bytes -------------------------------------------

@pytest.mark.parametrize(("requested", "ranks", "printed"), [
    (8, 8, (0, 0)), (64, 8, (0, 0)), (128, 8, (128, 4)), (1 << 20, 8, (1 << 20, 32768)),
    (8 * GiB, 16, (8 * GiB, 134217728)), (32 << 20, 1, (32 << 20, 8388608)),
    (100, 3, (96, 8)),
])
def test_alltoall_printed_sizes(requested, ranks, printed):
    assert printed_size("alltoall_perf", requested, ranks) == printed


def test_all_reduce_printed_sizes_are_whole_elements():
    assert printed_size("all_reduce_perf", 8, 16) == (8, 2)
    assert printed_size("all_reduce_perf", 10, 16) == (8, 2)


def _alltoall_run(ranks: int, sizes: list[int]) -> str:
    """An alltoall_perf output as nccl-tests 2.16 prints it for ``ranks`` ranks (generated from
    its formulas: every figure consistent)."""
    lines = [f"# nThread 1 nGpus 1 minBytes {sizes[0]} maxBytes {sizes[-1]} step: 2(factor) "
             "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", "#",
             "# Using devices"]
    lines += [f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on      node{r // 8} device {r % 8:2d} "
              f"[0000:{4 + r % 8:02x}:00] NVIDIA H100 80GB HBM3" for r in range(ranks)]
    lines += ["#", "#       size         count      type   redop    root     time   algbw   busbw "
              "#wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)      "
              "      (us)  (GB/s)  (GB/s)"]
    busbws = []
    for req in sizes:
        size, count = printed_size("alltoall_perf", req, ranks)
        t = 20.0 + size / 40_000.0
        alg = size / (t * 1e3)
        bus = alg * (ranks - 1) / ranks
        busbws += [round(bus, 2)] * 2
        lines.append(f"{size:12d}  {count:12d}  {'float':>8s}  {'none':>6s}  {-1:6d}  "
                     f"{t:7.2f}  {alg:6.2f}  {bus:6.2f}  {0:5g}  {t:7.2f}  {alg:6.2f}  {bus:6.2f}"
                     "    N/A")
    lines += ["# Out of bounds values : 0 OK",
              f"# Avg bus bandwidth    : {sum(busbws) / len(busbws):g} ", "#", ""]
    return "\n".join(lines)


def test_a_generated_alltoall_run_is_whole_and_its_zero_rows_are_expected():
    sizes = [8 << k for k in range(24)]
    text = _alltoall_run(8, sizes)
    res = parse_nccl(text)
    assert [r.size for r in res.rows[:5]] == [0, 0, 0, 0, 128]  # the 8-64 B requests print 0
    assert missing(res, "alltoall_perf", 8, sizes[-1], ranks=8) == []
    # all_reduce's rules do not fit it
    assert missing(res, "all_reduce_perf", 8, sizes[-1], ranks=8) != []


# -- issue 40: a link ceiling, one rank per GPU, a failure reported between rows ---------------

def _scaled(text: str, factor: float) -> str:
    """Every row of ``text`` ``factor`` x faster, each figure still size/time (self-consistent:
    nccl-tests' arithmetic holds, only the links could not carry it)."""
    def row(m: re.Match) -> str:
        size, count, dtype, redop, root, *halves = m.group(0).split()
        out = [size, count, dtype, redop, root]
        for t, alg, bus, wrong in (halves[:4], halves[4:]):
            out += [f"{float(t) / factor:.4g}", f"{float(alg) * factor:.2f}",
                    f"{float(bus) * factor:.2f}", wrong]
        return "  ".join(out)
    scaled = re.sub(r"^ +\d+ +\d+ +float .*$", row, text, flags=re.M)
    avg = float(re.search(r"Avg bus bandwidth\s*:\s*(\S+)", text).group(1))
    return re.sub(r"(Avg bus bandwidth\s*:\s*)\S+", lambda m: f"{m.group(1)}{avg * factor:.3f}",
                  scaled)


def test_a_run_faster_than_any_link_is_refused():
    """The H100 run x 1000 (algbw 180 TB/s) keeps nccl-tests' arithmetic but no link carries it:
    a3-mega's 8 x 200 Gb/s NICs a node bound busbw at 2 x 8 x 200 x 1.1 Gb/s (440 GB/s)."""
    ceiling = physical.Ceiling(200, directions=2, links=8)
    res = parse_nccl(read(H100))
    assert above_line_rate(res, "all_reduce_perf", ceiling) == []
    fast = parse_nccl(_scaled(read(H100), 1000))
    [line] = above_line_rate(fast, "all_reduce_perf", ceiling)
    assert line == ("all_reduce_perf busbw at 64 KiB: 6240 Gb/s (780 GB/s) is above 8 links x 2 "
                    "directions x 200 Gb/s line rate x 1.1 margin = 3520 Gb/s: impossible (and 17 "
                    "more sizes)"), line
    # within one node: the shared-memory ceiling, which the 1000x figures exceed too
    one = physical.Ceiling(SHARED_MEMORY_GBPS, what="shared-memory ceiling")
    assert above_line_rate(parse_nccl(read(WHOLE_1NODE)), "all_reduce_perf", one) == []
    assert above_line_rate(fast, "all_reduce_perf", one)


WHOLE_1NODE = "rccl-all_reduce_perf-1node-8xmi300x.txt"


def test_two_ranks_on_one_gpu_are_refused():
    rank1 = "#  Rank  1 Group  0 Pid   6900 on ztan-mig-235z device  1 [0000:05:00]"
    problems = variant(rank1, rank1.replace("device  1 [0000:05:00]", "device  0 [0000:04:00]"))
    assert ("all_reduce_perf: ranks 0 and 1 on one GPU (ztan-mig-235z [0000:04:00]), asked one "
            "rank per GPU") in problems, problems
    # the same bus id on two hosts is two GPUs (every node's rank lines repeat 0000:04:00)
    assert check(H100) == []


def test_a_failure_warned_between_rows_fails_naming_it():
    warn = "ztan-mig-235z:6899:7001 [0] NCCL WARN NET/IB : Got completion from peer with error 12"
    problems = variant(ROW_8G, warn + "\n" + ROW_8G)
    assert f"all_reduce_perf: {warn!r}: the run reported a failure" in problems, problems
    # a warning that reports no failure does not touch the figures
    benign = "ztan-mig-235z:6899:7001 [0] NCCL WARN NCCL_IB_HCA set to mlx5_0"
    assert variant(ROW_8G, benign + "\n" + ROW_8G) == []

"""bisection_bw (src/c/bisection_bw.c) run for real with 2-4 MPI ranks: the Slingshot acceptance
notes' lines, payloads checked, bad input refused with one line and a non-zero exit."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.mpi

# printf("%d Ranks, Msg Size: %9.2d bytes, Node BW: %9.2f MB/sec/node,  Aggregate BW: %6.2f GB/sec\n")
SIZE_LINE = re.compile(
    r"^(?P<ranks>\d+) Ranks, Msg Size: (?P<size>[ \d]{9}|\d{10,}) bytes, "
    r"Node BW: (?P<node>[ \d.]{9}|[\d.]{10,}) MB/sec/node,  "
    r"Aggregate BW: (?P<agg>[ \d.]{6}|[\d.]{7,}) GB/sec$"
)
PAIR_LINE = re.compile(
    r"^Pair \((?P<a>\d+)<->(?P<b>\d+)\) Elapsed time = (?P<t>[ \d.]{9}|[\d.]{10,}) sec "
    r"\((?P<bw>[ \d.]{9}|[\d.]{10,}) MB/sec\)$"
)
HEADER = re.compile(
    r"^ Number of Process (\d+)PPN: (\d+), Number of nodes: (\d+), Num_reps = (\d+)$"
)


def size_lines(text: str) -> list[re.Match]:
    return [m for m in map(SIZE_LINE.match, text.splitlines()) if m]


def test_regex_matches_seed_output(shared_dir):
    seed = next((shared_dir / "seeds").glob("003_*.txt")).read_text()
    rows = size_lines(seed)
    assert len(rows) == 12
    assert [int(m["size"]) for m in rows] == [1024 * 2**i for i in range(12)]
    assert any(HEADER.match(line) for line in seed.splitlines())


def test_seed_command_line(mpirun, c_build):
    """`bisection_bw 4 2` with 4 ranks, as in the Slingshot acceptance notes: 1 KiB to 2 MiB,
    one line per size."""
    proc = mpirun(4, [c_build / "bisection_bw", "4", "2"], timeout=180, check=True)
    lines = proc.stdout.splitlines()
    assert any(HEADER.match(line) for line in lines)
    assert HEADER.match(next(line for line in lines if line.strip())).groups() == (
        "4",
        "4",
        "1",
        "2",
    )
    rows = size_lines(proc.stdout)
    assert [int(m["size"]) for m in rows] == [1024 * 2**i for i in range(12)]
    for m in rows:
        assert m["ranks"] == "4"
        node, agg = float(m["node"]), float(m["agg"])
        assert node > 0
        # one node: node bandwidth (MB/s) equals the aggregate (GB/s) times 1000
        assert abs(node / 1000 - agg) <= 0.006 + 1e-3 * agg
    assert "Pair (" not in proc.stdout


def test_nodes_and_pairs(mpirun, c_build):
    """PPN 1 with 4 ranks: 4 nodes; -v prints one line per pair (i<->i+n/2) after each size."""
    proc = mpirun(
        4, [c_build / "bisection_bw", "-v", "-s", "4k", "-e", "16k", "1", "3"], check=True
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert HEADER.match(lines[0]).groups() == ("4", "1", "4", "3")
    body = lines[1:]
    assert len(body) == 3 * 3
    for i, size in enumerate((4096, 8192, 16384)):
        m = SIZE_LINE.match(body[3 * i])
        assert m and int(m["size"]) == size
        # 4 nodes: aggregate GB/s = 4 * node MB/s / 1000
        assert abs(4 * float(m["node"]) / 1000 - float(m["agg"])) <= 0.006 + 1e-3 * float(m["agg"])
        pairs = [PAIR_LINE.match(line) for line in body[3 * i + 1 : 3 * i + 3]]
        assert [(p["a"], p["b"]) for p in pairs] == [("0", "2"), ("1", "3")]
        assert all(float(p["bw"]) > 0 for p in pairs)


def test_two_ranks_odd_sizes(mpirun, c_build):
    """Sizes need not be powers of two or multiples of 4 (MPI_BYTE): 3, 6, 12, 24."""
    proc = mpirun(2, [c_build / "bisection_bw", "-s", "3", "-e", "30", "1", "5"], check=True)
    assert [int(m["size"]) for m in size_lines(proc.stdout)] == [3, 6, 12, 24]


def test_help(mpirun, c_build):
    proc = mpirun(2, [c_build / "bisection_bw", "-h"], check=True)
    assert proc.stdout.startswith("Usage: bisection_bw [OPTION]... PPN NUM_REPS")


@pytest.mark.parametrize(
    ("np", "argv", "message"),
    [
        (3, ["1", "2"], "needs an even number of MPI processes, got 3"),
        (4, ["3", "2"], "PPN 3 does not divide the number of MPI processes (4)"),
        (2, ["2"], "expected the two arguments PPN NUM_REPS, got 1"),
        (2, [], "expected the two arguments PPN NUM_REPS, got 0"),
        (2, ["0", "2"], "PPN must be a number of processes per node >= 1, not '0'"),
        (2, ["2", "0"], "NUM_REPS must be a number of repetitions >= 1, not '0'"),
        (2, ["2", "two"], "NUM_REPS must be a number of repetitions >= 1, not 'two'"),
        (2, ["-s", "0", "2", "2"], "-s expects a message size from 1 byte to 1g, not '0'"),
        (2, ["-e", "2g", "2", "2"], "-e expects a message size from 1 byte to 1g, not '2g'"),
        (2, ["-s", "4k", "-e", "1k", "2", "2"], "-s 4096 is larger than -e 1024"),
        (2, ["-q", "2", "2"], "unknown option -q"),
    ],
)
def test_bad_input_refused(mpirun, c_build, np, argv, message):
    proc = mpirun(np, [c_build / "bisection_bw", *argv], timeout=60)
    assert proc.returncode != 0
    ours = [line for line in proc.stderr.splitlines() if line.startswith("bisection_bw: error:")]
    assert len(ours) == 1, proc.stderr
    assert message in ours[0]
    assert not size_lines(proc.stdout)


def test_corrupted_payload_detected(mpirun, c_build):
    proc = mpirun(2, [c_build / "bisection_bw", "-x", "-e", "2k", "1", "2"], timeout=60)
    assert proc.returncode != 0
    ours = [line for line in proc.stderr.splitlines() if line.startswith("bisection_bw: error:")]
    assert len(ours) == 1
    assert "rank 1: message of 1024 bytes from rank 0 differs at byte 512" in ours[0]

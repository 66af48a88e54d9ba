from __future__ import annotations

from pathlib import Path

import pytest

from fabrictest.parsers import ParseError
from fabrictest.parsers.alltomany import parse_alltomany, parse_alltomany_all
from fabrictest.parsers.bisection import parse_bisection

SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds"


def test_seed004_four_runs():
    runs = parse_alltomany_all((SEEDS / "seed004-alltomany-4runs.txt").read_text())
    assert [r.iterations for r in runs] == [2, 8, 16, 32]
    first = runs[0]
    assert (first.nprocs, first.senders, first.receivers) == (512, 512, 8)
    assert (first.unit_size, first.max_msg_size, first.min_msg_size) == (32, 256, 32)
    assert (first.t_irecv, first.t_isend, first.t_waitall, first.t_end_to_end) == (
        0.0117,
        0.0041,
        0.0791,
        0.0829,
    )
    assert [r.t_irecv for r in runs] == [0.0117, 0.0824, 0.4630, 5.6778]
    assert runs[3].t_end_to_end == 6.2541 and runs[3].extra == {}
    assert parse_alltomany((SEEDS / "seed004-alltomany-4runs.txt").read_text()) == first


def test_alltomany_extra_lines():
    text = (
        "-----------------------------------------------------------\n"
        "Total number of MPI processes        = 8\n"
        "Total number of sender   processes   = 8\n"
        "Total number of receiver processes   = 2\n"
        "Total number of iterations           = 4\n"
        "Message block unit size              = 10 bytes\n"
        "Max message size                     = 80 bytes\n"
        "Min message size                     = 10 bytes\n"
        "Max time of posting irecv            = 1.2e-05 sec\n"
        "Max time of posting isend            = 0.0001 sec\n"
        "Max time of MPI_Waitall()            = 0.0020 sec\n"
        "Max end-to-end time                  = 0.0031 sec\n"
        "Payload check                        = passed (64 messages)\n"
        "(Max means the maximum among all 8 processes)\n"
        "-----------------------------------------------------------\n"
    )
    r = parse_alltomany(text)
    assert r.t_irecv == 1.2e-05 and r.receivers == 2
    assert r.extra == {"Payload check": "passed (64 messages)"}


@pytest.mark.parametrize("text", ["", "Max time = garbage\n", "# OSU MPI Latency Test v5.7\n"])
def test_not_alltomany_raises(text):
    with pytest.raises(ParseError):
        parse_alltomany(text)


def test_seed003_bisection():
    r = parse_bisection((SEEDS / "seed003-bisection-np4.txt").read_text())
    assert (r.nprocs, r.ppn, r.nodes, r.reps) == (4, 4, 1, 2)
    assert len(r.rows) == 12
    assert r.rows[0] == r.at(1024)
    assert (r.at(1024).ranks, r.at(1024).node_mbps, r.at(1024).aggregate_gbps) == (4, 381.77, 0.38)
    big = r.largest()
    assert (big.size, big.node_mbps, big.aggregate_gbps) == (2097152, 12966.72, 12.97)
    assert r.peak_node_mbps() == 12966.72
    assert r.pairs == []


def test_bisection_verbose_pairs_and_stray_fragments():
    text = (
        "\n Number of Process 4\n Number of Process 4\n Number of Process 4PPN: 2, Number of nodes: 2, Num_reps = 10\n"
        "4 Ranks, Msg Size:      1024 bytes, Node BW:    381.77 MB/sec/node,  Aggregate BW:   0.76 GB/sec\n"
        "Pair (0<->2) Elapsed time =      0.01 sec (   100.50 MB/sec)\n"
        "Pair (1<->3) Elapsed time =      0.02 sec (    50.25 MB/sec)\n"
    )
    r = parse_bisection(text)
    assert (r.nprocs, r.ppn, r.nodes, r.reps) == (4, 2, 2, 10)
    assert [(p.a, p.b, p.seconds, p.mbps) for p in r.pairs] == [
        (0, 2, 0.01, 100.5),
        (1, 3, 0.02, 50.25),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n Number of Process 4PPN: 4, Number of nodes: 1, Num_reps = 2\n",
        "# OSU MPI Latency Test v5.7\n",
    ],
    ids=["empty", "header-only", "wrong-tool"],
)
def test_not_bisection_raises(text):
    with pytest.raises(ParseError):
        parse_bisection(text)

from __future__ import annotations

import pytest
from recordings import read, recordings

from fabrictest.parsers import ParseError
from fabrictest.parsers.txrx import parse_txrx

FILES = recordings("seed000-txrx-*.txt", "seeds")




@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_seed_log_parses(path):
    r = parse_txrx(path.read_text())
    assert r.streams and r.complete_streams() == r.streams
    assert r.incomplete_streams() == []
    assert all(s.corrupt is None for s in r.streams)  # the SEREN notes' tool does not print it
    assert r.complete_streams(require_corrupt=True) == []
    assert all(s.missed == 0 and s.loss_rate == 0.0 and s.received == s.total for s in r.streams)
    assert r.errors == []
    assert len(r.transmitters) == len(r.streams)


def test_ten_pairs_interleaved():
    r = parse_txrx(read("seed000-txrx-10pairs-same-node.txt"))
    assert [(s.receiver_rank, s.transmitter) for s in r.streams] == [(i, 0) for i in range(10)]
    s0 = r.stream(0, 0)
    assert s0.gbps == 97.57135769849394 and s0.elapsed_s == 0.5373380184173584
    assert s0.received == s0.total == 100000
    # rank 4's loss-rate line comes after two "Receive Visibilities" noise lines
    assert r.stream(4, 0).loss_rate == 0.0
    assert r.stream(8, 0).gbps == 96.30237204168942
    assert [t.rank for t in r.transmitters] == list(range(10))
    assert r.transmitters[7].gbps == 96.05829901955174
    assert 96 < r.min_gbps() < 97 and 960 < r.total_gbps() < 980
    assert r.buffers == []


def test_buffers_and_two_transmitters_into_one_receiver():
    one = parse_txrx(read("seed000-txrx-1pair.txt"))
    assert one.buffers == [
        ("seren-01", "receiver", (1, 10, 100, 65536)),
        ("seren-02", "transmitter", (10, 100, 65536)),
    ]
    r = parse_txrx(read("seed000-txrx-1rx-2tx.txt"))
    assert [(s.receiver_rank, s.transmitter) for s in r.streams] == [(0, 0), (0, 1)]
    assert r.stream(0, 1).received == 1000000 and r.stream(0, 1).gbps == 51.98501352333627
    assert ("seren-01", "receiver", (2, 10, 100, 65536)) in r.buffers
    assert r.total_missed() == 0


def test_corrupt_missing_lines_and_errors():
    text = (
        "[1,0]<stdout>:INFO:__main__:Rank 0 receiver from transmitter 0, message missed is 12\n"
        "INFO:__main__:Rank 0 receiver from transmitter 0, message corrupt is 3\n"
        "INFO:__main__:Rank 0 receiver from transmitter 0, message loss rate is 0.00012\n"
        "ERROR:__main__:world size 3 != nrx 1 + nlink 1\n"
    )
    r = parse_txrx(text)
    s = r.stream(0, 0)
    assert (s.missed, s.corrupt, s.loss_rate, s.gbps, s.received) == (12, 3, 0.00012, None, None)
    assert r.complete_streams() == [] and r.incomplete_streams() == [s]
    assert r.errors == ["ERROR:__main__:world size 3 != nrx 1 + nlink 1"]
    only_error = parse_txrx("ERROR: --nlink must be >= --nrx\n")
    assert only_error.errors == ["ERROR: --nlink must be >= --nrx"] and only_error.streams == []


@pytest.mark.parametrize(
    "text", ["", "INFO:\tReceive Visibilities ending 1\n", "# OSU MPI Latency Test v5.7\n"]
)
def test_not_txrx_raises(text):
    with pytest.raises(ParseError):
        parse_txrx(text)


LINKED = """\
INFO:__main__:node01, rdma_buffers for receiver shape is (2, 10, 100, 65536)
INFO:__main__:Rank 0 receiver from transmitter 1, elapsed time is 0.5 seconds
INFO:__main__:Rank 0 receiver from transmitter 1, data rate is 0.0477 Gbps
INFO:__main__:Rank 0 receiver from transmitter 1, message missed is 0
INFO:__main__:Rank 0 receiver from transmitter 1, message received is 2000
INFO:__main__:Rank 0 receiver from transmitter 1, message total is 2000
INFO:__main__:Rank 0 receiver from transmitter 1, message loss rate is 0.0
INFO:__main__:Rank 0 receiver from transmitter 1, message corrupt is 0
INFO:__main__:Rank 0 receiver from transmitter 1, link is node03 (rank 2) -> node01 (rank 0)
INFO:__main__:Rank 0 receiver from transmitter 1, verbs provider is simulated: 2000 writes landed, \
0 lost on the wire, 0 without a posted receive, 0 refused (rkey/bounds), 0 PSN resyncs
INFO:__main__:Rank 1 transmitter elapsed time is 0.5 seconds
INFO:__main__:Rank 1 transmitter data rate is 0.048 Gbps
INFO:__main__:Rank 1 transmitter link is node03 (rank 2) -> node01 (rank 0)
"""


def test_link_lines_name_both_ends_and_simulated_is_seen():
    r = parse_txrx(LINKED)
    s = r.stream(0, 1)
    assert (s.transmitter_host, s.transmitter_rank, s.receiver_host) == ("node03", 2, "node01")
    assert s.link == "node03->node01" and s.is_complete(require_corrupt=True)
    assert (r.transmitters[0].rank, r.transmitters[0].host) == (1, "node03")
    assert r.transmitters[0].receiver_host == "node01" and r.transmitters[0].gbps == 0.048
    assert r.simulated
    # the same run without the simulated provider's line is not simulated
    plain = "\n".join(x for x in LINKED.splitlines() if "simulated" not in x)
    assert not parse_txrx(plain).simulated


def test_seed_output_has_no_link_but_is_whole():
    r = parse_txrx(read("seed000-txrx-1pair.txt"))
    assert all(s.link is None and s.transmitter_host is None for s in r.streams)
    assert r.complete_streams() == r.streams and not r.simulated

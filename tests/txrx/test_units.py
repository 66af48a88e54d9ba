"""Unit tests of the tool's pure parts: options, roles, ring, stats, output, buffers."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fabrictest.txrx import output, ring
from fabrictest.txrx.buffers import HUGE_PAGE, PAGE, Buffer, decide_cuda_aware
from fabrictest.txrx.cli import parse
from fabrictest.txrx.errors import Unavailable, UsageError
from fabrictest.txrx.options import Options, parse_int, validate
from fabrictest.txrx.roles import role_of, stream_of, transmitters_of
from fabrictest.txrx.stats import GapCounter

# ---------------------------------------------------------------- options


def test_numbers_accept_underscores():
    assert parse_int("100_000") == 100000
    assert parse_int("65_536") == 65536
    opts = parse(["--nmsg", "1_000_000", "--msg-size", "65_536", "--method", "mpi"])
    assert opts.nmsg == 1_000_000 and opts.msg_size == 65536 and opts.method == "mpi"


def test_seed_command_line_parses():
    argv = "--nrx 10 --nlink 10 --method rdma --msg-size 65536 --num-blks 10 --num-cmsgs 100 --nmsg 100_000"
    opts = parse(argv.split())
    validate(opts, 20)
    assert (opts.nrx, opts.nlink, opts.slots, opts.transport, opts.test) == (10, 10, 1000, "uc", "throughput")


@pytest.mark.parametrize(
    "argv, world, pattern",
    [
        (["--nrx", "1", "--nlink", "2"], 2, r"world size is 2 but --nrx 1 \+ --nlink 2 = 3"),
        (["--nrx", "2", "--nlink", "1"], 3, r"--nlink 1 is smaller than --nrx 2"),
        (["--nmsg", "0"], 2, r"--nmsg must be positive"),
        (["--num-blks", "-1"], 2, r"--num-blks must be positive"),
        (["--msg-size", "0"], 2, r"--msg-size must be positive"),
        (["--msg-size", "7"], 2, r"does not fit the buffer limits"),
        (["--msg-size", "65537"], 2, r"does not fit the buffer limits"),
        (["--msg-size", str(2 << 30)], 2, r"does not fit the buffer limits"),
        (["--msg-size", str(1 << 30), "--num-blks", "100"], 2, r"exceed the limit of 16 GiB"),
        (["--inject-loss", "1.5"], 2, r"--inject-loss must be in"),
        (["--timeout", "0"], 2, r"--timeout must be a finite number of seconds above 0"),
        (["--method", "rdma", "--buffer", "cuda"], 2, r"--buffer cuda works with --method mpi only"),
    ],
)
def test_validation_errors_are_one_line(argv, world, pattern):
    with pytest.raises(UsageError) as err:
        validate(parse(argv), world)
    assert re.search(pattern, str(err.value)) and "\n" not in str(err.value)


@pytest.mark.parametrize("argv", [["--method", "tcp"], ["--test", "zeros"], ["--buffer", "rocm"], ["--nmsg", "lots"]])
def test_unknown_choices_raise_usage_error(argv):
    with pytest.raises(UsageError, match="invalid"):
        parse(argv)


# ---------------------------------------------------------------- roles


def test_roles_match_the_seed():
    # mpirun -c 3 ... --nrx 1 --nlink 2: receiver 0 with streams 0 and 1; transmitters 0 and 1
    r0, r1, r2 = (role_of(r, 1, 2) for r in range(3))
    assert r0.is_receiver and r0.peers == (1, 2) and r0.streams == 2
    assert (r1.kind, r1.index, r1.peers) == ("transmitter", 0, (0,))
    assert (r2.kind, r2.index, r2.peers) == ("transmitter", 1, (0,))
    # 10 pairs: rank 10+t sends to receiver t, stream 0
    for t in range(10):
        assert role_of(10 + t, 10, 10).peers == (t,) and stream_of(t, 10) == 0
    assert transmitters_of(1, 2, 5) == (3, 5)
    with pytest.raises(ValueError):
        role_of(3, 1, 2)


# ---------------------------------------------------------------- ring


def test_slot_arithmetic():
    slots, size = 1000, 65536
    assert ring.slot_of(1234, slots) == 234
    assert ring.block_of(ring.slot_of(1234, slots), 100) == 2
    assert ring.slot_offset(1234, slots, size) == 234 * size
    assert ring.remote_address(0x10000, 999, slots, size) == 0x10000 + 999 * size
    assert ring.remote_address(0x10000, 1000, slots, size) == 0x10000
    np.testing.assert_array_equal(ring.slot_of(np.arange(998, 1003), slots), [998, 999, 0, 1, 2])


def test_skipped_seqs_exact_and_reproducible():
    a = ring.skipped_seqs(10_000, 0.013, seed=7, stream=0)
    assert a.size == 130 and np.unique(a).size == 130 and a.min() >= 0 and a.max() < 10_000
    np.testing.assert_array_equal(a, ring.skipped_seqs(10_000, 0.013, seed=7, stream=0))
    assert not np.array_equal(a, ring.skipped_seqs(10_000, 0.013, seed=7, stream=1))
    assert ring.skipped_seqs(100, 0.0, 1).size == 0


def test_skipped_seqs_of_a_huge_count_cost_memory_per_skipped_message_only():
    # 10**12 messages: listing them all (numpy's choice) would need 8 TB
    a = ring.skipped_seqs(10**12, 2e-6, seed=3, stream=1)
    assert a.size == 2_000_000 and bool((np.diff(a) > 0).all())
    assert a[0] >= 0 and a[-1] < 10**12 and a[-1] > 10**12 // 2
    np.testing.assert_array_equal(a, ring.skipped_seqs(10**12, 2e-6, seed=3, stream=1))


def test_send_windows_skip_and_stop():
    skipped = np.array([0, 5, 6, 7, 8, 9, 23])
    wins = list(ring.send_windows(30, 5, skipped))
    sent = np.concatenate([s for _, s in wins])
    assert set(sent.tolist()) == set(range(30)) - set(skipped.tolist())
    assert [w for w, _ in wins] == [0, 2, 3, 4, 5]  # window 1 (5..9) fully skipped
    assert all((s // 5 == w).all() for w, s in wins)
    tail = np.concatenate([s for _, s in ring.send_windows(30, 5, None, stop=17)])
    np.testing.assert_array_equal(tail, np.arange(17))


@pytest.mark.parametrize("test", ["ones", "increment"])
def test_patterns_detect_corruption_and_drift(test):
    w = 64 // 8
    rows = np.zeros((4, w), dtype=np.uint64)
    if test == "ones":
        ring.fill_ones(rows)
    seqs = np.array([10, 11, 12, 13])
    ring.fill_messages(rows, seqs, test)
    assert ring.count_corrupt(rows, seqs, test) == 0
    bad = rows.copy()
    bad.view(np.uint8)[1, 20] ^= 0x40  # a flipped bit in message 11's payload
    assert ring.count_corrupt(bad, seqs, test) == 1
    # a stale slot: the content of an older lap (seq - slots) where seq was expected
    stale = rows.copy()
    ring.fill_messages(stale[2:3], np.array([12 - 4]), test)
    assert ring.count_corrupt(stale, seqs, test) == 1


def test_increment_is_one_counter_over_the_stream():
    rows = np.zeros((3, 4), dtype=np.uint64)
    ring.fill_messages(rows, np.array([0, 1, 2]), "increment")
    assert rows[:, 1:].tolist() == [[1, 2, 3], [5, 6, 7], [9, 10, 11]]
    assert rows[:, 0].tolist() == [0, 1, 2]


# ---------------------------------------------------------------- stats


def test_gap_accounting_no_loss_in_batches():
    c = GapCounter(1000)
    for a in range(0, 1000, 100):
        c.add(np.arange(a, a + 100))
    r = c.finish(1000)
    assert (r.received, r.missed, r.total, r.loss_rate, r.gaps, r.bad) == (1000, 0, 1000, 0.0, 0, 0)


def test_gap_accounting_inner_leading_and_tail_loss():
    c = GapCounter(100)
    c.add(np.array([2, 3, 5]))  # 0, 1 and 4 missing
    c.add(np.array([6, 9]))  # 7, 8 missing
    c.add(np.array([10]))
    r = c.finish(15)  # 11..14 lost at the tail
    assert r.received == 6 and r.missed == 9 and r.total == 15 and r.gaps == 4
    assert r.loss_rate == pytest.approx(9 / 15)


def test_gap_accounting_everything_lost():
    r = GapCounter(10).finish(10)
    assert (r.received, r.missed, r.loss_rate, r.gaps) == (0, 10, 1.0, 1)


def test_gap_accounting_duplicates_reordering_out_of_range():
    c = GapCounter(20)
    c.add(np.array([0, 1, 1, 3, 2, 4, 25]))
    r = c.finish(20)
    assert r.received == 4 and r.bad == 3 and r.missed == 16


def test_gap_accounting_reads_the_ring_s_header_column_in_place():
    # the mpi receiver hands GapCounter a strided uint64 view of its ring's headers (no copy);
    # a corrupt header >= 2**63 or a repeat in a block is counted bad, never received
    ring_words = np.zeros((8, 16), dtype=np.uint64)
    headers = ring_words[:, 0]
    c = GapCounter(100)
    headers[:] = np.arange(8, dtype=np.uint64)
    c.add(headers[0:4])
    c.add(headers[4:8])
    headers[:] = [8, 9, 9, 2**63 + 5, 12, 13, 14, 15]
    c.add(headers[0:8])
    r = c.finish(16)
    assert (r.received, r.bad, r.missed, r.gaps) == (14, 2, 2, 1)  # 10, 11 missing


def test_gap_accounting_matches_a_reference_on_random_losses():
    rng = np.random.default_rng(1)
    keep = np.sort(rng.choice(50_000, 47_000, replace=False))
    c = GapCounter(50_000)
    for part in np.array_split(keep, 97):
        c.add(part)
    r = c.finish(50_000)
    assert r.received == 47_000 and r.missed == 3_000 and r.loss_rate == 0.06


# ---------------------------------------------------------------- output

SEED_RX = re.compile(
    r"^INFO:__main__:Rank (\d+) receiver from transmitter (\d+), "
    r"(elapsed time is [\d.e+-]+ seconds|data rate is [\d.e+-]+ Gbps|message missed is \d+|"
    r"message received is \d+|message total is \d+|message loss rate is [\d.e+-]+|message corrupt is \d+)$"
)
SEED_TX = re.compile(r"^INFO:__main__:Rank (\d+) transmitter (elapsed time is [\d.e+-]+ seconds|data rate is [\d.e+-]+ Gbps)$")


def test_lines_have_the_seed_format(capsys):
    s = output.StreamReport(1, 2, 65536, 999, 1, 1000, 0.001, 0, 0.5)
    output.emit(output.receiver_lines(output.RxReport(0, 0, "h", [s])))
    output.emit(output.transmitter_lines(output.TxReport(2, 1, 0, "h", 65536, 1000, 1000, 0.5)))
    output.emit([output.buffer_line("seren-01", "receiver", (1, 10, 100, 65536))])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "INFO:__main__:Rank 0 receiver from transmitter 1, elapsed time is 0.5 seconds"
    assert lines[2] == "INFO:__main__:Rank 0 receiver from transmitter 1, message missed is 1"
    assert lines[5] == "INFO:__main__:Rank 0 receiver from transmitter 1, message loss rate is 0.001"
    assert all(SEED_RX.match(x) for x in lines[:7]) and lines[7] == ""
    assert lines[8] == "INFO:__main__:Rank 1 transmitter elapsed time is 0.5 seconds"
    assert SEED_TX.match(lines[9]) and lines[9].endswith(f"data rate is {65536000 * 8 / 0.5 / 1e9} Gbps")
    assert lines[10] == "INFO:__main__:seren-01, rdma_buffers for receiver shape is (1, 10, 100, 65536)"


def test_rate_is_payload_bits_per_second():
    assert output.gbps(100_000 * 65536, 0.5373530387878418) == pytest.approx(97.5686, rel=1e-5)
    assert output.gbps(10, 0.0) == 0.0


# ---------------------------------------------------------------- buffers


def test_host_buffer_views():
    b = Buffer((2, 3, 4, 64))
    assert b.array.shape == (2, 3, 4, 64) and b.words.shape == (2, 3, 4, 8) and b.nbytes == 1536


@pytest.mark.parametrize("shape, align", [((4, 64), PAGE), ((64, 65536), HUGE_PAGE),
                                          ((2, 64, 262144), HUGE_PAGE), ((3, 4104), PAGE)])
def test_host_rings_start_on_a_page_or_a_huge_page(shape, align):
    # numpy alone aligns to 64 B: every slot then spans one page more, and txrx lost a quarter
    # of its rate at 64 KiB (docs/txrx.md, Benchmark)
    for _ in range(5):  # whatever malloc returns
        b = Buffer(shape)
        assert b.array.ctypes.data % align == 0, (shape, b.array.ctypes.data % align)
        assert b.array.shape == shape and b.array.flags.c_contiguous and not b.array.any()
        b.words[...] = 7  # the words view covers the whole ring
        assert int(b.array.sum()) == 7 * b.nbytes // 8


def test_cuda_buffer_without_cupy_is_a_clear_error(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "cupy":
            raise ImportError("no cupy")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(Unavailable, match="needs CuPy"):
        Buffer((1, 8), "cuda")


@pytest.mark.parametrize(
    "vendor, kw, expect",
    [
        ("Open MPI", {"query": True}, True),
        ("Open MPI", {"mpix": False}, False),
        ("Open MPI", {"ompi_info": "mca:mpi:base:param:mpi_built_with_cuda_support:value:true\n"}, True),
        ("Open MPI", {"ompi_info": "mca:mpi:base:param:mpi_built_with_cuda_support:value:false\n"}, False),
        ("Open MPI", {}, None),
        ("MPICH", {"env": {"MPIR_CVAR_ENABLE_GPU": "1"}}, True),
        ("MPICH", {"env": {"MPICH_GPU_SUPPORT_ENABLED": "1"}}, True),
        ("MPICH", {"env": {}}, False),
        ("Whatever MPI", {"env": {}}, None),
        ("MPICH", {"env": {"FABRICTEST_ASSUME_CUDA_AWARE": "1"}}, True),
        # Open MPI 4.x built with CUDA, its support switched off at run time (an H100 crashed)
        ("Open MPI", {"mpix": True, "ompi_switch": False}, False),
        ("Open MPI", {"query": True, "ompi_switch": False}, False),
        ("Open MPI", {"mpix": True, "ompi_switch": True}, True),
        ("Open MPI", {"mpix": True, "ompi_switch": None}, True),
        ("Open MPI", {"mpix": True, "ompi_switch": False,
                      "env": {"FABRICTEST_ASSUME_CUDA_AWARE": "1"}}, True),
    ],
)
def test_cuda_aware_decision(vendor, kw, expect):
    kw.setdefault("env", {})
    assert decide_cuda_aware(vendor, **kw)[0] is expect


def test_options_defaults_are_the_seeds():
    o = Options()
    assert (o.msg_size, o.num_blks, o.num_cmsgs, o.nmsg) == (65536, 10, 100, 100_000)

"""The `mpi` method: persistent non-blocking sends/receives over preallocated rings.

Transmitter: one persistent send per ring slot. Messages go out a window (at most `num_cmsgs`
consecutive sequence numbers, fewer where `--inject-loss` skips some) at a time into the next
block of the ring with one `Startall`; up to `num_blks` blocks are in flight and a block is
reused once all its sends completed. Each message carries its sequence number in its first
8 bytes. At the end the transmitter sends its final count (sequence numbers covered, messages
sent) on a separate tag.

Receiver: one persistent receive per slot and stream, the whole ring posted ahead. Messages
complete in posting order (MPI's non-overtaking rule), so the receiver tests the oldest
block, reads the headers of the completed messages as one array, accounts for them
(stats.GapCounter), checks payloads for `--test ones|increment` and re-posts the block. The
final count tells it how many messages to wait for and how many sequence numbers were covered,
so skipped and tail messages are counted as missed and nothing is waited for forever.
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from fabrictest.txrx import faults, ring
from fabrictest.txrx.errors import Fault
from fabrictest.txrx.output import StreamReport, TxReport
from fabrictest.txrx.progress import Progress
from fabrictest.txrx.stats import GapCounter
from fabrictest.txrx.sync import Deadline, barrier, wait

DATA_TAG = 0x7178
FINAL_TAG = 0x7179


def _free(reqs) -> None:
    for r in reqs:
        try:
            r.Free()
        except Exception:
            pass


def transmit(comm, opts, role, buf, host: str) -> TxReport:
    from mpi4py import MPI

    slots, cm, blks = opts.slots, opts.num_cmsgs, opts.num_blks
    dest = role.peers[0]
    data = buf.array.reshape(slots, opts.msg_size)
    rows = buf.words.reshape(slots, opts.msg_size // 8)
    xp = buf.xp
    reqs = [comm.Send_init(data[i], dest, DATA_TAG) for i in range(slots)]
    if opts.test == "ones":
        ring.fill_ones(rows, xp)
    skipped = ring.skipped_seqs(opts.nmsg, opts.inject_loss, opts.seed, role.index)
    stop = faults.stop_at(opts.fault, role.rank)
    fault = opts.fault if opts.fault and opts.fault.rank == role.rank else None
    timeout = opts.timeout
    who = f"Rank {role.index} transmitter (rank {role.rank})"
    testall = MPI.Request.Testall
    startall = MPI.Prequest.Startall

    def wait_block(block) -> None:
        if testall(block):
            return
        deadline = Deadline(timeout)
        while not testall(block):
            if deadline.expired():
                raise Fault(
                    f"{who}: receiver rank {dest} took no message for {timeout:g} s: "
                    "it stopped receiving or died"
                )

    blocks = [reqs[b * cm : (b + 1) * cm] for b in range(blks)]
    inflight: deque = deque()
    sent = 0
    barrier(comm, timeout, f"{who}: waiting for every rank to start")
    t0 = time.perf_counter()
    for i, (_w, seqs) in enumerate(ring.send_windows(opts.nmsg, cm, skipped, stop)):
        if len(inflight) == blks:
            wait_block(inflight.popleft())
        n = seqs.size
        lo = (i % blks) * cm
        ring.fill_messages(rows[lo : lo + n], seqs, opts.test, xp)
        buf.sync()
        block = blocks[i % blks] if n == cm else reqs[lo : lo + n]
        startall(block)
        inflight.append(block)
        sent += n
        if fault is not None:
            faults.trigger(fault, role.rank, sent, timeout)
    while inflight:
        wait_block(inflight.popleft())
    elapsed = time.perf_counter() - t0
    final = np.array([opts.nmsg, sent], dtype=np.int64)
    wait(comm.Isend(final, dest, FINAL_TAG), timeout, f"{who}: sending the final count")
    _free(reqs)
    return TxReport(role.rank, role.index, dest, host, opts.msg_size, sent, opts.nmsg, elapsed)


class _Stream:
    __slots__ = (
        "k", "src", "reqs", "rows", "final", "final_req", "total", "sent", "posted",
        "received", "corrupt", "counter", "t_last", "done", "blocks", "until",
    )  # fmt: skip

    def __init__(self, k, src, reqs, rows, limit):
        self.k = k
        self.src = src
        self.reqs = reqs
        self.rows = rows
        self.final = np.zeros(2, dtype=np.int64)
        self.final_req = None
        self.total = None  # sequence numbers covered, from the final count
        self.sent = None  # messages sent, from the final count
        self.posted = 0
        self.received = 0  # messages completed (positions consumed)
        self.corrupt = 0
        self.counter = GapCounter(limit)
        self.t_last = None
        self.done = False
        self.until = 0.0  # this stream's deadline (monotonic): its own progress moves it


def receive(comm, opts, role, buf, host: str) -> list[StreamReport]:
    from mpi4py import MPI

    slots, cm = opts.slots, opts.num_cmsgs
    nstreams = role.streams
    data = buf.array.reshape(nstreams, slots, opts.msg_size)
    words = buf.words.reshape(nstreams, slots, opts.msg_size // 8)
    xp = buf.xp
    check = opts.test != "throughput"
    fault = opts.fault if opts.fault and opts.fault.rank == role.rank else None
    timeout = opts.timeout
    streams = []
    for k, src in enumerate(role.peers):
        reqs = [comm.Recv_init(data[k, i], src, DATA_TAG) for i in range(slots)]
        st = _Stream(k, src, reqs, words[k], opts.nmsg)
        st.blocks = [reqs[b * cm : (b + 1) * cm] for b in range(opts.num_blks)]
        streams.append(st)
    for st in streams:
        st.final_req = comm.Irecv(st.final, st.src, FINAL_TAG)
    testall = MPI.Request.Testall
    startall = MPI.Prequest.Startall

    barrier(comm, timeout, f"Rank {role.index} receiver: waiting for every rank to start")
    t0 = time.perf_counter()
    for st in streams:
        st.posted = min(slots, opts.nmsg)
        startall(st.reqs[: st.posted])
    active = list(streams)
    start = time.monotonic()
    for st in active:
        st.until = start + timeout
    total_received = 0
    reporter = Progress.of(opts, role)  # rank 0's progress line
    while active:
        now = None
        for st in active:
            progress = False
            p = st.received
            end = min((p // cm + 1) * cm, st.posted)
            if st.sent is not None:
                end = min(end, st.sent)
            n = end - p
            if n > 0:
                slot = p % slots
                block = st.blocks[slot // cm] if n == cm else st.reqs[slot : slot + n]
                if not testall(block):
                    if st.total is None and st.final_req.Test():
                        st.total, st.sent = int(st.final[0]), int(st.final[1])
                        progress = True
                else:
                    t = time.perf_counter()
                    rows = st.rows[slot : slot + n]
                    seqs = buf.host(rows[:, 0]).astype(np.int64)
                    st.counter.add(seqs)
                    if check:
                        st.corrupt += ring.count_corrupt(rows, seqs, opts.test, xp)
                    st.received = end
                    st.t_last = t
                    again = min(n, opts.nmsg - st.posted)
                    if again > 0:
                        startall(block if again == n else block[:again])
                        st.posted += again
                    progress = True
                    total_received += n
                    if reporter is not None:
                        reporter.update(total_received)
                    if fault is not None:
                        faults.trigger(fault, role.rank, total_received, timeout)
            elif st.total is None and st.final_req.Test():
                st.total, st.sent = int(st.final[0]), int(st.final[1])
                progress = True
            if st.sent is not None and st.received >= st.sent:
                st.done = True
            # each stream has its own deadline: a stalled one is reported even while others flow
            if now is None:
                now = time.monotonic()
            if progress:
                st.until = now + timeout
            elif now > st.until:
                got = f"received {st.received} of {opts.nmsg}"
                raise Fault(
                    f"Rank {role.index} receiver from transmitter {st.k}: nothing arrived for "
                    f"{timeout:g} s ({got}, final count {'not ' if st.total is None else ''}"
                    f"received): its transmitter (rank {st.src}) stopped sending or died"
                )
        if any(st.done for st in active):
            active = [st for st in active if not st.done]
    reports = []
    for st in streams:
        _cancel(st, slots, timeout)
        counts = st.counter.finish(st.total)
        elapsed = (st.t_last or time.perf_counter()) - t0
        reports.append(
            StreamReport(
                st.k, st.src, opts.msg_size, counts.received, counts.missed, counts.total,
                counts.loss_rate, st.corrupt, elapsed, counts.gaps, counts.bad,
            )  # fmt: skip
        )
    return reports


def _cancel(st: _Stream, slots: int, timeout: float) -> None:
    """Cancel the receives still posted beyond the last message, then free all requests."""
    pending = [st.reqs[p % slots] for p in range(st.received, st.posted)]
    for r in pending:
        r.Cancel()
    deadline = Deadline(timeout)
    for r in pending:
        while not r.Test():
            if deadline.expired():
                raise Fault("cancelling unused receives did not finish")
    _free(st.reqs)

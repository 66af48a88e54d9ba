"""The `mpi` method: persistent non-blocking sends/receives over preallocated rings.

Transmitter: one persistent send per ring slot. Messages go out a window (at most `num_cmsgs`
consecutive sequence numbers, fewer where `--inject-loss` skips some) at a time into the next
block of the ring with one `Startall`; up to `num_blks` blocks are in flight and a block is
reused once all its sends completed. Each message carries its sequence number in its first
8 bytes, written for a whole window by one array operation into the ring's header column. At
the end the transmitter sends its final count (sequence numbers covered, messages sent) on a
separate tag.

Receiver: one persistent receive per slot and stream, the whole ring posted ahead. Messages
complete in posting order (MPI's non-overtaking rule), so the receiver waits for the oldest
block of any of its streams (one test of the whole block at a time: completion in batches),
accounts for the block's sequence numbers read in place (stats.GapCounter), checks payloads
for `--test ones|increment` and re-posts the block. The final count tells it how many
messages to wait for and how many sequence numbers were covered, so skipped and tail messages
are counted as missed and nothing is waited for forever.

The rings (`rings`): compiled (fabrictest.txrx._loop: the waits spin in C, the scan and the
checks run in C) or through mpi4py; the loop is this one either way. Nothing is done per
message in Python. The clock is read twice per completed block (the stream's last arrival and
the loop's own time, below); a wait returns after at most `SLICE` seconds, and then, or every
`HOUSEKEEPING` blocks, the loop looks at deadlines, final counts and the progress line.

The loop's own time (bottleneck.LoopTime) is what a rank spends on a block between seeing it
complete and having re-posted it (accounting, checks, header writes, `Startall`): what it adds
to each message on top of the MPI library's, which `bottleneck` judges against the line rate.
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from fabrictest.txrx import faults, ring
from fabrictest.txrx.bottleneck import LoopTime
from fabrictest.txrx.errors import Fault
from fabrictest.txrx.output import StreamReport, TxReport
from fabrictest.txrx.progress import Progress
from fabrictest.txrx.stats import GapCounter
from fabrictest.txrx.sync import Deadline, barrier, wait

from .rings import Rings

DATA_TAG = 0x7178
FINAL_TAG = 0x7179
#: blocks handled between two looks at the clock, the final counts and the deadlines while
#: blocks keep completing (a wait with nothing to show looks at them too)
HOUSEKEEPING = 64
#: the longest one wait spins before the loop looks at its deadlines (seconds)
SLICE = 0.01


def _windows(opts, cm: int, skipped: np.ndarray, stop: int | None):
    """(first seq, n, seqs or None) per window; None: the n consecutive numbers from first."""
    if skipped.size == 0 and stop is None:
        for first in range(0, opts.nmsg, cm):
            yield first, min(cm, opts.nmsg - first), None
        return
    for _w, seqs in ring.send_windows(opts.nmsg, cm, skipped, stop):
        yield int(seqs[0]), int(seqs.size), seqs


def transmit(comm, opts, role, buf, host: str, rings: Rings) -> TxReport:
    slots, cm, blks = opts.slots, opts.num_cmsgs, opts.num_blks
    dest = role.peers[0]
    data = buf.array.reshape(slots, opts.msg_size)
    rows = buf.words.reshape(slots, opts.msg_size // 8)
    headers = rows[:, 0]  # the header column (a strided view): one write per window
    xp = buf.xp
    ramp = xp.arange(cm, dtype=xp.uint64)
    tx = rings.ring(comm, data, dest, DATA_TAG, send=True)
    if opts.test == "ones":
        ring.fill_ones(rows, xp)
    payload = opts.test == "increment"
    skipped = ring.skipped_seqs(opts.nmsg, opts.inject_loss, opts.seed, role.index)
    stop = faults.stop_at(opts.fault, role.rank)
    spoil = faults.corrupt_every(opts.fault, role.rank)
    fault = opts.fault if opts.fault and opts.fault.rank == role.rank else None
    timeout = opts.timeout
    slice_s = min(SLICE, timeout)
    who = f"Rank {role.index} transmitter (rank {role.rank})"
    clock = time.perf_counter

    def wait_block(lo: int, n: int) -> None:
        if tx.test(lo, n):
            return
        deadline = Deadline(timeout)
        while not tx.wait(lo, n, slice_s):
            if deadline.expired():
                raise Fault(
                    f"{who}: receiver rank {dest} took no message for {timeout:g} s: "
                    "it stopped receiving or died"
                )

    inflight: deque = deque()
    sent = 0
    own = LoopTime()
    barrier(comm, timeout, f"{who}: waiting for every rank to start")
    t0 = clock()
    for i, (first, n, seqs) in enumerate(_windows(opts, cm, skipped, stop)):
        if len(inflight) == blks:
            wait_block(*inflight.popleft())
        t = clock()
        lo = (i % blks) * cm
        if seqs is None and not payload:
            ring.number_headers(headers[lo : lo + n], first, ramp, xp)
        else:
            if seqs is None:
                seqs = np.arange(first, first + n, dtype=np.int64)
            ring.fill_messages(rows[lo : lo + n], seqs, opts.test, xp)
        if spoil is not None:
            faults.corrupt_window(rows[lo : lo + n], first, n, seqs, spoil)
        buf.sync()
        tx.start(lo, n)
        inflight.append((lo, n))
        sent += n
        own.add(clock() - t, n)
        if fault is not None:
            faults.trigger(fault, role.rank, sent, timeout)
    while inflight:
        wait_block(*inflight.popleft())
    elapsed = clock() - t0
    final = np.array([opts.nmsg, sent], dtype=np.int64)
    wait(comm.Isend(final, dest, FINAL_TAG), timeout, f"{who}: sending the final count")
    tx.free()
    return TxReport(role.rank, role.index, dest, host, opts.msg_size, sent, opts.nmsg, elapsed,
                    own=own)  # fmt: skip


class _Stream:
    """One transmitter's stream into this receiver: its ring, requests and counts.

    `p` is the position (messages completed so far, in posting order); the block waited for
    is `n` messages from ring slot `slot` (`entry`: (ring, slot, n); None when nothing is
    posted to wait for)."""

    __slots__ = (
        "k", "src", "ring", "rows", "final", "final_req", "total", "sent", "posted", "p",
        "slot", "n", "entry", "corrupt", "counter", "t_last", "done", "until", "seen",
    )  # fmt: skip

    def __init__(self, k, src, ring_, rows, limit):
        self.k = k
        self.src = src
        self.ring = ring_
        self.rows = rows
        self.final = np.zeros(2, dtype=np.int64)
        self.final_req = None
        self.total = None  # sequence numbers covered, from the final count
        self.sent = None  # messages sent, from the final count
        self.posted = 0
        self.p = 0  # messages completed (positions consumed)
        self.slot = 0
        self.n = 0
        self.entry = None
        self.corrupt = 0
        self.counter = GapCounter(limit)
        self.t_last = None
        self.done = False
        self.until = 0.0  # this stream's deadline (monotonic): its own progress moves it
        self.seen = 0  # position at the last housekeeping

    def aim(self, slots: int, cm: int) -> None:
        """The next batch to wait for: the rest of the current ring block, no further than
        what was posted and (once known) what was sent."""
        p = self.p
        end = min((p // cm + 1) * cm, self.posted)
        if self.sent is not None:
            end = min(end, self.sent)
        self.n = n = max(0, end - p)
        self.slot = p % slots
        self.entry = (self.ring, self.slot, n) if n else None


def receive(comm, opts, role, buf, host: str, rings: Rings) -> tuple[list[StreamReport], LoopTime]:
    """Every stream's report, and the loop's own time."""
    slots, cm = opts.slots, opts.num_cmsgs
    nstreams = role.streams
    data = buf.array.reshape(nstreams, slots, opts.msg_size)
    words = buf.words.reshape(nstreams, slots, opts.msg_size // 8)
    xp = buf.xp
    check = opts.test != "throughput"
    fault = opts.fault if opts.fault and opts.fault.rank == role.rank else None
    timeout = opts.timeout
    slice_s = min(SLICE, timeout)
    streams = [_Stream(k, src, rings.ring(comm, data[k], src, DATA_TAG, send=False), words[k],
                       opts.nmsg) for k, src in enumerate(role.peers)]  # fmt: skip
    for st in streams:
        st.final_req = comm.Irecv(st.final, st.src, FINAL_TAG)
    clock = time.perf_counter
    host_array = buf.host
    nmsg = opts.nmsg
    own = LoopTime()

    barrier(comm, timeout, f"Rank {role.index} receiver: waiting for every rank to start")
    t0 = clock()
    for st in streams:
        st.posted = min(slots, nmsg)
        st.ring.start(0, st.posted)
        st.aim(slots, cm)
    active = list(streams)
    start = time.monotonic()
    for st in active:
        st.until = start + timeout
    total_received = 0
    reporter = Progress.of(opts, role)  # rank 0's progress line
    blocks = 0
    waiting = [st for st in active if st.entry is not None]
    entries = [st.entry for st in waiting]
    while active:
        finished = False
        i = rings.wait_any(entries, slice_s)
        if i >= 0:
            st = waiting[i]
            t = clock()
            n, slot = st.n, st.slot
            rows = st.rows[slot : slot + n]
            run = rings.scan(rows, st.counter.last, nmsg)
            if run is not None:
                st.counter.add_run(run[0], run[1], n, run[2])
            else:
                st.counter.add(host_array(rows[:, 0]))
            if check:
                st.corrupt += rings.corrupt(rows, opts.test, host_array, xp)
            st.p += n
            again = min(n, nmsg - st.posted)
            if again > 0:
                st.ring.start(slot, again)
                st.posted += again
            st.t_last = t
            st.aim(slots, cm)
            total_received += n
            if st.sent is not None and st.p >= st.sent:
                st.done = finished = True
            waiting = [x for x in active if x.entry is not None and not x.done]
            entries = [x.entry for x in waiting]
            own.add(clock() - t, n)
            if fault is not None:
                faults.trigger(fault, role.rank, total_received, timeout)
            blocks += 1
            if blocks < HOUSEKEEPING and not finished:
                continue
        blocks = 0
        # housekeeping (a wait that timed out, or every HOUSEKEEPING blocks): final counts,
        # each stream's own deadline (a stalled one is reported even while others flow), the
        # progress line
        now = time.monotonic()
        for st in active:
            if st.total is None and st.final_req.Test():
                st.total, st.sent = int(st.final[0]), int(st.final[1])
                st.aim(slots, cm)
                st.until = now + timeout
                if st.p >= st.sent:
                    st.done = finished = True
            if st.p != st.seen:
                st.seen = st.p
                st.until = now + timeout
            elif not st.done and now > st.until:
                got = f"received {st.p} of {nmsg}"
                raise Fault(
                    f"Rank {role.index} receiver from transmitter {st.k}: nothing arrived for "
                    f"{timeout:g} s ({got}, final count {'not ' if st.total is None else ''}"
                    f"received): its transmitter (rank {st.src}) stopped sending or died"
                )
        if reporter is not None:
            reporter.update(total_received)
        if finished:
            active = [st for st in active if not st.done]
        waiting = [x for x in active if x.entry is not None]
        entries = [x.entry for x in waiting]
    reports = []
    for st in streams:
        _cancel(st, slots, timeout)
        counts = st.counter.finish(st.total)
        elapsed = (st.t_last or clock()) - t0
        reports.append(
            StreamReport(
                st.k, st.src, opts.msg_size, counts.received, counts.missed, counts.total,
                counts.loss_rate, st.corrupt, elapsed, counts.gaps, counts.bad,
            )  # fmt: skip
        )
    return reports, own


def _cancel(st: _Stream, slots: int, timeout: float) -> None:
    """Cancel the receives still posted beyond the last message, then free the ring."""
    first, left = st.p % slots, st.posted - st.p
    while left > 0:  # the posted slots, wrapping round the ring's end
        n = min(left, slots - first)
        if not st.ring.cancel(first, n, timeout):
            raise Fault("cancelling unused receives did not finish")
        first, left = 0, left - n
    st.ring.free()

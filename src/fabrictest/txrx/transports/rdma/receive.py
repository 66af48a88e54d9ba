"""The receiver of the rdma method: one QP per stream, all completing on one CQ.

Receive requests (no data: RDMA WRITE WITH IMMEDIATE lands in the ring, the receive only
carries the immediate) are posted as chains of depth/4. Completions are polled in batches of
64; their immediates are accounted per stream as arrays (stats.GapCounter), payloads checked
for `--test ones|increment` and the slots' headers poisoned so a message that never lands in
a later lap shows up, and the transmitter is granted credit to rewrite the slots checked
(`credits`). Each stream has its own deadline. After a transmitter's final count the
receiver drains for DRAIN_GRACE seconds more and counts what did not arrive as missed.
"""

from __future__ import annotations

import os
import time

import numpy as np

from fabrictest.txrx import faults, ring
from fabrictest.txrx.bottleneck import LoopTime
from fabrictest.txrx.errors import Fault
from fabrictest.txrx.output import StreamReport
from fabrictest.txrx.progress import Progress
from fabrictest.txrx.stats import GapCounter
from fabrictest.txrx.sync import barrier

from . import credits, verbs
from .transmit import FINAL_TAG
from .verbs import E, seqs_from_imm

DRAIN_GRACE = 0.2  # seconds to wait for stragglers after a transmitter's final count
BATCH = 64  # completions per poll
HOUSEKEEPING = 0.01  # seconds between final-count and deadline checks while batches are full


def receive(comm, opts, role, pv, qps, cq, sink, words, depth: int) -> tuple[list, float, LoopTime]:
    """The streams' reports, the CPU seconds of the receive loop and its own time (a poll that
    returned completions and their handling; empty polls are waiting)."""
    slots = opts.slots
    nstreams = len(qps)
    chain_n = max(1, depth // 4)
    sge = pv.SGE(verbs.buffer_address(sink), 64, sink.lkey)
    chain = [pv.RecvWR(wr_id=i, num_sge=1, sg=[sge]) for i in range(chain_n)]
    for a, b in zip(chain, chain[1:], strict=False):
        a.next_wr = b
    for qp in qps:
        for _ in range(depth // chain_n):
            qp.post_recv(chain[0])
    consumed = [0] * nstreams
    by_qpn = {qp.qp_num: k for k, qp in enumerate(qps)}
    counters = [GapCounter(opts.nmsg) for _ in range(nstreams)]
    corrupt = [0] * nstreams
    t_last: list[float | None] = [None] * nstreams
    finals = [np.zeros(2, dtype=np.int64) for _ in range(nstreams)]
    freqs = [comm.Irecv(finals[k], role.peers[k], FINAL_TAG) for k in range(nstreams)]
    total: list[int | None] = [None] * nstreams
    final_at: list[float] = [0.0] * nstreams
    done = [False] * nstreams
    check = opts.test != "throughput"
    grants = [credits.Grants(comm, peer) for peer in role.peers] if check else None
    ok = E("IBV_WC_SUCCESS")
    fault = opts.fault if opts.fault and opts.fault.rank == role.rank else None
    who = f"Rank {role.index} receiver"
    received_all = 0
    barrier(comm, opts.timeout, f"{who}: waiting for every rank to start")
    t0, cpu0 = time.perf_counter(), time.thread_time()
    until = [t0 + opts.timeout] * nstreams  # each stream's own deadline
    imms: list[list[int]] = [[] for _ in range(nstreams)]
    next_check = t0
    reporter = Progress.of(opts, role)  # rank 0's progress line
    own = LoopTime()
    clock = time.perf_counter
    while not all(done):
        before = clock()
        n, wcs = cq.poll(BATCH)
        now = clock()
        if not n:
            os.sched_yield()  # nothing arrived: let a transmitter on this core run
        else:
            # only receives complete here (the receiver's QPs send nothing): a good status
            # means a RECV_RDMA_WITH_IMM; anything else stops the run (check_wc)
            if nstreams == 1:
                put = imms[0].append
                for wc in wcs[:n]:
                    if wc.status != ok:
                        verbs.check_wc(wc, who)
                    put(wc.imm_data)
            else:
                for wc in wcs[:n]:
                    if wc.status != ok:
                        verbs.check_wc(wc, who)
                    imms[by_qpn[wc.qp_num]].append(wc.imm_data)
            for k in range(nstreams):
                got = imms[k]
                if not got:
                    continue
                seqs = seqs_from_imm(got)
                imms[k] = []
                counters[k].add(seqs)
                t_last[k] = now
                until[k] = now + opts.timeout
                if check:
                    idx = ring.slot_of(seqs, slots)
                    rows = words[k][idx]
                    corrupt[k] += ring.count_corrupt(rows, seqs, opts.test)
                    words[k][idx, 0] = ring.POISON  # a message that never lands here shows up
                    grants[k].grant(counters[k].last)
                consumed[k] += len(seqs)
                while consumed[k] >= chain_n:
                    qps[k].post_recv(chain[0])
                    consumed[k] -= chain_n
                received_all += len(seqs)
            if reporter is not None:
                reporter.update(received_all)
            own.add(clock() - before, n)
            if fault is not None:
                faults.trigger(fault, role.rank, received_all, opts.timeout)
        if n == BATCH and now < next_check:
            continue  # busy: final counts and deadlines are looked at every HOUSEKEEPING s
        next_check = now + HOUSEKEEPING
        for k in range(nstreams):
            if done[k]:
                continue
            if total[k] is None and freqs[k].Test():
                total[k] = int(finals[k][0])
                final_at[k] = now
                until[k] = now + opts.timeout
            if total[k] is not None:
                c = counters[k]
                quiet = now - max(final_at[k], t_last[k] or 0.0)
                if c.received + c.bad >= total[k] or quiet > DRAIN_GRACE:
                    done[k] = True
                    if grants is not None:
                        grants[k].close(opts.timeout, f"{who} from transmitter {k}")
            if not done[k] and now > until[k]:
                raise Fault(
                    f"{who} from transmitter {k}: nothing arrived for {opts.timeout:g} s (received"
                    f" {counters[k].received} of {opts.nmsg}, final count "
                    f"{'not ' if total[k] is None else ''}received): its transmitter (rank "
                    f"{role.peers[k]}) stopped sending or died"
                )
    cpu = time.thread_time() - cpu0
    out = []
    for k in range(nstreams):
        c = counters[k].finish(total[k])
        elapsed = (t_last[k] or final_at[k]) - t0
        rep = StreamReport(k, role.peers[k], opts.msg_size, c.received, c.missed, c.total,
                           c.loss_rate, corrupt[k], elapsed, c.gaps, c.bad)  # fmt: skip
        rep.simulated = verbs.sim_stats(pv, qps[k])
        out.append(rep)
    return out, cpu, own

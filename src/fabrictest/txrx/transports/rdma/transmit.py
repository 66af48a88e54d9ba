"""The transmitter of the rdma method: chains of RDMA WRITE WITH IMMEDIATE.

Message `seq` is written from the transmitter's slot `seq % slots` to the receiver's slot
`seq % slots` with `seq` (network byte order) as the immediate data, so a lost message never
shifts later ones. Work requests are prebuilt once per slot and linked into chains of L (a
divisor of num_cmsgs that fits half the send queue), the last of each chain signalled: one
`post_send` and one completion per chain. A window with skipped sequence numbers
(`--inject-loss`) gets a fresh chain. With a data check, a slot is rewritten only once the
receiver has checked its previous lap (`credits`). At the end the final count goes to the
receiver over MPI.
"""

from __future__ import annotations

import os
import time
from collections import deque

import numpy as np

from fabrictest.txrx import faults, ring
from fabrictest.txrx.bottleneck import LoopTime
from fabrictest.txrx.errors import Fault
from fabrictest.txrx.output import TxReport
from fabrictest.txrx.sync import Deadline, barrier, wait

from . import credits, verbs
from .verbs import E, imm_of, imms_of

FINAL_TAG = 0x717A


def chain_length(num_cmsgs: int, sq_depth: int) -> int:
    """Work requests per chain: the largest divisor of num_cmsgs that fits half the send queue."""
    limit = max(1, sq_depth // 2)
    for n in range(min(num_cmsgs, limit), 0, -1):
        if num_cmsgs % n == 0:
            return n
    return 1


def transmit(comm, opts, role, pv, qp, cq, mr, rows, remote, depth: int, host: str) -> TxReport:
    slots, size = opts.slots, opts.msg_size
    op = E("IBV_WR_RDMA_WRITE_WITH_IMM")
    signaled = E("IBV_SEND_SIGNALED")
    base = verbs.buffer_address(mr)
    lkey = mr.lkey
    L = chain_length(opts.num_cmsgs, depth)
    # in-flight limit: the send queue, and for data checks never a slot still being sent
    limit = depth if opts.test == "throughput" else min(depth, max(L, slots - L))
    SGE, SendWR = pv.SGE, pv.SendWR

    def make_wr(slot: int, seq: int, flags: int):
        sge = SGE(base + slot * size, size, lkey)
        wr = SendWR(wr_id=slot, opcode=op, num_sge=1, sg=[sge], imm_data=imm_of(seq),
                    send_flags=flags)  # fmt: skip
        wr.set_wr_rdma(remote.rkey, ring.remote_address(remote.addr, slot, slots, size))
        return wr

    wrs = [make_wr(s, s, signaled if (s + 1) % L == 0 else 0) for s in range(slots)]
    for s in range(slots - 1):
        if (s + 1) % L:
            wrs[s].next_wr = wrs[s + 1]
    skipped = ring.skipped_seqs(opts.nmsg, opts.inject_loss, opts.seed, role.index)
    stop = faults.stop_at(opts.fault, role.rank)
    fault = opts.fault if opts.fault and opts.fault.rank == role.rank else None
    who = f"Rank {role.index} transmitter (rank {role.rank})"
    inflight: deque = deque()  # (work requests in the chain, objects to keep alive)
    outstanding = 0
    deadline = Deadline(opts.timeout)

    def poll_once() -> bool:
        nonlocal outstanding
        n, wcs = cq.poll(16)
        for wc in wcs[:n]:
            verbs.check_wc(wc, who)
            count, _keep = inflight.popleft()
            outstanding -= count
        return n > 0

    def reap(need_room: int) -> None:
        while inflight and outstanding + need_room > limit:
            if poll_once():
                deadline.touch()
                continue
            os.sched_yield()  # the send queue is full: the NIC is busy, let others run
            if deadline.expired():
                raise Fault(
                    f"{who}: no send completion for {opts.timeout:g} s: its queue pair or the"
                    f" receiver (rank {role.peers[0]}) stalled"
                )

    gate = credits.Gate(comm, role.peers[0]) if opts.test != "throughput" else None
    occupant = np.full(slots, -1, dtype=np.int64)  # the message last written to each slot

    def wait_credit(seq: int) -> None:
        while not gate.checked(seq):
            if poll_once():
                deadline.touch()
            elif deadline.expired():
                raise Fault(
                    f"{who}: receiver rank {role.peers[0]} granted no credit for {opts.timeout:g} s"
                    f" (a slot is rewritten only after it was checked): it stopped or died"
                )

    sent = 0
    own = LoopTime()  # from a chain's room in the send queue to its post_send returning
    clock = time.perf_counter
    barrier(comm, opts.timeout, f"{who}: waiting for every rank to start")
    t0, cpu0 = clock(), time.thread_time()
    for _w, seqs in ring.send_windows(opts.nmsg, L, skipped, stop):
        n = int(seqs.size)
        reap(n)
        t = clock()
        first_slot = int(seqs[0]) % slots
        if gate is not None:
            idx = ring.slot_of(seqs, slots)
            wait_credit(int(occupant[idx].max()))
            occupant[idx] = seqs
            block = rows[idx]
            ring.fill_messages(block, seqs, opts.test)
            rows[idx] = block
        if n == L and first_slot % L == 0:
            for wr, imm in zip(wrs[first_slot : first_slot + n], imms_of(seqs), strict=True):
                wr.imm_data = imm
            qp.post_send(wrs[first_slot])
            inflight.append((n, None))
        else:  # a window with skipped sequence numbers: a fresh chain
            chain = [make_wr(int(s) % slots, int(s), 0) for s in seqs.tolist()]
            chain[-1].send_flags = signaled
            for a, b in zip(chain, chain[1:], strict=False):
                a.next_wr = b
            qp.post_send(chain[0])
            inflight.append((n, chain))
        outstanding += n
        sent += n
        own.add(clock() - t, n)
        if fault is not None:
            faults.trigger(fault, role.rank, sent, opts.timeout)
    reap(limit + 1)
    elapsed, cpu = time.perf_counter() - t0, time.thread_time() - cpu0
    final = np.array([opts.nmsg, sent], dtype=np.int64)
    wait(comm.Isend(final, role.peers[0], FINAL_TAG), opts.timeout, f"{who}: sending the final count")
    if gate is not None:
        gate.finish(opts.timeout, who)
    rep = TxReport(role.rank, role.index, role.peers[0], host, size, sent, opts.nmsg, elapsed,
                   own=own)  # fmt: skip
    rep.simulated = verbs.sim_stats(pv, qp)
    if rep.simulated is not None:
        rep.simulated.update(provider=pv.times(), loop_cpu_s=cpu)
    return rep

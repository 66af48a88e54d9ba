"""Simulated UC and RC queue pairs: state machine, posting, transmit, landing, completions.

- State machine RESET -> INIT -> RTR -> RTS with the kernel's required and optional attribute
  masks per transition (anything else is EINVAL); any state -> RESET or ERR.
- post_send: EINVAL before RTS; the send queue holds `max_send_wr` requests, a slot is freed
  when the signalled completion that covers it is polled (unsignalled requests wait for the
  next signalled one), ENOMEM beyond; a chain is posted up to the request that does not fit.
- post_recv: EINVAL in RESET, ENOMEM beyond `max_recv_wr`.
- RDMA WRITE (WITH IMMEDIATE) lands at the remote address if the rkey names a region of the
  receiver's PD with remote write access, the bytes lie inside it and the receiving QP allows
  remote writes; otherwise UC drops the packet silently and RC completes the sender's request
  with a remote access error. With immediate data it consumes a posted receive and completes
  it with the immediate, in order; with none posted UC drops, RC waits (RNR, retried forever).
- PSNs advance by packets of the path MTU; UC resynchronises on a gap, RC fails the request.
- Errors move the QP to ERR and flush every outstanding request (WR_FLUSH_ERR completions).
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from collections import deque

from pyverbs.cq import WC
from pyverbs.pyverbs_error import PyverbsRDMAError, PyverbsUserError

from . import config, structs
from .device import EINVAL, ENOMEM, LOCAL_MRS, PD, DeviceAttr, check_local
from .enums import (
    QPS_ERR,
    QPS_INIT,
    QPS_RESET,
    QPS_RTR,
    QPS_RTS,
    QPT_RC,
    QPT_UC,
    REMOTE_WRITE,
    SEND_SIGNALED,
    WC_LOC_PROT_ERR,
    WC_LOC_QP_OP_ERR,
    WC_RDMA_WRITE,
    WC_RECV_RDMA_WITH_IMM,
    WC_REM_ACCESS_ERR,
    WC_RETRY_EXC_ERR,
    WC_SUCCESS,
    WC_WITH_IMM,
    WC_WR_FLUSH_ERR,
    WR_RDMA_WRITE,
    WR_RDMA_WRITE_WITH_IMM,
    M,
    mtu_bytes,
)  # fmt: skip
from .queues import COUNTS, CQ, TIMES, QPInitAttr
from .states import TRANSITIONS
from .wire import F_CORRUPT, F_DROPPED, OPCODE_MASK, Inbound, Link, source_bytes

PSN_MASK = 0xFFFFFF
_SENT = [0]  # writes this process has put on the wire (for the kill fault)


def _wc(wr_id, status, opcode, qp_num, byte_len=0, imm=0, src_qp=0, flags=0):
    return WC(wr_id=wr_id, status=status, opcode=opcode, vendor_err=0, byte_len=byte_len,
              qp_num=qp_num, src_qp=src_qp, imm_data=imm, wc_flags=flags)  # fmt: skip


class QP:
    def __init__(self, creator, init_attr, qp_attr=None):
        if not isinstance(creator, PD) or not isinstance(init_attr, QPInitAttr):
            raise PyverbsUserError("the simulated provider creates QPs from its PD and QPInitAttr")
        if init_attr.qp_type not in (QPT_UC, QPT_RC):
            raise PyverbsUserError("the simulated provider has UC and RC queue pairs only")
        cap, dev = init_attr.cap, DeviceAttr()
        if init_attr.srq is not None or cap is None:
            raise PyverbsUserError("the simulated provider needs a QPCap and no SRQ")
        if not (1 <= cap.max_send_wr <= dev.max_qp_wr and 1 <= cap.max_recv_wr <= dev.max_qp_wr):
            raise PyverbsRDMAError("Failed to create QP", EINVAL)
        if cap.max_send_sge > 1 or cap.max_inline_data:
            raise PyverbsUserError("the simulated provider writes from one SGE, without inline data")
        if not isinstance(init_attr.send_cq, CQ) or not isinstance(init_attr.recv_cq, CQ):
            raise PyverbsRDMAError("Failed to create QP", EINVAL)
        ctx = creator._ctx
        self._pd, self._ctx = creator, ctx
        self.qp_type = init_attr.qp_type
        self._scq, self._rcq = init_attr.send_cq, init_attr.recv_cq
        self._sig_all = bool(init_attr.sq_sig_all)
        self._max_send_wr, self._max_recv_wr = cap.max_send_wr, cap.max_recv_wr
        self._max_send_sge = max(1, cap.max_send_sge)
        self._in = Inbound(ctx._directory, ctx._gid_list())
        self.qp_num = self._in.qpn
        self.qp_state = QPS_RESET
        self._attr = {}
        self._sq: deque = deque()  # posted, not yet on the wire: [wr_id, signaled, error, row]
        self._flight: deque = deque()  # on the wire (or failed), not completed
        self._rq: deque = deque()  # posted receive wr_ids
        self._sq_used = 0
        self._unsignaled = 0
        self._link = None
        self._copy = ctx._wire == "copy"
        f = ctx._faults
        self._faults = f if (f.random or f.stall is not None or f.kill is not None) else None
        self._rng = random.Random(f"{f.seed}:{config.world_rank()}:{self.qp_num}")
        self._stats = dict.fromkeys(("sent", "dropped", "retransmitted", "corrupted", "landed",
                                    "lost", "no_receive", "access_errors", "psn_resyncs"), 0)  # fmt: skip
        self._scq._senders.append(self)
        self._rcq._receivers.append(self)
        if qp_attr is not None:
            qp_attr.qp_state = QPS_INIT
            self.modify(qp_attr, M["STATE"] | M["PKEY_INDEX"] | M["PORT"] | M["ACCESS_FLAGS"])

    # ------------------------------------------------------------------ state machine

    def modify(self, qp_attr, comp_mask):
        if not comp_mask & M["STATE"]:
            raise PyverbsRDMAError("Failed to modify QP state", EINVAL)
        new, cur = int(qp_attr.qp_state), self.qp_state
        if new in (QPS_RESET, QPS_ERR):
            return self._to_reset() if new == QPS_RESET else self._to_error()
        rule = TRANSITIONS.get((cur, new), {}).get(self.qp_type)
        rest = comp_mask & ~M["STATE"]
        if rule is None or rest & rule[0] != rule[0] or rest & ~(rule[0] | rule[1]):
            raise PyverbsRDMAError("Failed to modify QP state", EINVAL)
        a = qp_attr
        if comp_mask & M["PORT"] and a.port_num != 1:
            raise PyverbsRDMAError("Failed to modify QP state", EINVAL)
        if new == QPS_RTR:
            ah = a.ah_attr
            if ah is None or not ah.is_global:  # RoCE needs a GRH
                raise PyverbsRDMAError("Failed to modify QP state", EINVAL)
            try:
                self._ctx.query_gid_type(1, ah.sgid_index)
            except PyverbsRDMAError:
                raise PyverbsRDMAError("Failed to modify QP state", EINVAL) from None
            self._attr.update(dest_qp_num=a.dest_qp_num, dgid=ah.dgid, rq_psn=a.rq_psn,
                             path_mtu=mtu_bytes(a.path_mtu))  # fmt: skip
            self._expect = a.rq_psn & PSN_MASK
        if comp_mask & M["ACCESS_FLAGS"]:
            self._attr["access"] = a.qp_access_flags
        if new == QPS_RTS:
            self._psn = a.sq_psn & PSN_MASK
            if self.qp_type == QPT_RC:
                self._attr["retry_cnt"] = a.retry_cnt
        self.qp_state = new

    def _to_reset(self):
        self._sq.clear(), self._flight.clear(), self._rq.clear()
        self._sq_used = self._unsignaled = 0
        self._link = None
        self._in.reset()
        self._attr = {}
        self.qp_state = QPS_RESET

    def _to_error(self):
        """ERR: every outstanding request completes with a flush error."""
        self.qp_state = QPS_ERR
        flushed = [e[1] for e in self._flight] + [e[0] for e in self._sq]
        self._flight.clear(), self._sq.clear()
        for wr_id in flushed:
            self._scq._push(_wc(wr_id, WC_WR_FLUSH_ERR, WC_RDMA_WRITE, self.qp_num), self, 1)
        while self._rq:
            self._rcq._push(_wc(self._rq.popleft(), WC_WR_FLUSH_ERR, WC_RECV_RDMA_WITH_IMM,
                              self.qp_num))  # fmt: skip

    # ------------------------------------------------------------------ posting

    def post_send(self, wr, bad_wr=None):
        t = time.thread_time()
        try:
            if self.qp_state in (QPS_RESET, QPS_INIT, QPS_RTR):
                raise PyverbsRDMAError("Failed to post send", EINVAL)
            for wr_id, opcode, flags, imm, sges, raddr, rkey in structs.send_chain(
                wr, self._max_send_wr - self._sq_used
            ):
                if len(sges) > self._max_send_sge:
                    raise PyverbsRDMAError("Failed to post send", EINVAL)
                if self._sq_used >= self._max_send_wr:
                    raise PyverbsRDMAError("Failed to post send", ENOMEM)
                self._sq_used += 1
                signaled = self._sig_all or bool(flags & SEND_SIGNALED)
                error, local = 0, (0, 0, 0)
                if opcode not in (WR_RDMA_WRITE, WR_RDMA_WRITE_WITH_IMM):
                    error = WC_LOC_QP_OP_ERR
                elif sges:
                    local = check_local(self._pd, sges)
                    if local is None:
                        error, local = WC_LOC_PROT_ERR, (0, 0, 0)
                key, off, length = local
                self._sq.append([wr_id, signaled, error, [0, opcode, imm, length, key, off,
                                                          raddr, rkey]])  # fmt: skip
            if self.qp_state == QPS_ERR:
                self._to_error()
            else:
                self._send_progress()
        finally:
            TIMES["post_send"] += time.thread_time() - t
            COUNTS["post_send"] += 1

    def post_recv(self, wr, bad_wr=None):
        t = time.thread_time()
        try:
            if self.qp_state == QPS_RESET:
                raise PyverbsRDMAError("Failed to post recv", EINVAL)
            for wr_id, _sges in structs.recv_chain(wr, self._max_recv_wr - len(self._rq)):
                if len(self._rq) >= self._max_recv_wr:
                    raise PyverbsRDMAError("Failed to post recv", ENOMEM)
                self._rq.append(wr_id)
            if self.qp_state == QPS_ERR:
                self._to_error()
        finally:
            TIMES["post_recv"] += time.thread_time() - t
            COUNTS["post_recv"] += 1

    # ------------------------------------------------------------------ sender's NIC

    def _send_progress(self):
        if self.qp_state == QPS_RTS and self._sq:
            self._transmit()
        if self._flight:
            self._complete()

    def _transmit(self):
        link = self._link
        if link is None:
            link = self._link = Link(self._ctx._directory, self.qp_num, self._attr["dest_qp_num"],
                                     self._attr["dgid"])  # fmt: skip
        f, rc, mtu = self._faults, self.qp_type == QPT_RC, self._attr["path_mtu"]
        room = link.room() if link.up else len(self._sq)
        rows = []
        while self._sq and room > 0:
            if f is not None and f.stall is not None and self._stats["sent"] >= f.stall:
                break
            wr_id, signaled, error, row = self._sq.popleft()
            if error:
                self._flight.append((None, wr_id, signaled, error))
                continue
            flags = 0
            if f is not None and f.drop and self._rng.random() < f.drop:
                if not rc:
                    flags |= F_DROPPED
                    self._stats["dropped"] += 1
                else:  # retransmitted until it gets through or retry_cnt is spent
                    tries = 1
                    while tries <= self._attr.get("retry_cnt", 7) and self._rng.random() < f.drop:
                        tries += 1
                    self._stats["retransmitted"] += tries
                    if tries > self._attr.get("retry_cnt", 7):
                        self._flight.append((None, wr_id, signaled, WC_RETRY_EXC_ERR))
                        break
            if f is not None and f.corrupt and self._rng.random() < f.corrupt:
                flags |= F_CORRUPT
                self._stats["corrupted"] += 1
            row[0] = self._psn
            row[1] |= flags
            self._psn = (self._psn + max(1, -(-row[3] // mtu))) & PSN_MASK
            if link.up:
                rows.append(row)
                self._flight.append((link.head + len(rows) - 1, wr_id, signaled, 0))
                room -= 1
            else:  # nobody there: UC packets vanish, RC runs out of retries
                self._flight.append((None, wr_id, signaled, WC_RETRY_EXC_ERR if rc else 0))
            self._stats["sent"] += 1
            _SENT[0] += 1
        if rows:
            link.write(rows)
        if f is not None and f.kill is not None and _SENT[0] >= f.kill:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)

    def _complete(self):
        link = self._link
        tail = link.tail() if link is not None and link.up else 0
        flight, rc = self._flight, self.qp_type == QPT_RC
        while flight:
            index, wr_id, signaled, status = flight[0]
            if index is not None:
                if index >= tail:
                    if link.peer_dead(time.monotonic()):  # the receiver's process is gone
                        if rc:
                            status = WC_RETRY_EXC_ERR
                        else:
                            tail = index + 1
                    else:
                        return
                elif rc:
                    status = link.status(index)
            flight.popleft()
            if status != WC_SUCCESS:
                frees = self._unsignaled + 1
                self._unsignaled = 0
                self._scq._push(_wc(wr_id, status, WC_RDMA_WRITE, self.qp_num), self, frees)
                return self._to_error()
            if signaled:
                frees = self._unsignaled + 1
                self._unsignaled = 0
                self._scq._push(_wc(wr_id, WC_SUCCESS, WC_RDMA_WRITE, self.qp_num), self, frees)
            else:
                self._unsignaled += 1

    # ------------------------------------------------------------------ receiver's NIC

    def _recv_progress(self, budget: int) -> int:
        """Land up to `budget` arrived writes; returns how many descriptors were handled."""
        inbound = self._in
        n = min(inbound.pending(), budget)
        if n <= 0 or self.qp_state not in (QPS_RTR, QPS_RTS):
            return 0
        rc = self.qp_type == QPT_RC
        src_ok = inbound.source() == self._attr["dest_qp_num"]
        access_ok = bool(self._attr.get("access", 0) & REMOTE_WRITE)
        mtu, rq, cq, stats, qpn = self._attr["path_mtu"], self._rq, self._rcq, self._stats, self.qp_num
        done = 0
        for psn, op_flags, imm, length, skey, soff, raddr, rkey_status in inbound.rows(n):
            index = inbound.tail + done
            rkey = rkey_status & 0xFFFFFFFF
            opcode = op_flags & OPCODE_MASK
            if op_flags & F_DROPPED:  # lost on the wire: it never reached this QP
                stats["lost"] += 1
                done += 1
                continue
            status = WC_SUCCESS
            if not src_ok:
                status = WC_RETRY_EXC_ERR  # a packet from an unconnected QP is not accepted
            elif psn != self._expect:
                if rc:
                    status = WC_RETRY_EXC_ERR
                stats["psn_resyncs"] += 1
            if status == WC_SUCCESS:
                mr = LOCAL_MRS.get(rkey)
                off = raddr - mr.buf if mr is not None else -1
                if (not access_ok or mr is None or mr._pd is not self._pd
                        or not mr._access & REMOTE_WRITE or off < 0 or off + length > mr.length):
                    status = WC_REM_ACCESS_ERR  # fmt: skip
                    stats["access_errors"] += 1
            if status == WC_SUCCESS and opcode == WR_RDMA_WRITE_WITH_IMM and not rq:
                if rc:
                    break  # receiver not ready: RNR, the sender retries (rnr_retry 7: forever)
                self._expect = (psn + max(1, -(-length // mtu))) & PSN_MASK
                stats["no_receive"] += 1
                done += 1
                continue
            if status != WC_SUCCESS:
                if rc:
                    inbound.set_status(index, rkey, status)
                elif status == WC_REM_ACCESS_ERR:
                    self._expect = (psn + max(1, -(-length // mtu))) & PSN_MASK
                done += 1
                continue
            self._expect = (psn + max(1, -(-length // mtu))) & PSN_MASK
            if length and self._copy:
                src = source_bytes(self._ctx._directory, skey, soff, length)
                if src is None:
                    src = 0  # the sender's region is gone: what lands is zeros
                mr._data[off : off + length] = src
            if op_flags & F_CORRUPT and length:
                mr._data[off + length - 1] ^= 0xFF
            stats["landed"] += 1
            if opcode == WR_RDMA_WRITE_WITH_IMM:
                if not cq._push(_wc(rq.popleft(), WC_SUCCESS, WC_RECV_RDMA_WITH_IMM, qpn, length,
                                   imm, inbound.source(), WC_WITH_IMM)):  # fmt: skip
                    done += 1
                    break  # overrun: poll raises
            done += 1
        if done:
            inbound.consume(done)
        return done

    # ------------------------------------------------------------------ the rest

    def close(self):
        if self._in is not None:
            for cq, role in ((self._scq, "_senders"), (self._rcq, "_receivers")):
                lst = getattr(cq, role)
                if self in lst:
                    lst.remove(self)
            self._in.close()
            self._in = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def stats(qp) -> dict:
    """The counters of a simulated queue pair (sent, dropped, landed, lost, ...)."""
    return dict(qp._stats)

def provider_times() -> dict:
    """CPU seconds this process spent inside the provider, and its call counts (benchmarks)."""
    return {"seconds": dict(TIMES), "calls": dict(COUNTS)}

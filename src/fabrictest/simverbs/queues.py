"""Simulated completion queue and QP init attributes.

QPInitAttr is simulated because pyverbs' own insists that its CQs are pyverbs CQ objects (it
checks the exact type), and it binds the QP to device objects; QPCap, QPAttr, AHAttr,
GlobalRoute, GID, SGE and the work requests are pyverbs' own classes.

The completion queue is where the simulated NIC runs: `poll` first lets every queue pair
bound to it make progress (senders transmit queued writes and complete what the receiver
handled; receivers land what arrived, at most max(num_entries, 64) minus the completions
already waiting, so the wire is paced by the receiver), then returns up to `num_entries`
completions, in the order they were generated. A completion that finds the queue full is an overrun: the queue
fails and `poll` raises (a real CQ overrun is an asynchronous error that breaks the QPs).
"""

from __future__ import annotations

import time
from collections import deque

from pyverbs.pyverbs_error import PyverbsRDMAError, PyverbsUserError

from .device import EINVAL, Context, DeviceAttr

EOVERFLOW = 75
TIMES = {"post_send": 0.0, "post_recv": 0.0, "poll": 0.0}  # CPU seconds spent in the provider
COUNTS = {"post_send": 0, "post_recv": 0, "poll": 0, "completions": 0}
PACE = 64  # writes a receiving CQ lands per poll at least (more if asked for more)


class QPInitAttr:
    def __init__(self, qp_type=4, qp_context=None, scq=None, rcq=None, srq=None, cap=None,
                 sq_sig_all=1):  # fmt: skip
        for q in (scq, rcq):
            if q is not None and not isinstance(q, CQ):
                raise PyverbsUserError(f"Expected CQ, got {type(q)}")
        self.qp_type = qp_type
        self._qp_context = qp_context
        self.send_cq = scq
        self.recv_cq = rcq
        self.srq = srq
        self.cap = cap
        self.sq_sig_all = sq_sig_all


class CQ:
    def __init__(self, context, cqe, cq_context=None, channel=None, comp_vector=0):
        if not isinstance(context, Context):
            raise PyverbsUserError(f"Cannot create CQ from {type(context)}")
        if not 1 <= cqe <= DeviceAttr().max_cqe or channel is not None:
            raise PyverbsRDMAError("Failed to create a CQ", EINVAL)
        self.cqe = int(cqe)
        self._context = context
        self._entries: deque = deque()
        self._senders: list = []
        self._receivers: list = []
        self._next = 0
        self._overrun = False

    def _push(self, wc, qp=None, frees: int = 0) -> bool:
        """Queue a completion (`frees`: send queue slots it releases when polled)."""
        if len(self._entries) >= self.cqe:
            self._overrun = True
            return False
        self._entries.append((wc, qp, frees))
        return True

    def _room(self) -> int:
        return self.cqe - len(self._entries)

    def poll(self, num_entries=1):
        t = time.thread_time()
        for qp in self._senders:
            qp._send_progress()
        # the receiving NIC lands at most PACE writes per poll (round robin over the QPs):
        # the simulation's landing runs on the receiver's CPU, and unpaced it would outrun the
        # application and starve the receive queue, losing UC writes a NIC would not lose
        budget = max(int(num_entries), PACE) - len(self._entries)
        receivers = self._receivers
        if budget > 0 and receivers:
            self._next = (self._next + 1) % len(receivers)
            for qp in receivers[self._next :] + receivers[: self._next]:
                budget -= qp._recv_progress(budget)
                if budget <= 0:
                    break
        if self._overrun:
            TIMES["poll"] += time.thread_time() - t
            raise PyverbsRDMAError("Failed to poll CQ: completion queue overrun", EOVERFLOW)
        out = []
        entries = self._entries
        while entries and len(out) < num_entries:
            wc, qp, frees = entries.popleft()
            if qp is not None:
                qp._sq_used -= frees
            out.append(wc)
        COUNTS["poll"] += 1
        COUNTS["completions"] += len(out)
        TIMES["poll"] += time.thread_time() - t
        return len(out), out

    def close(self):
        self._senders.clear()
        self._receivers.clear()
        self._entries.clear()

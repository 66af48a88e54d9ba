"""Flow control for the data checks of the rdma method: receivers grant credits over MPI.

RDMA writes land whenever the transmitter sends them: nothing stops message `seq + slots`
from overwriting slot `seq % slots` before the receiver has checked message `seq` (a NIC
lands data as fast as it arrives, whether or not the receiver has polled its completion).
Throughput runs do not care; `--test ones|increment` would count such a slot as corrupt. So
with a data check each receiver stream tells its transmitter, after every batch it accounts
for, the highest sequence number it has checked (everything below it is checked or lost for
good: a QP delivers in order), and the transmitter writes into a slot only once the message
it last wrote there is at or below that number. (Not "seq - slots": numbers skipped by
--inject-loss never occupy a slot, and waiting for them would wait forever.) At the end the
receiver sends DONE and the transmitter waits for it, so that no credit is left unreceived.
"""

from __future__ import annotations

import numpy as np

from fabrictest.txrx.errors import Fault
from fabrictest.txrx.sync import Deadline, idle

CREDIT_TAG = 0x717B
DONE = -2


class Grants:
    """A receiver stream's side: Isend the highest checked sequence number when it moves."""

    def __init__(self, comm, dest: int):
        self.comm, self.dest = comm, dest
        self.granted = -1
        self.pending: list = []  # (request, buffer) until sent

    def grant(self, highest: int) -> None:
        if highest > self.granted:
            self._send(highest)
            self.granted = highest

    def _send(self, value: int) -> None:
        buf = np.array([value], dtype=np.int64)
        self.pending.append((self.comm.Isend(buf, self.dest, CREDIT_TAG), buf))
        if len(self.pending) > 8:
            self.pending = [(r, b) for r, b in self.pending if not r.Test()]

    def close(self, timeout: float, who: str) -> None:
        """Send DONE and wait until every credit has left."""
        self._send(DONE)
        deadline, spins = Deadline(timeout), 0
        while self.pending:
            self.pending = [(r, b) for r, b in self.pending if not r.Test()]
            if self.pending and deadline.expired():
                raise Fault(f"{who}: credits not taken by rank {self.dest} within {timeout:g} s")
            idle(spins)
            spins += 1


class Gate:
    """A transmitter's side: the highest sequence number its receiver has checked."""

    def __init__(self, comm, src: int):
        self.comm, self.src = comm, src
        self.highest = -1
        self.done = False
        self.buf = np.zeros(1, dtype=np.int64)
        self.req = comm.Irecv(self.buf, src, CREDIT_TAG)

    def poll(self) -> bool:
        """Take the credits that arrived; True if any did."""
        got = False
        while not self.done and self.req.Test():
            value = int(self.buf[0])
            got = True
            if value == DONE:
                self.done = True
                break
            self.highest = max(self.highest, value)
            self.req = self.comm.Irecv(self.buf, self.src, CREDIT_TAG)
        return got

    def checked(self, seq: int) -> bool:
        """Has the receiver checked message `seq` (or lost it for good)? -1: nothing to check."""
        return seq <= self.highest or (self.poll() and seq <= self.highest)

    def finish(self, timeout: float, who: str) -> None:
        deadline, spins = Deadline(timeout), 0
        while not self.done:
            if self.poll():
                deadline.touch()
            elif deadline.expired():
                raise Fault(f"{who}: receiver rank {self.src} did not close its credits in {timeout:g} s")
            else:
                idle(spins)
                spins += 1

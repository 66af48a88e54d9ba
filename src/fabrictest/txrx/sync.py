"""MPI waits with deadlines: nothing in the tool blocks without one.

Every helper polls non-blocking requests until they complete or the deadline passes, then
raises `Fault` naming what it waited for, so the caller can print one line and abort the job.
"""

from __future__ import annotations

import os
import pickle
import time

import numpy as np

from fabrictest.txrx.errors import Fault


class Deadline:
    """`timeout` seconds without progress; `touch()` on progress starts the wait again."""

    __slots__ = ("timeout", "_until")

    def __init__(self, timeout: float):
        self.timeout = float(timeout)
        self._until = time.monotonic() + self.timeout

    def touch(self) -> None:
        self._until = time.monotonic() + self.timeout

    def expired(self) -> bool:
        return time.monotonic() > self._until


def idle(spins: int) -> None:
    """Back off while polling: yield the core at first, then sleep a little."""
    if spins < 2000:
        os.sched_yield()
    else:
        time.sleep(0.0005)


def wait(req, timeout: float, what: str):
    """Wait for one request; returns its status."""
    from mpi4py import MPI

    status = MPI.Status()
    deadline = Deadline(timeout)
    spins = 0
    while not req.Test(status):
        if deadline.expired():
            raise Fault(f"{what}: no answer within {timeout:g} s")
        idle(spins)
        spins += 1
    return status


def wait_all(reqs, timeout: float, what: str) -> None:
    from mpi4py import MPI

    deadline = Deadline(timeout)
    spins = 0
    while not MPI.Request.Testall(reqs):
        if deadline.expired():
            raise Fault(f"{what}: no answer within {timeout:g} s")
        idle(spins)
        spins += 1


def barrier(comm, timeout: float, what: str = "barrier") -> None:
    wait(comm.Ibarrier(), timeout, what)


def allgather_obj(comm, obj, timeout: float, what: str = "exchange") -> list:
    """Every rank's `obj` (picklable), in rank order, with a deadline."""
    from mpi4py import MPI

    data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
    size = comm.Get_size()
    lengths = np.zeros(size, dtype=np.int64)
    wait(comm.Iallgather(np.array([data.size], np.int64), lengths), timeout, what)
    displs = np.zeros(size, dtype=np.int64)
    np.cumsum(lengths[:-1], out=displs[1:])
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    counts = [int(x) for x in lengths]
    offsets = [int(x) for x in displs]
    wait(comm.Iallgatherv(data, [out, counts, offsets, MPI.BYTE]), timeout, what)
    return [pickle.loads(out[o : o + c].tobytes()) for o, c in zip(offsets, counts, strict=True)]


def agree_error(comm, message: str | None, timeout: float) -> tuple[int, str] | None:
    """Share each rank's local problem; the lowest failing (rank, message), or None."""
    return start_up(comm, message, "", timeout)[0]


def start_up(
    comm, message: str | None, host: str, timeout: float
) -> tuple[tuple[int, str] | None, list[str]]:
    """One exchange at start-up: each rank's local problem and host name. Returns the lowest
    failing (rank, message) or None, and every rank's host (so that a stream's lines can name
    both ends of its link)."""
    found = allgather_obj(comm, (message, host), timeout, "agreeing on start-up checks")
    failed = next(((rank, msg) for rank, (msg, _h) in enumerate(found) if msg), None)
    return failed, [h for _m, h in found]

"""Testing faults (hidden `--fault KIND:RANK:N`): see options.FaultSpec."""

from __future__ import annotations

import os
import signal
import time

import numpy as np

from fabrictest.txrx.errors import Fault
from fabrictest.txrx.options import FaultSpec


def mine(spec: FaultSpec | None, rank: int, kind: str) -> FaultSpec | None:
    return spec if spec is not None and spec.rank == rank and spec.kind == kind else None


def stop_at(spec: FaultSpec | None, rank: int) -> int | None:
    f = mine(spec, rank, "stop")
    return f.after if f else None


def trigger(spec: FaultSpec | None, rank: int, count: int, timeout: float) -> None:
    """Called with the number of messages sent/received so far; acts once `count` >= N."""
    if spec is None or spec.rank != rank or count < spec.after:
        return
    if spec.kind == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    elif spec.kind == "freeze":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif spec.kind == "stall":
        time.sleep(3 * timeout + 5)  # the receiver's deadline fires first and aborts the job
        raise Fault(f"rank {rank} stalled by --fault and was not stopped by its receiver")


def corrupt_every(spec: FaultSpec | None, rank: int) -> int | None:
    f = mine(spec, rank, "corrupt")
    return f.after if f else None


def corrupt_window(rows, first: int, n: int, seqs, every: int) -> None:
    """Flip the last payload byte of the window's messages whose sequence number is a multiple
    of `every` (rows: the window's (n, words) host rows, after they were filled)."""
    nums = range(first, first + n) if seqs is None else [int(x) for x in seqs]
    for i, seq in enumerate(nums):
        if seq % every == 0:
            rows[i].view(np.uint8)[-1] ^= 1

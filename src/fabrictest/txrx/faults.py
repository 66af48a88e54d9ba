"""Testing faults (hidden `--fault KIND:RANK:N`): see options.FaultSpec."""

from __future__ import annotations

import os
import signal
import time

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
    elif spec.kind == "stall":
        time.sleep(3 * timeout + 5)  # the receiver's deadline fires first and aborts the job
        raise Fault(f"rank {rank} stalled by --fault and was not stopped by its receiver")

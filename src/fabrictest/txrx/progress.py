"""Rank 0's progress line on stderr during long runs: how much of its streams arrived, the rate
so far and the time left, every few seconds (``--quiet`` turns it off). A run shorter than the
interval prints none, so short runs and their recorded outputs are unchanged."""

from __future__ import annotations

import sys
import time
from typing import TextIO

#: seconds between two progress lines (and before the first)
INTERVAL = 5.0


def duration(seconds: float) -> str:
    """``95`` -> ``1 min 35 s``; ``4000`` -> ``1 h 06 min``; ``7.2`` -> ``7 s``."""
    s = max(0, round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"


class Progress:
    """Call :meth:`update` with the messages received so far (cheap: one clock read)."""

    def __init__(self, expected: int, msg_size: int, who: str, interval: float = INTERVAL,
                 clock=time.monotonic, out: TextIO | None = None):
        self.expected, self.msg_size, self.who = expected, msg_size, who
        self.interval, self.clock, self.out = interval, clock, out
        self.start = clock()
        self.next = self.start + interval
        self.lines = 0

    @classmethod
    def of(cls, opts, role) -> Progress | None:
        """Rank 0's progress (receiver 0: the streams of its transmitters), None elsewhere or
        with --quiet."""
        if role.rank != 0 or opts.quiet:
            return None
        return cls(opts.nmsg * role.streams, opts.msg_size, f"receiver {role.index}",
                   interval=opts.progress)

    def update(self, received: int) -> None:
        now = self.clock()
        if now < self.next:
            return
        self.next = now + self.interval
        elapsed = now - self.start
        rate = received / elapsed if elapsed > 0 else 0.0
        gbps = rate * self.msg_size * 8 / 1e9
        left = (self.expected - received) / rate if rate > 0 else float("inf")
        share = 100.0 * received / self.expected if self.expected else 100.0
        eta = duration(left) if left != float("inf") else "unknown"
        out = self.out or sys.stderr
        out.write(f"INFO:__main__:progress: {self.who}: {received} of {self.expected} messages "
                  f"({share:.1f} %) in {duration(elapsed)}, {gbps:.3g} Gbps so far, about "
                  f"{eta} left\n")
        out.flush()
        self.lines += 1

"""Is the tool the bottleneck? Its own time per message against what the line rate needs.

A rank's *own time* is what its loop spends on completed batches between seeing them
complete and having re-posted them (accounting, checks, header writes, posting); time spent
waiting for the transport (MPI progress and copies, a busy send queue, an empty completion
queue) is not its own. To fill a link of L Gbps with messages of B bytes a rank must handle
one message every `B * 8 / (L * 1e9)` seconds; a rank whose own time per message exceeds that
cannot fill the link whatever the link does, so its figures measure the tool, not the link:
*tool-bound*. Each rank is judged against the whole line rate, as in the SEREN tx/rx notes'
scenarios, where no two ranks of one role share a node's port (a receiver's streams are one
process and are counted together).

The line rate comes from `--line-rate GBPS` (the ReFrame partition's declared
`line_rate_gbps`), else, with `--method rdma` on a device, from the port's sysfs `rate`;
without either the verdict is unknown (None) and the own time is still reported.
"""

from __future__ import annotations

import statistics
from array import array
from dataclasses import dataclass


class LoopTime:
    """Own seconds and the messages they were spent on, added per batch (never per message).

    `per_message` is the median over the last `SAMPLES` batches of each batch's seconds per
    message: a batch during which the scheduler took the core away (other ranks or jobs on it)
    is an outlier, not a cost of the tool, and does not move the median."""

    SAMPLES = 1024

    __slots__ = ("seconds", "messages", "batches", "_samples")

    def __init__(self) -> None:
        self.seconds = 0.0
        self.messages = 0
        self.batches = 0
        self._samples = array("d", bytes(8 * self.SAMPLES))

    def add(self, seconds: float, messages: int) -> None:
        self.seconds += seconds
        self.messages += messages
        self._samples[self.batches % self.SAMPLES] = seconds / messages
        self.batches += 1

    def per_message(self) -> float | None:
        if not self.messages:
            return None
        return statistics.median(self._samples[: min(self.batches, self.SAMPLES)])


def need_per_message(msg_size: int, line_rate_gbps: float) -> float:
    """Seconds per message at which a rank fills `line_rate_gbps` with `msg_size`-byte messages."""
    return msg_size * 8 / (line_rate_gbps * 1e9)


@dataclass(frozen=True)
class Verdict:
    own_s: float | None  # own seconds per message (None: no message handled)
    need_s: float | None  # seconds per message the line rate allows (None: rate unknown)
    line_rate_gbps: float | None

    @property
    def tool_bound(self) -> bool | None:
        if self.own_s is None or self.need_s is None:
            return None
        return self.own_s > self.need_s

    def record(self) -> dict:
        return {
            "own_time_per_msg_s": self.own_s,
            "line_rate_gbps": self.line_rate_gbps,
            "line_rate_time_per_msg_s": self.need_s,
            "tool_bound": self.tool_bound,
        }


def judge(own: LoopTime | None, msg_size: int, line_rate_gbps: float | None) -> Verdict:
    per = own.per_message() if own is not None else None
    need = need_per_message(msg_size, line_rate_gbps) if line_rate_gbps else None
    return Verdict(per, need, line_rate_gbps)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g}"


def line(who: str, v: Verdict) -> str:
    """`Rank 0 receiver own time per message is 0.21 us (5.24 us at the line rate of 100
    Gbps): not tool-bound` (docs/txrx.md lists the forms)."""
    own = "unknown (no message handled)" if v.own_s is None else f"{_us(v.own_s)} us"
    head = f"{who} own time per message is {own}"
    if v.need_s is None:
        return f"{head} (line rate unknown: give --line-rate GBPS)"
    verdict = {True: "tool-bound", False: "not tool-bound", None: "not judged"}[v.tool_bound]
    return f"{head} ({_us(v.need_s)} us at the line rate of {v.line_rate_gbps:g} Gbps): {verdict}"


def warning(who: str, v: Verdict, msg_size: int) -> str:
    """Rank 0's stderr line for a tool-bound rank."""
    return (
        f"tool-bound: {who} spends {_us(v.own_s)} us of its own per message, more than the "
        f"{_us(v.need_s)} us that {v.line_rate_gbps:g} Gbps allows at {msg_size} B: its rates "
        "measure txrx, not the link (use larger messages, or fewer streams per receiver)"
    )


def port_rate_gbps(device: str, port: int, root: str = "/sys") -> float | None:
    """The RDMA port's rate from sysfs (`100 Gb/sec (4X EDR)`), None when unreadable."""
    from fabrictest.sysinfo import read_port_from_sysfs

    try:
        rate = read_port_from_sysfs(root, device, port).rate_gbps
    except (OSError, ValueError):
        return None
    return float(rate) if rate else None

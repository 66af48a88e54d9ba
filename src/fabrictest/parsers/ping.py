"""iputils/busybox ``ping`` summaries -> packets sent/received and round-trip times."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._util import require_text
from .errors import ParseError

_HEAD = re.compile(r"^PING\s+(\S+)")
_STATS = re.compile(
    r"(\d+)\s+packets transmitted,\s*(\d+)\s+(?:packets\s+)?received"
    r"(?:,\s*\+?(\d+)\s+errors)?(?:,\s*\+\d+\s+duplicates)?,\s*([\d.]+)%\s+packet loss"
)
_RTT = re.compile(r"(?:rtt|round-trip)\s+min/avg/max(?:/\w+)?\s*=\s*([\d.]+)/([\d.]+)/([\d.]+)")


@dataclass(frozen=True)
class PingResult:
    host: str | None
    transmitted: int
    received: int
    loss_percent: float
    rtt_min_ms: float | None = None
    rtt_avg_ms: float | None = None
    rtt_max_ms: float | None = None

    @property
    def reachable(self) -> bool:
        return self.received > 0


def parse_ping(text: str) -> PingResult:
    text = require_text(text, "ping")
    head = next((m for line in text.splitlines() if (m := _HEAD.match(line.strip()))), None)
    stats = _STATS.search(text)
    if stats is None:
        raise ParseError("not ping output: no 'N packets transmitted, M received' line")
    rtt = _RTT.search(text)
    return PingResult(
        host=head.group(1) if head else None,
        transmitted=int(stats.group(1)),
        received=int(stats.group(2)),
        loss_percent=float(stats.group(4)),
        rtt_min_ms=float(rtt.group(1)) if rtt else None,
        rtt_avg_ms=float(rtt.group(2)) if rtt else None,
        rtt_max_ms=float(rtt.group(3)) if rtt else None,
    )

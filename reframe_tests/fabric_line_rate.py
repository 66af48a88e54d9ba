"""The line rate a figure is judged by: what the partition declares (``extras.line_rate_gbps``,
``extras.transport_line_rate_gbps`` for a transport over slower links), or, where the ranks
share one host, the host's shared-memory ceiling (:data:`fabrictest.gpus.SHARED_MEMORY_GBPS`).

A bandwidth above it (times the margin of :mod:`fabrictest.parsers.physical`) is impossible and
fails the test (each family calls its parser's ``above_line_rate``). A partition without a
line rate fails every bandwidth test, saying so: a figure nobody can bound is not accepted.
"""

from __future__ import annotations

import math

from fabrictest.gpus import SHARED_MEMORY_GBPS

SHARED = "shared-memory ceiling"
LINE = "line rate"


def _rate(value) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok and value > 0 else None


def link_rate(part, one_host: bool, transport: str | None = None) -> tuple[float | None, str]:
    """(Gb/s, what it is) for a figure between the ranks of a case on partition ``part``:
    the shared-memory ceiling when they share one host (``one_host``), the transport's line
    rate where the partition declares one, else its line rate; ``(None, why)`` when the
    partition declares none (or not a positive number)."""
    if one_host:
        return float(SHARED_MEMORY_GBPS), SHARED
    by_transport = part.extras.get("transport_line_rate_gbps") or {}
    if transport is not None and transport in by_transport:
        rate = _rate(by_transport[transport])
        key = f"extras.transport_line_rate_gbps[{transport!r}]"
        value = by_transport[transport]
    else:
        rate, key, value = _rate(part.extras.get("line_rate_gbps")), "extras.line_rate_gbps", \
            part.extras.get("line_rate_gbps")
    if rate is None:
        said = "declares none" if value is None else f"is {value!r}, not a positive number"
        return None, (f"{part.fullname}: {key} {said}: no bandwidth can be judged possible "
                      "(docs/architecture.md, adding a system)")
    return rate, LINE

"""What a link can carry: a bandwidth above the line rate is impossible, and a bandwidth curve
that collapses at its largest sizes is a fault, not noise.

A partition declares its line rate (``extras["line_rate_gbps"]``: the fastest link of one of
its nodes; where the ranks share one host, the host's memory ceiling). A figure is refused when
it exceeds ``line rate x directions x links x MARGIN``: ``directions`` is 2 for the
bi-directional tests (both directions of a full-duplex link at once), ``links`` the links the
figure adds up (``osu_mbw_mr``'s aggregate over node pairs). ``MARGIN`` covers the timers and
the rounding of the printed figures; a real link never carries 10 % more than its rate.

A healthy bandwidth curve may dip in the middle (Open MPI's shared memory falls from 5.9 to
1.4 GB/s between 2 and 4 KiB, its protocol switch) and may sag at the top sizes as the caches
run out (``osu_get_bw`` over shared memory ends at 0.25 of its peak, IMB PingPong at 0.63); on
an oversubscribed host it jumps about (``osu_get_bw`` on this project's two loaded cores went
from 37.8 to 1.0 GB/s and back between neighbouring sizes, a factor of 37). A rate at the
largest sizes below ``TOP_FLOOR`` (1/100) of what the smaller sizes reach (a 4 MiB row of
0.01 MB/s after 10 GB/s at 256 KiB) is no cache, protocol or load effect: the run broke down,
or the figure is not the benchmark's. Where the ranks share one oversubscribed host, a rank
descheduled for a time slice stalls a short measurement far more (the quick profile's 32 KiB
rows of ``osu_bibw`` and ``osu_mbw_mr`` fell 110x below their 2 KiB rates under a load of 20 on
2 cores): there the floor is ``SHARED_TOP_FLOOR`` (1/10 000, still a 0.01 MB/s row beside
GB/s).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ._util import human_bytes

#: how far above the line rate a printed figure may be (timers, 2-decimal rounding): 10 %
MARGIN = 1.10
#: the rates at the largest sizes must reach this share of the smaller sizes' peak
TOP_FLOOR = 0.01
#: the same where the ranks share one (oversubscribed) host
SHARED_TOP_FLOOR = 1e-4
#: the largest sizes: those of at least this share of the largest (4 MiB: 1, 2 and 4 MiB)
TOP_SHARE = 0.25
#: Gb/s in one MB/s (OSU's and IMB's MB are 10^6 bytes)
GBPS_PER_MBS = 8e-3


#: unit prefixes, data rates (bytes or bits per second) and times: the one table of units
#: (``report.units`` converts with it, the reference loader and the figure readers bound with it)
PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
          "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40, "Pi": 2.0 ** 50}
RATE_UNIT = re.compile(r"^(?P<p>[kKMGTP]i?|)(?:(?P<byte>B|[Bb]ytes?)(?:/s|/sec|ps)|"
                       r"(?P<bit>bps|b/s|bit/s|bits/s|bit|bits))$")
TIME_UNIT = {"ns": 1e-9, "nsec": 1e-9, "us": 1e-6, "usec": 1e-6, "µs": 1e-6, "μs": 1e-6,
             "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0,
             "seconds": 1.0, "min": 60.0, "h": 3600.0}
#: what a reference (or a figure) of a fabric test can be, per kind, in bytes/s and seconds.
#: A rate below 125 B/s (1 kb/s) is a link that is down, not a bandwidth; above 1.25e15 B/s
#: (10 Pb/s) is more than the global bandwidth of any machine built. A time below 1 ns is
#: less than light takes across a node (30 cm); above a week no test of the suite runs.
PLAUSIBLE = {"data rate": (125.0, 1.25e15, "1 kb/s .. 10 Pb/s"),
             "time": (1e-9, 7 * 86400.0, "1 ns .. 1 week")}


def in_base_unit(value: float, unit: str | None) -> tuple[str, float] | None:
    """(``"data rate"`` or ``"time"``, ``value`` in bytes/s or seconds), None for another
    unit (a ratio, a count)."""
    u = (unit or "").strip()
    if u in TIME_UNIT:
        return "time", value * TIME_UNIT[u]
    m = RATE_UNIT.match(u)
    if m and m.group("p") in PREFIX:
        scale = PREFIX[m.group("p")]
        return "data rate", value * (scale if m.group("byte") else scale / 8)
    return None


def implausible(value: float, unit: str | None) -> str | None:
    """Why ``value`` in ``unit`` is no rate or time of a fabric (outside :data:`PLAUSIBLE`),
    e.g. ``1e-09 Gbps is below 1 kb/s .. 10 Pb/s``; None when it is one or the unit is
    neither a rate nor a time."""
    based = in_base_unit(value, unit)
    if based is None:
        return None
    kind, v = based
    lo, hi, words = PLAUSIBLE[kind]
    if lo <= v <= hi:
        return None
    return (f"{value:g} {unit} is {'below' if v < lo else 'above'} what a {kind} of a fabric "
            f"can be ({words})")


@dataclass(frozen=True)
class Ceiling:
    """The most a figure can be: ``line_rate_gbps`` x ``directions`` x ``links`` x MARGIN."""

    line_rate_gbps: float
    directions: int = 1
    links: int = 1
    what: str = "line rate"  # or "shared-memory ceiling" where the ranks share a host

    @property
    def gbps(self) -> float:
        return self.line_rate_gbps * self.directions * self.links * MARGIN

    def words(self) -> str:
        parts = [f"{self.line_rate_gbps:g} Gb/s {self.what}"]
        if self.directions != 1:
            parts.insert(0, f"{self.directions} directions")
        if self.links != 1:
            parts.insert(0, f"{self.links} links")
        return f"{' x '.join(parts)} x {MARGIN:g} margin = {self.gbps:g} Gb/s"


def through_bucket(ceiling_gbps: float, burst_bytes: int, sent_bytes: int) -> float:
    """The most a link shaped by a token bucket of ``burst_bytes`` can show for ``sent_bytes``
    timed from a full bucket (after an untimed barrier): the bucket's bytes pass at once, the
    rest at the rate, so ``ceiling / (1 - burst / sent)``; no bound where they fit the bucket.
    ``burst_bytes`` 0: a link without one, ``ceiling_gbps`` itself."""
    if not burst_bytes:
        return ceiling_gbps
    return ceiling_gbps / (1 - burst_bytes / sent_bytes) if sent_bytes > burst_bytes else math.inf


def above(where: str, gbps: float, ceiling: Ceiling, printed: str | None = None) -> str | None:
    """None when ``gbps`` fits under ``ceiling``; otherwise the refusal, e.g. ``osu_bw at 4 MiB:
    8e+06 Gb/s (1e+12 MB/s) is above 100 Gb/s line rate x 1.1 margin = 110 Gb/s: impossible``."""
    if not gbps > ceiling.gbps:
        return None
    shown = f"{gbps:.4g} Gb/s" + (f" ({printed})" if printed else "")
    return f"{where}: {shown} is above {ceiling.words()}: impossible"


def rates_above(label: str, rows: list[tuple[int, float]], unit_gbps: float, unit: str,
                ceiling: Ceiling) -> list[str]:
    """The first row (size, rate in ``unit``) above ``ceiling``, and how many more are."""
    bad = [(size, value) for size, value in rows if value * unit_gbps > ceiling.gbps]
    if not bad:
        return []
    size, value = bad[0]
    line = above(f"{label} at {human_bytes(size)}", value * unit_gbps, ceiling,
                 f"{value:g} {unit}")
    more = f" (and {len(bad) - 1} more sizes)" if len(bad) > 1 else ""
    return [f"{line}{more}"]


def top_collapse(label: str, rows: list[tuple[int, float]], unit: str,
                 floor: float = TOP_FLOOR) -> str | None:
    """None when every rate at the largest sizes reaches ``floor`` of the peak of the smaller
    sizes (the curve the top sizes continue); otherwise the refusal naming the first size that
    does not. A run of the largest sizes only (``-m 4M:4M``) has nothing to compare with."""
    if not rows:
        return None
    top = max(size for size, _ in rows) * TOP_SHARE
    below = [(size, value) for size, value in rows if size < top]
    if not below:
        return None
    peak_size, peak = max(below, key=lambda r: r[1])
    for size, value in rows:
        if size >= top and value < floor * peak:
            return (f"{label}: {value:g} {unit} at {human_bytes(size)} is below {floor:g} "
                    f"of the {peak:g} {unit} the smaller sizes reach (at "
                    f"{human_bytes(peak_size)}): a bandwidth that collapses at the largest "
                    "sizes is a fault, not noise")
    return None

"""Output of our ``congestion`` program (src/c/congestion.c): a victim pair probed isolated and
then beside aggressors, in one job::

    # congestion: nodes 4, ranks 8, aggressors incast (4 ranks), victim node01 -> node02
    # latency: 8 bytes x 200 iterations; bandwidth: 5 samples x 8 x 262144 bytes; aggressors: 262144 bytes; warm-up 1.0 s
    phase isolated lat_avg_us 14.08 lat_p99_us 70.64 bw_gbps 0.1910
    phase loaded lat_avg_us 10459.03 lat_p99_us 25280.82 bw_gbps 0.0425
    aggressors: 4 ranks, 177733632 bytes in 7.89 s, 0.1802 Gbps
    congestion: done

Latency in microseconds (half the round trip), bandwidth in Gbps (10^9 bits per second). The
impact factors have GPCNeT's sense, above 1 worse under load: latency loaded / isolated,
bandwidth isolated / loaded.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ._util import ends_mid_line, require_text
from .errors import ParseError

PHASES = ("isolated", "loaded")
MODES = ("incast", "all-to-all")

_HEADER = re.compile(
    r"^# congestion: nodes (\d+), ranks (\d+), aggressors (\S+) \((\d+) ranks\), "
    r"victim (\S+) -> (\S+?)(, one host)?$", re.M)
_PHASE = re.compile(
    r"^phase (\S+) lat_avg_us (\S+) lat_p99_us (\S+) bw_gbps (\S+)$", re.M)
_AGGRESSORS = re.compile(
    r"^aggressors: (\d+) ranks, (\d+) bytes in (\S+) s, (\S+) Gbps$", re.M)
_DONE = re.compile(r"^congestion: done$", re.M)


@dataclass(frozen=True)
class Probe:
    """The victim's figures in one phase."""

    lat_avg_us: float
    lat_p99_us: float
    bw_gbps: float


@dataclass(frozen=True)
class Aggressors:
    ranks: int
    bytes: int
    seconds: float
    gbps: float


@dataclass
class CongestionResult:
    nodes: int
    ranks: int
    mode: str
    aggressor_ranks: int
    victim: tuple[str, str]
    one_host: bool
    phases: dict[str, Probe]
    aggressors: Aggressors | None
    done: bool
    cut_mid_line: bool = False

    def impact(self, figure: str) -> float:
        """The impact factor of ``figure`` (``lat_avg_us``, ``lat_p99_us``, ``bw_gbps``) in
        GPCNeT's sense: loaded / isolated for latency, isolated / loaded for bandwidth, so that
        above 1 is worse under load."""
        iso, load = (getattr(self.phases[p], figure) for p in PHASES)
        num, den = (iso, load) if figure == "bw_gbps" else (load, iso)
        return num / den if den > 0 else math.inf


def _number(token: str, what: str) -> float:
    try:
        return float(token)
    except ValueError:
        raise ParseError(f"congestion: {what} {token!r} is not a number") from None


def parse_congestion(text: str) -> CongestionResult:
    text = require_text(text, "congestion")
    head = _HEADER.search(text)
    if head is None:
        raise ParseError("not congestion output: no '# congestion: nodes ...' line")
    phases = {}
    for m in _PHASE.finditer(text):
        phases[m.group(1)] = Probe(*(_number(m.group(k), f"phase {m.group(1)} figure")
                                     for k in (2, 3, 4)))
    agg = _AGGRESSORS.search(text)
    return CongestionResult(
        nodes=int(head.group(1)),
        ranks=int(head.group(2)),
        mode=head.group(3),
        aggressor_ranks=int(head.group(4)),
        victim=(head.group(5), head.group(6)),
        one_host=head.group(7) is not None,
        phases=phases,
        aggressors=None if agg is None else Aggressors(
            int(agg.group(1)), int(agg.group(2)), _number(agg.group(3), "aggressor time"),
            _number(agg.group(4), "aggressor rate")),
        done=_DONE.search(text) is not None,
        cut_mid_line=ends_mid_line(text),
    )


def missing(result: CongestionResult, mode: str | None = None, nodes: int | None = None,
            ranks: int | None = None, one_host: bool | None = None) -> list[str]:
    """What keeps ``result`` from being a whole run with the aggressors ``mode`` on ``nodes``
    nodes and ``ranks`` ranks (each checked when given): both phases with finite, positive
    figures, the aggressors' line showing that they
    sent, the closing line; ``one_host``: whether every rank ran on one host (no network
    between the ranks: figures of that host's memory). Empty when whole."""
    problems = []
    if result.cut_mid_line:
        problems.append("congestion: output ends mid-line (cut short)")
    if mode is not None and result.mode != mode:
        problems.append(f"congestion: aggressors {result.mode}, expected {mode}")
    if nodes is not None and result.nodes != nodes:
        problems.append(f"congestion: {result.nodes} nodes, expected {nodes}")
    if ranks is not None and result.ranks != ranks:
        problems.append(f"congestion: {result.ranks} ranks, expected {ranks}")
    if one_host is not None and result.one_host != one_host:
        problems.append("congestion: every rank ran on one host, expected separate nodes"
                        if result.one_host else
                        "congestion: ranks on several hosts, expected one host")
    for phase in PHASES:
        probe = result.phases.get(phase)
        if probe is None:
            problems.append(f"congestion: no 'phase {phase}' line")
            continue
        for name in ("lat_avg_us", "lat_p99_us", "bw_gbps"):
            value = getattr(probe, name)
            if not (math.isfinite(value) and value > 0):
                problems.append(f"congestion: {phase} {name} {value} is not a positive number")
    agg = result.aggressors
    if agg is None:
        problems.append("congestion: no 'aggressors:' line")
    elif agg.ranks != result.aggressor_ranks or agg.bytes <= 0 or not agg.seconds > 0:
        problems.append(f"congestion: the aggressors did not load the network ({agg.ranks} "
                        f"ranks sent {agg.bytes} bytes in {agg.seconds} s)")
    if not result.done:
        problems.append("congestion: no closing 'congestion: done' line")
    return problems

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

Each line is printed once: a second header, phase, aggressors or closing line (two runs in one
output, or a phase printed twice) is refused, not read first- or last-wins. What is possible:
aggressors are at least one rank and are the ranks of the nodes other than the victim's, they
sent bytes at a rate > 0 that agrees with their bytes and seconds, the victim's two ranks are
on two nodes (unless every rank ran on one host), and no rate exceeds what the links can carry
(:func:`above_line_rate`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, require_text
from .errors import ParseError
from .physical import MARGIN

PHASES = ("isolated", "loaded")
MODES = ("incast", "all-to-all")

_HEADER = re.compile(
    r"^# congestion: nodes (\d+), ranks (\d+), aggressors (\S+) \((\d+) ranks\), "
    r"victim (\S+) -> (\S+?)(, one host)?$", re.M)
_SIZES = re.compile(
    r"^# latency: (\d+) bytes x (\d+) iterations; bandwidth: (\d+) samples x (\d+) x (\d+) "
    r"bytes; aggressors: (\d+) bytes; warm-up (\S+) s$", re.M)
_PHASE = re.compile(
    r"^phase (\S+) lat_avg_us (\S+) lat_p99_us (\S+) bw_gbps (\S+)$", re.M)
_AGGRESSORS = re.compile(
    r"^aggressors: (\d+) ranks, (\d+) bytes in (\S+) s, (\S+) Gbps$", re.M)
_DONE = re.compile(r"^congestion: done$", re.M)
#: the probe sizes the second header line gives, as the family's size profiles name them
SIZE_NAMES = ("lat_size", "lat_iters", "bw_samples", "bw_window", "bw_size", "aggressor_size",
              "warmup_s")


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
    #: the probe sizes of the second header line ({SIZE_NAMES: value}; {} when absent)
    sizes: dict[str, float] = field(default_factory=dict)
    #: lines printed more than once, or not the program's ("phase warm-up ..."): never read
    repeated: list[str] = field(default_factory=list)

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


def _once(pattern: re.Pattern[str], text: str, what: str, repeated: list[str]):
    found = list(pattern.finditer(text))
    if len(found) > 1:
        repeated.append(f"{what} printed {len(found)} times")
    return found[0] if found else None


def parse_congestion(text: str) -> CongestionResult:
    text = require_text(text, "congestion")
    repeated: list[str] = []
    head = _once(_HEADER, text, "the '# congestion:' header (several runs in one output?)",
                 repeated)
    if head is None:
        raise ParseError("not congestion output: no '# congestion: nodes ...' line")
    phases = {}
    for m in _PHASE.finditer(text):
        name = m.group(1)
        if name not in PHASES:
            repeated.append(f"a 'phase {name}' line (the program prints isolated and loaded)")
            continue
        if name in phases:
            repeated.append(f"'phase {name}' printed twice")
            continue
        phases[name] = Probe(*(_number(m.group(k), f"phase {name} figure") for k in (2, 3, 4)))
    agg = _once(_AGGRESSORS, text, "the 'aggressors:' line", repeated)
    done = _once(_DONE, text, "'congestion: done'", repeated)
    sizes_line = _once(_SIZES, text, "the '# latency:' line", repeated)
    sizes = {} if sizes_line is None else {
        name: _number(sizes_line.group(k), name) for k, name in enumerate(SIZE_NAMES, 1)}
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
        done=done is not None,
        cut_mid_line=ends_mid_line(text),
        sizes=sizes,
        repeated=repeated,
    )


def missing(result: CongestionResult, mode: str | None = None, nodes: int | None = None,
            ranks: int | None = None, one_host: bool | None = None,
            sizes: dict[str, float] | None = None) -> list[str]:
    """What keeps ``result`` from being a whole run with the aggressors ``mode`` on ``nodes``
    nodes and ``ranks`` ranks and the probe ``sizes`` ({SIZE_NAMES: value}) (each checked when
    given): every line once; both phases with finite, positive figures; aggressors that are
    the ranks of the other nodes, at least one, and sent at a positive rate that agrees with
    their bytes and seconds; the victim on two nodes; the closing line; ``one_host``: whether
    every rank ran on one host (no network between the ranks: figures of that host's memory).
    Empty when whole."""
    problems = [f"congestion: {r}" for r in result.repeated]
    if result.cut_mid_line:
        problems.append("congestion: output ends mid-line (cut short)")
    if result.mode not in MODES:
        problems.append(f"congestion: aggressors {result.mode!r}, not one of {', '.join(MODES)}")
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
    problems += _layout_problems(result)
    if sizes is not None:
        problems += [f"congestion: {name} {result.sizes.get(name)!r}, expected {value!r}"
                     for name, value in sizes.items()
                     if result.sizes and not math.isclose(result.sizes.get(name, math.nan),
                                                          value, rel_tol=1e-9, abs_tol=0.05)]
        if not result.sizes:
            problems.append("congestion: no '# latency: ...' line (the probe sizes)")
    for phase in PHASES:
        probe = result.phases.get(phase)
        if probe is None:
            problems.append(f"congestion: no 'phase {phase}' line")
            continue
        for name in ("lat_avg_us", "lat_p99_us", "bw_gbps"):
            value = getattr(probe, name)
            if not (math.isfinite(value) and value > 0):
                problems.append(f"congestion: {phase} {name} {value} is not a positive number")
    problems += _aggressor_problems(result)
    if not result.done:
        problems.append("congestion: no closing 'congestion: done' line")
    return problems


def _layout_problems(result: CongestionResult) -> list[str]:
    """The header's counts and victim as the program places them: ranks round-robin over the
    nodes, the aggressors every rank of nodes 2 .. N-1, the victim's ranks on nodes 0 and 1."""
    problems = []
    if result.nodes < 3 or result.ranks < result.nodes or result.ranks % result.nodes:
        problems.append(f"congestion: {result.ranks} ranks on {result.nodes} nodes is not the "
                        "program's layout (3 nodes or more, the same ranks on each)")
    else:
        expected = (result.nodes - 2) * (result.ranks // result.nodes)
        if result.aggressor_ranks != expected:
            problems.append(f"congestion: {result.aggressor_ranks} aggressor ranks, but the "
                            f"{result.nodes - 2} nodes beside the victim's run {expected}")
    if result.aggressor_ranks < 1:
        problems.append("congestion: no aggressors (0 ranks): the loaded phase loaded nothing")
    a, b = result.victim
    if a == b and not result.one_host:
        problems.append(f"congestion: victim {a} -> {b}: both ends on one node, so the victim "
                        "crossed no link")
    return problems


def _aggressor_problems(result: CongestionResult) -> list[str]:
    agg = result.aggressors
    if agg is None:
        return ["congestion: no 'aggressors:' line"]
    if agg.ranks != result.aggressor_ranks or agg.bytes <= 0 or not agg.seconds > 0:
        return [f"congestion: the aggressors did not load the network ({agg.ranks} ranks sent "
                f"{agg.bytes} bytes in {agg.seconds} s)"]
    if not (math.isfinite(agg.gbps) and agg.gbps > 0):
        return [f"congestion: aggressor rate {agg.gbps:g} Gbps is not a positive number"]
    # printed: seconds to 2 decimals, Gbps to 4
    low = agg.bytes * 8 / (agg.seconds + 0.005) / 1e9 - 5e-5
    high = agg.bytes * 8 / max(agg.seconds - 0.005, 1e-9) / 1e9 + 5e-5
    if not low <= agg.gbps <= high:
        return [f"congestion: aggressor rate {agg.gbps:g} Gbps contradicts {agg.bytes} bytes in "
                f"{agg.seconds} s ({agg.bytes * 8 / agg.seconds / 1e9:.4f} Gbps)"]
    return []


def above_line_rate(result: CongestionResult, line_rate_gbps: float,
                    what: str = "line rate") -> list[str]:
    """The rates no link could carry: the victim's bandwidth above ``line_rate_gbps`` (one
    link), the aggressors' above the links they share (incast: the victim's receiving node's
    one; all-to-all: one per aggressor node), each x :data:`MARGIN`."""
    problems = []
    ceiling = line_rate_gbps * MARGIN
    for phase, probe in sorted(result.phases.items()):
        if probe.bw_gbps > ceiling:
            problems.append(f"congestion: {phase} bw_gbps {probe.bw_gbps:g} is above the "
                            f"{line_rate_gbps:g} Gb/s {what} x {MARGIN:g} margin: impossible")
    agg = result.aggressors
    links = 1 if result.mode == "incast" else max(result.nodes - 2, 1)
    if agg is not None and agg.gbps > ceiling * links:
        problems.append(f"congestion: aggressor rate {agg.gbps:g} Gbps is above {links} x "
                        f"{line_rate_gbps:g} Gb/s {what} x {MARGIN:g} margin: impossible")
    return problems

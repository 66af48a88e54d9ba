"""Output of the Slingshot acceptance notes' bisection bandwidth program (``bisec_bw ppn
num_reps``) and ours.

The notes' program prints ``\\n Number of Process %d`` on every rank without a newline, so
rank 0's ``PPN: ...`` line is glued to it (``Number of Process 4PPN: 4, Number of nodes: 1,
Num_reps = 2``) and other ranks' fragments may appear anywhere. Rows::

    4 Ranks, Msg Size:      1024 bytes, Node BW:    381.77 MB/sec/node,  Aggregate BW:   0.38 GB/sec

and, verbose, ``Pair (0<->2) Elapsed time =      0.01 sec (  1234.56 MB/sec)``.
``node_mbps`` is MB/s per node (10^6 bytes); ``aggregate_gbps`` is the aggregate in **GB/s**
(10^9 bytes per second, as printed ``GB/sec``), not gigabits.

What must hold (:func:`missing`): rank 0's header line once (a second one is a second run),
every rank's ``Number of Process N`` the same N,
every size once, the header's process, node and per-node counts and repetitions those of the
job (when given) and consistent with each other (nodes x PPN = processes), and each row's two
figures consistent: the program prints Node BW = MB / t / nodes and Aggregate BW = MB / 1000 /
t, so Aggregate x 1000 = Node x nodes within the printed rounding. A node never moves more than
its links carry (:func:`above_line_rate`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, human_bytes, not_a_figure, require_text, sizes_missing
from .errors import ParseError
from .physical import MARGIN, through_bucket

#: the sizes the program measures, in order: 1 KiB .. 2 MiB (the Slingshot acceptance notes'
#: program and ours)
SIZES = [1024 << k for k in range(12)]

_NPROCS = re.compile(r"Number of Process\s*(\d+)")
_PPN = re.compile(r"PPN:\s*(\d+)")
_NODES = re.compile(r"Number of nodes:\s*(\d+)")
_REPS = re.compile(r"Num_reps\s*=\s*(\d+)")
# rank 0's line (the other ranks print only "Number of Process N" fragments)
_RANK0 = re.compile(r"PPN:\s*\d+,\s*Number of nodes:\s*\d+,\s*Num_reps\s*=\s*\d+")
# a figure as C's printf can write it, "inf"/"nan"/negative included (missing() names them);
# the units as printed, case and all (Mb/sec is megabits: not this program's)
_FIGURE = r"([-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|inf|nan))"
_ROW = re.compile(
    rf"(\d+)\s+Ranks,\s*Msg Size:\s*(\d+)\s*bytes,\s*Node BW:\s*{_FIGURE}\s*(?-i:MB/sec/node),"
    rf"\s*Aggregate BW:\s*{_FIGURE}\s*(?-i:GB/sec)",
    re.IGNORECASE,
)
_PAIR = re.compile(
    r"Pair\s*\((\d+)<->(\d+)\)\s*Elapsed time\s*=\s*([\d.]+)\s*sec\s*\(\s*([\d.]+)\s*MB/sec\)"
)


@dataclass(frozen=True)
class BisectionRow:
    ranks: int
    size: int  # bytes
    node_mbps: float  # MB/s per node
    aggregate_gbps: float  # GB/s (gigabytes), as printed


@dataclass(frozen=True)
class BisectionPair:
    a: int
    b: int
    seconds: float
    mbps: float  # MB/s


@dataclass
class BisectionResult:
    nprocs: int | None
    ppn: int | None
    nodes: int | None
    reps: int | None
    rows: list[BisectionRow]
    pairs: list[BisectionPair] = field(default_factory=list)
    cut_mid_line: bool = False  # the text ends inside a line
    headers: int = 1  # rank 0's 'PPN: ..., Number of nodes: ...' lines (one per run)
    process_counts: list[int] = field(default_factory=list)  # every 'Number of Process N'

    def largest(self) -> BisectionRow:
        """The row of the largest message size."""
        return max(self.rows, key=lambda r: r.size)

    def at(self, size: int) -> BisectionRow:
        for row in self.rows:
            if row.size == size:
                return row
        raise KeyError(f"bisection: no row for {size} bytes")

    def peak_node_mbps(self) -> float:
        return max(r.node_mbps for r in self.rows)


def _first(pattern: re.Pattern[str], text: str) -> int | None:
    m = pattern.search(text)
    return int(m.group(1)) if m else None


def parse_bisection(text: str) -> BisectionResult:
    text = require_text(text, "bisection")
    rows = [
        BisectionRow(int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4)))
        for m in _ROW.finditer(text)
    ]
    pairs = [
        BisectionPair(int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4)))
        for m in _PAIR.finditer(text)
    ]
    nprocs = _first(_NPROCS, text)
    if not rows:
        if nprocs is None:
            raise ParseError("not bisection bandwidth output: no 'N Ranks, Msg Size:' rows")
        raise ParseError("bisection output has a header but no result rows (truncated?)")
    return BisectionResult(
        nprocs=nprocs if nprocs is not None else rows[0].ranks,
        ppn=_first(_PPN, text),
        nodes=_first(_NODES, text),
        reps=_first(_REPS, text),
        rows=rows,
        pairs=pairs,
        cut_mid_line=ends_mid_line(text),
        headers=len(_RANK0.findall(text)),
        process_counts=[int(n) for n in _NPROCS.findall(text)],
    )


def missing(result: BisectionResult, ranks: int | None = None, sizes=SIZES,
            nodes: int | None = None, ppn: int | None = None,
            reps: int | None = None) -> list[str]:
    """What keeps ``result`` from being a whole run: rank 0's header once, one row per size of
    ``sizes`` (the program prints no closing line: only the missing sizes show a cut), each
    size once, each row's figures finite and consistent with each other, and the counts of the
    job when given (``ranks`` in the header and every row, ``nodes``, ``ppn``, ``reps``).
    Empty when whole."""
    problems = []
    if result.cut_mid_line:
        problems.append("bisection: output ends mid-line (cut short)")
    if result.headers != 1:
        problems.append(f"bisection: {result.headers} 'PPN: ..., Number of nodes: ...' header "
                        "lines, expected 1" + (" (several runs in one output?)"
                                               if result.headers > 1 else ""))
    got = [r.size for r in result.rows]
    twice = sorted({s for s in got if got.count(s) > 1})
    if twice:
        problems.append("bisection: " + ", ".join(human_bytes(s) for s in twice) +
                        " printed more than once")
    gap = sizes_missing("bisection", got, list(sizes))
    if gap and not twice:
        problems.append(gap)
    problems += _count_problems(result, ranks, nodes, ppn, reps)
    for r in result.rows:
        # the aggregate is printed in GB/s with 2 decimals: 0.00 for a slow small-size row
        for what, value, zero_ok in (("node bandwidth", r.node_mbps, False),
                                     ("aggregate bandwidth", r.aggregate_gbps, True)):
            where = f"bisection: {what} at {human_bytes(r.size)}"
            if (p := not_a_figure(where, value, zero_ok=zero_ok)):
                problems.append(p)
    problems += _contradictions(result)
    return problems


def _count_problems(result: BisectionResult, ranks, nodes, ppn, reps) -> list[str]:
    problems = []
    if len(set(result.process_counts)) > 1:  # every rank prints the one world size
        problems.append(f"bisection: 'Number of Process' says {sorted(set(result.process_counts))}"
                        ": fragments of different runs")
    if ranks is not None:
        wrong = sorted({r.ranks for r in result.rows if r.ranks != ranks})
        if wrong:
            problems.append(f"bisection: rows report {wrong} ranks, expected {ranks}")
        if result.nprocs is not None and result.nprocs != ranks:
            problems.append(f"bisection: 'Number of Process {result.nprocs}', expected {ranks}")
    for name, got, want in (("nodes", result.nodes, nodes), ("PPN", result.ppn, ppn),
                            ("Num_reps", result.reps, reps)):
        if want is not None and got != want:
            problems.append(f"bisection: {name} {got}, expected {want}")
    if None not in (result.nodes, result.ppn, result.nprocs) and \
            result.nodes * result.ppn != result.nprocs:
        problems.append(f"bisection: {result.nodes} nodes x PPN {result.ppn} is not "
                        f"{result.nprocs} processes")
    return problems


def _contradictions(result: BisectionResult) -> list[str]:
    """Rows whose aggregate is not their node figure x nodes / 1000 (printed %9.2f MB/s and
    %6.2f GB/s: within 0.005 GB/s plus the node figure's rounding)."""
    if not result.nodes:
        return []
    problems = []
    for r in result.rows:
        if not_a_figure("", r.node_mbps) or not_a_figure("", r.aggregate_gbps, zero_ok=True):
            continue  # named as not a figure
        expected = r.node_mbps * result.nodes / 1000
        if abs(expected - r.aggregate_gbps) > 0.005 + 0.005 * result.nodes / 1000 + 1e-9:
            problems.append(f"bisection: at {human_bytes(r.size)} the aggregate "
                            f"{r.aggregate_gbps:g} GB/s contradicts {r.node_mbps:g} MB/s per "
                            f"node x {result.nodes} nodes ({expected:.2f} GB/s)")
    return problems[:3]


def above_line_rate(result: BisectionResult, line_rate_gbps: float,
                    what: str = "line rate", burst_bytes: int = 0) -> list[str]:
    """Rows whose bandwidth per node (what each node sends across the bisection, and
    receives) is above ``line_rate_gbps`` x :data:`MARGIN`: impossible.

    ``burst_bytes``: links shaped by a token bucket of that size (the vcluster's tbf). The
    program's untimed barrier before each size lets the bucket fill, so a node may send
    ``burst_bytes`` above the rate: its ``V`` bytes of a size (PPN x reps x size) take at
    least ``(V - burst) / rate``, and a size whose ``V`` fits the bucket has no bound."""
    problems = []
    for r in result.rows:
        gbps = r.node_mbps * 8e-3
        volume = (result.ppn or 1) * (result.reps or 1) * r.size
        if gbps > through_bucket(line_rate_gbps * MARGIN, burst_bytes, volume):
            bucket = (f", a {human_bytes(burst_bytes)} token bucket and {human_bytes(volume)} "
                      "sent a node" if burst_bytes else "")
            problems.append(f"bisection: {r.node_mbps:g} MB/s per node at {human_bytes(r.size)} "
                            f"= {gbps:.4g} Gb/s, above the {line_rate_gbps:g} Gb/s {what} x "
                            f"{MARGIN:g} margin{bucket}: impossible")
    return problems[:3]

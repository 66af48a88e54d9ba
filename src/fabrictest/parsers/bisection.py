"""Output of the Slingshot acceptance notes' bisection bandwidth program (``bisec_bw ppn
num_reps``) and ours.

The notes' program prints ``\\n Number of Process %d`` on every rank without a newline, so
rank 0's ``PPN: ...`` line is glued to it (``Number of Process 4PPN: 4, Number of nodes: 1,
Num_reps = 2``) and other ranks' fragments may appear anywhere. Rows::

    4 Ranks, Msg Size:      1024 bytes, Node BW:    381.77 MB/sec/node,  Aggregate BW:   0.38 GB/sec

and, verbose, ``Pair (0<->2) Elapsed time =      0.01 sec (  1234.56 MB/sec)``.
``node_mbps`` is MB/s per node (10^6 bytes); ``aggregate_gbps`` is the aggregate in **GB/s**
(10^9 bytes per second, as printed ``GB/sec``), not gigabits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, human_bytes, not_a_figure, require_text, sizes_missing
from .errors import ParseError

#: the sizes the program measures, in order: 1 KiB .. 2 MiB (the Slingshot acceptance notes'
#: program and ours)
SIZES = [1024 << k for k in range(12)]

_NPROCS = re.compile(r"Number of Process\s*(\d+)")
_PPN = re.compile(r"PPN:\s*(\d+)")
_NODES = re.compile(r"Number of nodes:\s*(\d+)")
_REPS = re.compile(r"Num_reps\s*=\s*(\d+)")
# a figure as C's printf can write it, "inf"/"nan"/negative included (missing() names them)
_FIGURE = r"([-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|inf|nan))"
_ROW = re.compile(
    rf"(\d+)\s+Ranks,\s*Msg Size:\s*(\d+)\s*bytes,\s*Node BW:\s*{_FIGURE}\s*MB/sec/node,"
    rf"\s*Aggregate BW:\s*{_FIGURE}\s*GB/sec",
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
    )


def missing(result: BisectionResult, ranks: int | None = None, sizes=SIZES) -> list[str]:
    """What keeps ``result`` from being a whole run: one row per size of ``sizes`` (the
    program prints no closing line: only the missing sizes show a cut), each reporting
    ``ranks`` ranks when given. Empty when whole."""
    problems = []
    if result.cut_mid_line:
        problems.append("bisection: output ends mid-line (cut short)")
    gap = sizes_missing("bisection", [r.size for r in result.rows], list(sizes))
    if gap:
        problems.append(gap)
    if ranks is not None:
        wrong = sorted({r.ranks for r in result.rows if r.ranks != ranks})
        if wrong:
            problems.append(f"bisection: rows report {wrong} ranks, expected {ranks}")
    for r in result.rows:
        # the aggregate is printed in GB/s with 2 decimals: 0.00 for a slow small-size row
        for what, value, zero_ok in (("node bandwidth", r.node_mbps, False),
                                     ("aggregate bandwidth", r.aggregate_gbps, True)):
            where = f"bisection: {what} at {human_bytes(r.size)}"
            if (p := not_a_figure(where, value, zero_ok=zero_ok)):
                problems.append(p)
    return problems

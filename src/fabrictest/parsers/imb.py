"""Intel MPI Benchmarks (IMB-MPI1 and friends) output, versions 2018 to 2021.x.

Handled quirks: title lines differ by version (``Intel (R) MPI Benchmarks 2018``,
``Intel(R) MPI Benchmarks 2019 Update 5``, ``2021.3``), rules of 60 or 64 dashes, trailing
spaces everywhere, text glued before the first rule (a shell prompt), ``-npmin`` printing one
block per process count with ``( N additional processes waiting in MPI_Barrier)``, and the
column sets of PingPong (``t[usec] Mbytes/sec``), Uniband/Biband (``Mbytes/sec Msg/sec``)
and collectives (``t_min[usec] t_max[usec] t_avg[usec]``).

Identity (docs/parsers.md): one run per output (IMB's title twice is two runs: ParseError), each
block (benchmark, process count) once and each size once in a block (a repeat is ParseError,
never first- or last-wins), a row is exactly the header's columns; lines a job script prints
before the title or after ``# All processes entering MPI_Finalize`` are ignored, a line between
two rows is not (:func:`missing` names it), and neither is a header whose columns (units) are
not the benchmark's.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from . import physical
from ._util import (
    doubling_sizes,
    ends_mid_line,
    human_bytes,
    require_text,
    sizes_missing,
    to_float,
)
from .collectives import faster_than_links
from .errors import ParseError

#: IMB-MPI1's default largest message size (-msglog 22): 4 MiB
DEFAULT_MAX_BYTES = 1 << 22

_TITLE = re.compile(r"Intel\s*\(R\)\s*MPI Benchmarks\s+(?P<version>\d[\w.]*(?:\s+Update\s+\d+)?)")
_BENCH = re.compile(r"^#\s*Benchmarking\s+(\S+)")
_NPROCS = re.compile(r"#processes\s*=\s*(\d+)")
_WAITING = re.compile(r"\(\s*(\d+)\s+additional processes waiting")
_HEADER = re.compile(r"^\s*(#bytes|#repetitions)\b")
# numbers as printf writes them, "inf"/"nan" included (missing() names them)
_ROW = re.compile(r"^\s*\d+(\s+(?:[-+\d.eE]+|[-+]?inf|nan))+\s*$", re.IGNORECASE)

_COLUMNS = {
    "#bytes": "bytes",
    "#repetitions": "repetitions",
    "t[usec]": "t_usec",
    "t_min[usec]": "t_min",
    "t_max[usec]": "t_max",
    "t_avg[usec]": "t_avg",
    "mbytes/sec": "mbytes_per_sec",
    "msg/sec": "msg_per_sec",
}
_TIMES = ["bytes", "repetitions", "t_min", "t_max", "t_avg"]
#: the columns of a collective (Allreduce, Alltoall, Bcast, Allgather ...)
COLLECTIVE_COLUMNS = _TIMES
#: the columns each benchmark prints (IMB-MPI1 2018-2021); a collective not named prints _TIMES
COLUMNS = {
    **{name: ["bytes", "repetitions", "t_usec", "mbytes_per_sec"] for name in ("pingpong",
                                                                                "pingping")},
    **{name: ["bytes", "repetitions", "mbytes_per_sec", "msg_per_sec"] for name in ("uniband",
                                                                                    "biband")},
    **{name: [*_TIMES, "mbytes_per_sec"] for name in ("sendrecv", "exchange")},
    "barrier": ["repetitions", "t_min", "t_max", "t_avg"],
}
#: directions a benchmark's Mbytes/sec adds up (Biband: both ways of each pair at once)
DIRECTIONS = {"biband": 2, "sendrecv": 2, "exchange": 4}
#: the reductions: IMB reduces MPI_FLOATs, so it prints 0, 4, 8 ... bytes and never 1 or 2
REDUCTIONS = ("allreduce", "reduce", "reduce_scatter", "reduce_scatter_block", "reduce_local",
              "iallreduce", "ireduce", "ireduce_scatter", "ireduce_scatter_block")
#: bytes of one MPI_FLOAT, the reductions' datatype (``# MPI_Datatype for reductions``)
FLOAT_BYTES = 4
#: benchmarks without a size: one row each
SIZELESS = ("barrier", "ibarrier")


@dataclass(frozen=True)
class ImbRow:
    bytes: int
    repetitions: int
    t_usec: float | None = None
    t_min: float | None = None
    t_max: float | None = None
    t_avg: float | None = None
    mbytes_per_sec: float | None = None
    msg_per_sec: float | None = None
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def time_usec(self) -> float | None:
        """``t[usec]`` where printed, otherwise ``t_avg[usec]``."""
        return self.t_usec if self.t_usec is not None else self.t_avg


@dataclass
class ImbBenchmark:
    name: str
    nprocs: int
    rows: list[ImbRow]
    waiting: int = 0  # "( N additional processes waiting in MPI_Barrier)"
    columns: list[str] = field(default_factory=list)
    header: str = ""  # the column header as printed
    #: lines that are not IMB's, printed between the column header and the last row
    inside: list[str] = field(default_factory=list)

    def row(self, nbytes: int) -> ImbRow:
        for row in self.rows:
            if row.bytes == nbytes:
                return row
        raise KeyError(f"{self.name} np={self.nprocs}: no row for {nbytes} bytes")

    def latency_at(self, nbytes: int) -> float:
        """``t[usec]`` (or ``t_avg[usec]``) at ``nbytes``."""
        value = self.row(nbytes).time_usec
        if value is None:
            raise KeyError(f"{self.name} prints no time column")
        return value

    def slowest_at(self, nbytes: int) -> float:
        """A collective's ``t_max[usec]`` at ``nbytes``: its slowest rank's time."""
        value = self.row(nbytes).t_max
        if value is None:
            raise KeyError(f"{self.name} prints no t_max column")
        return value

    def bandwidth_at(self, nbytes: int) -> float:
        value = self.row(nbytes).mbytes_per_sec
        if value is None:
            raise KeyError(f"{self.name} prints no Mbytes/sec column")
        return value

    def peak_bandwidth(self) -> float:
        """The largest ``Mbytes/sec`` (MB/s, 10^6 bytes as IMB prints it)."""
        values = [r.mbytes_per_sec for r in self.rows if r.mbytes_per_sec is not None]
        if not values:
            raise KeyError(f"{self.name} prints no Mbytes/sec column")
        return max(values)

    def largest(self) -> ImbRow:
        return max(self.rows, key=lambda r: r.bytes)


@dataclass
class ImbResult:
    version: str | None
    benchmarks: list[ImbBenchmark]
    title: str | None = None
    finalized: bool = False  # "# All processes entering MPI_Finalize" seen
    empty_blocks: list[str] = field(default_factory=list)  # "# Benchmarking X" without rows
    #: IMB's "# List of Benchmarks to run:" (what it was asked to run); empty when not printed
    listed: list[str] = field(default_factory=list)
    cut_mid_line: bool = False  # the text ends inside a line

    def benchmark(self, name: str, nprocs: int | None = None) -> ImbBenchmark:
        """The block of benchmark ``name`` (case-insensitive); the largest np unless given."""
        found = [b for b in self.benchmarks if b.name.lower() == name.lower()]
        if nprocs is not None:
            found = [b for b in found if b.nprocs == nprocs]
        if not found:
            have = ", ".join(f"{b.name}(np={b.nprocs})" for b in self.benchmarks)
            raise KeyError(f"no IMB block {name} np={nprocs}; have: {have}")
        return max(found, key=lambda b: b.nprocs)


def _row(columns: list[str], tokens: list[str]) -> ImbRow | None:
    if len(tokens) != len(columns):
        return None
    values: dict[str, float] = {}
    for col, tok in zip(columns, tokens, strict=True):
        number = to_float(tok)
        if number is None:
            return None
        values[col] = number
    known = {k: v for k, v in values.items() if k in ImbRow.__dataclass_fields__}
    extra = {k: v for k, v in values.items() if k not in ImbRow.__dataclass_fields__}
    return ImbRow(
        bytes=int(known.pop("bytes", 0)),
        repetitions=int(known.pop("repetitions", 0)),
        extra=extra,
        **known,
    )


def parse_imb(text: str) -> ImbResult:
    text = require_text(text, "IMB")
    titles = list(_TITLE.finditer(text))
    if len(titles) > 1:
        raise ParseError(f"{len(titles)} IMB runs in one output (its title "
                         f"{' '.join(titles[1].group(0).split())!r} again): which one is the "
                         "run's?")
    title_m = titles[0] if titles else None
    result = ImbResult(
        version=re.sub(r"\s+", " ", title_m.group("version")) if title_m else None,
        benchmarks=[],
        title=None,
    )
    if title_m:
        line = text[text.rfind("\n", 0, title_m.start()) + 1 : text.find("\n", title_m.end())]
        result.title = line.lstrip("#").strip()
    current: ImbBenchmark | None = None
    pending: list[str] = []  # lines after the header that are not IMB's, until a row follows
    listing = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("# List of Benchmarks to run"):
            listing = True
            continue
        if listing and (m := re.fullmatch(r"#\s*(\w+)", line)) is not None:
            result.listed.append(m.group(1))
            continue
        listing = False
        if (m := _BENCH.match(line)) is not None:
            current = ImbBenchmark(name=m.group(1), nprocs=0, rows=[])
            result.benchmarks.append(current)
            pending = []
            continue
        if "MPI_Finalize" in line and line.startswith("#"):
            result.finalized = True
            current = None  # what follows IMB's closing line is not its output
            continue
        if current is None:
            continue
        if line.startswith("#") and (m := _NPROCS.search(line)) is not None and not current.rows:
            current.nprocs = int(m.group(1))
            continue
        if (m := _WAITING.search(line)) is not None and not current.rows:
            current.waiting = int(m.group(1))
            continue
        if _HEADER.match(line) and not current.columns:
            current.columns = [_COLUMNS.get(tok.lower(), tok.lower()) for tok in line.split()]
            current.header = line
            continue
        row = _row(current.columns, line.split()) if current.columns and _ROW.match(line) else None
        if row is None:
            if current.columns:
                pending.append(line)
            continue
        if any(r.bytes == row.bytes for r in current.rows):
            raise ParseError(f"IMB {current.name} (np={current.nprocs}) prints "
                             f"{human_bytes(row.bytes)} twice: which one is the run's?")
        current.inside += pending
        pending = []
        current.rows.append(row)
    if title_m is None and not result.benchmarks:
        raise ParseError("not Intel MPI Benchmarks output: no title and no '# Benchmarking' block")
    seen: set[tuple[str, int]] = set()
    for b in result.benchmarks:
        key = (b.name.lower(), b.nprocs)
        if b.rows and key in seen:
            raise ParseError(f"IMB output has two {b.name} blocks for {b.nprocs} processes: "
                             "which one is the run's?")
        if b.rows:
            seen.add(key)
    result.empty_blocks = [f"{b.name}" for b in result.benchmarks if not b.rows]
    result.benchmarks = [b for b in result.benchmarks if b.rows]
    if not result.benchmarks:
        raise ParseError("IMB output has no result rows (truncated, or the run failed)")
    result.cut_mid_line = ends_mid_line(text)
    return result


def expected_sizes(benchmark: str, max_bytes: int = DEFAULT_MAX_BYTES,
                   min_bytes: int = 1) -> list[int]:
    """The sizes IMB prints for ``benchmark`` with ``-msglog a:b`` (``min_bytes`` 2**a,
    ``max_bytes`` 2**b): 0 first whatever ``a``, then doubling from ``min_bytes``; a
    reduction's from one MPI_FLOAT (0, 4, 8 ...: IMB skips 1 and 2 bytes); none for Barrier."""
    if benchmark.lower() in SIZELESS:
        return [0]
    first = max(min_bytes, 1)
    if benchmark.lower() in REDUCTIONS:
        first = max(first, FLOAT_BYTES)
    return [0, *doubling_sizes(first, max_bytes)]


def missing(
    result: ImbResult, benchmark: str, max_bytes: int = DEFAULT_MAX_BYTES, min_bytes: int = 1,
    top_floor: float = physical.TOP_FLOOR,
) -> list[str]:
    """What keeps ``result`` from being a whole run of ``benchmark`` from ``min_bytes`` to
    ``max_bytes`` (``-msglog a:b``: 2**a, 2**b; IMB prints 0 bytes first whatever ``a``):
    every block of it (one per process count with ``-npmin``) with every size of
    :func:`expected_sizes` (a reduction's 0, 4, 8 ...), only finite figures (times >= 0, rates
    > 0 above 0 bytes), and IMB's closing ``# All processes entering MPI_Finalize`` line. Empty
    when whole."""
    problems = []
    asked = [name.lower() for name in result.listed] or [benchmark.lower()]
    if benchmark.lower() not in asked:
        problems.append(f"{benchmark}: IMB was asked to run {', '.join(result.listed)}")
    strangers = [b.name for b in result.benchmarks if b.name.lower() not in asked]
    if strangers:
        problems.append(f"{benchmark}: a block of {strangers[0]}, which IMB was not asked to "
                        "run")
    blocks = [b for b in result.benchmarks if b.name.lower() == benchmark.lower()]
    if not blocks:
        empty = any(name.lower() == benchmark.lower() for name in result.empty_blocks)
        problems.append(f"{benchmark}: " + ("no result rows" if empty else "no block"))
    expected = expected_sizes(benchmark, max_bytes, min_bytes)
    want = COLUMNS.get(benchmark.lower())
    for block in blocks:
        label = f"{benchmark} (np={block.nprocs})" if len(blocks) > 1 else benchmark
        if want is not None and block.columns != want:
            problems.append(f"{label}: the column header {block.header!r} is not {benchmark}'s")
        if block.inside:
            problems.append(f"{label}: a line inside its table that is not IMB's: "
                            f"{block.inside[0][:80]!r}")
        gap = sizes_missing(label, [r.bytes for r in block.rows], expected)
        if gap:
            problems.append(gap)
        not_figures = _unphysical(label, block)
        problems += not_figures
        rates = [(r.bytes, r.mbytes_per_sec) for r in block.rows if r.mbytes_per_sec is not None]
        if not not_figures and (collapse := physical.top_collapse(label, rates, "MB/s",
                                                                    top_floor)):
            problems.append(collapse)
    if result.cut_mid_line:
        problems.append("IMB output ends mid-line (cut short)")
    if not result.finalized:
        problems.append("IMB did not finish: no '# All processes entering MPI_Finalize' line")
    return problems


def _unphysical(label: str, block: ImbBenchmark) -> list[str]:
    problems = []
    for row in block.rows:
        # IMB times at least one repetition; 0 measured nothing, its figures are not a run's
        if "repetitions" in block.columns and row.repetitions < 1:
            problems.append(f"{label}: #repetitions {row.repetitions} at "
                            f"{human_bytes(row.bytes)}: nothing was measured")
        figures = {"t[usec]": row.t_usec, "t_min[usec]": row.t_min, "t_max[usec]": row.t_max,
                   "t_avg[usec]": row.t_avg, "Mbytes/sec": row.mbytes_per_sec,
                   "Msg/sec": row.msg_per_sec, **row.extra}
        for name, value in figures.items():
            if value is None:
                continue
            # rates are printed with 2 decimals: 0.00 MB/s is what a slow link gives below
            # 1 KiB, never above
            positive = name in ("Mbytes/sec", "Msg/sec") and row.bytes >= 1024
            if not math.isfinite(value) or value < 0 or (positive and value == 0):
                need = "a finite positive number" if positive else "a finite number >= 0"
                problems.append(f"{label}: {name} at {human_bytes(row.bytes)} is {value:g}, "
                                f"not {need}")
        times = (row.t_min, row.t_avg, row.t_max)
        if None not in times and all(map(math.isfinite, times)) and not (
                times[0] <= times[1] <= times[2]):
            problems.append(f"{label}: at {human_bytes(row.bytes)} t_min {row.t_min:g}, t_avg "
                            f"{row.t_avg:g}, t_max {row.t_max:g} us: not min <= avg <= max, "
                            "not one run's figures")
    return problems


def pairs(benchmark: str, nprocs: int) -> int:
    """The pairs whose rates a block's ``Mbytes/sec`` adds up: np/2 for Uniband and Biband
    (every pair at once), one for the others (PingPong: two processes, the rest wait)."""
    return max(1, nprocs // 2) if benchmark.lower() in ("uniband", "biband") else 1


def above_line_rate(result: ImbResult, benchmark: str, line_rate_gbps: float,
                    links: int | None = None, what: str = "line rate") -> list[str]:
    """A ``Mbytes/sec`` the links cannot carry: above ``line_rate_gbps`` x 2 for Biband and
    Sendrecv, x ``links`` (default: the block's :func:`pairs`), x the margin of
    :mod:`physical`, in every block of ``benchmark``. Empty when every rate fits."""
    problems = []
    for block in result.benchmarks:
        if block.name.lower() != benchmark.lower():
            continue
        ceiling = physical.Ceiling(line_rate_gbps, DIRECTIONS.get(benchmark.lower(), 1),
                                   links or pairs(block.name, block.nprocs), what)
        rates = [(r.bytes, r.mbytes_per_sec) for r in block.rows if r.mbytes_per_sec is not None]
        problems += physical.rates_above(f"{benchmark} (np={block.nprocs})", rates,
                                         physical.GBPS_PER_MBS, "MB/s", ceiling)
    return problems


def too_fast(result: ImbResult, benchmark: str, line_rate_gbps: float,
             what: str = "line rate") -> list[str]:
    """A collective's ``t_avg[usec]`` below the least time its bytes take through a link of
    ``line_rate_gbps`` (:func:`collectives.faster_than_links`), in every block of
    ``benchmark``; empty for the point-to-point benchmarks (their bound is
    :func:`above_line_rate`) and for figures that fit."""
    problems = []
    for block in result.benchmarks:
        if block.name.lower() != benchmark.lower():
            continue
        rows = [(r.bytes, r.t_avg) for r in block.rows if r.t_avg is not None]
        problems += faster_than_links(benchmark.lower(), rows, line_rate_gbps,
                                      f"{benchmark} (np={block.nprocs})", what)
    return problems

"""OSU Micro-Benchmarks output (5.x and 7.x, host and GPU buffers, ``--validation``).

Handled quirks (all seen in recorded outputs): stderr noise before the title; the title
printed twice (7.1 ``osu_mbw_mr``); ``# Datatype: ...`` before (7.4+) or after (7.1-7.3) the
column header; ``Latency (us)`` (5.x) vs ``Avg Latency(us)`` (7.x); a ``Validation`` column
with ``Pass``/``Fail``; GPU runs retitled ``OSU MPI-CUDA ...``; one-sided headers
(``# Window creation``, ``# Synchronization``); ``# [ pairs: N ] [ window size: M ]``.

Collectives (``osu_allreduce``, ``osu_alltoall`` ...; :mod:`collectives`): sizes doubling from
the datatype's size up to 1 MiB by default, ``osu_barrier``'s one figure without a size, and
:func:`too_fast` for a latency below what the links can carry.

Identity (docs/parsers.md): one run per output for :func:`parse_osu` (two titles, or a table
printed twice, are ambiguous: ParseError; :func:`parse_osu_all` reads a job that ran several),
each size once (a repeated size is ParseError, never first- or last-wins), a row is exactly the
header's columns; lines a job script prints before the title or after the last row are
ignored, a line between two rows is not (:func:`missing` names it), unless it is a compiler's
or an MPI's own (``3 warnings generated.``, Open MPI's help aggregation; ``_util.tool_noise``). :func:`missing` with
``benchmark=`` also checks that the title, direction and unit are the benchmark's, and
:func:`above_line_rate` that no rate exceeds what the link carries.
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
    not_a_figure,
    require_text,
    sizes_missing,
    to_float,
    tool_noise,
)
from .collectives import DEFAULT_MAX_SIZE as COLLECTIVE_MAX_SIZE
from .collectives import SIZELESS, faster_than_links, first_size, is_collective
from .errors import ParseError
from .osu_names import benchmark_name, column_key, expected_unit, unit_of

#: OSU's default largest message size (5.x and 7.x, pt2pt, one-sided and osu_mbw_mr): 4 MiB
DEFAULT_MAX_SIZE = 1 << 22

_TITLE = re.compile(
    r"^#\s*OSU\s+(?P<api>MPI(?:[-_][A-Za-z_]+)?|OpenSHMEM|UPC\+\+|UPC|NCCL|RCCL|NVSHMEM)?\s*"
    r"(?P<name>.*?)\s*(?:Test)?\s*(?:v(?P<version>\d[\w.+-]*))?\s*$"
)
_PAIRS = re.compile(r"\[\s*pairs:\s*(\d+)\s*\]")
_WINDOW = re.compile(r"\[\s*window size:\s*(\d+)\s*\]")
_DATATYPE = re.compile(r"^#\s*Datatype:\s*(\S+?)\.?\s*$")
_WIN_CREATE = re.compile(r"^#\s*Window creation:\s*(.*?)\s*$")
_SYNC = re.compile(r"^#\s*Synchronization:\s*(.*?)\s*$")
#: 5.x GPU runs: ``# Send Buffer on DEVICE (D) and Receive Buffer on HOST (H)`` (7.4 and 7.5
#: print no such line); MANAGED (MD) / (MH) is managed memory
_BUFFERS = re.compile(r"^#\s*Send Buffer on .*?\((\w+)\)\s+and Receive Buffer on .*?\((\w+)\)")
_HEADER = re.compile(r"^#\s*Size\b(.*)$")
#: osu_barrier's header: no size column (``# Avg Latency(us)``, with -f also Min, Max, Iterations)
_SIZELESS_HEADER = re.compile(r"^#\s*((?:Avg\s+)?Latency\s*\(.*)$")
_ROW = re.compile(r"^\s*(\d+)\s+(\S.*?)\s*$")

@dataclass(frozen=True)
class OsuRow:
    """One message size: the first value column in ``value``, the others in ``extra``.

    ``extra`` keys: ``messages_per_s`` (mbw_mr), ``min_latency``, ``max_latency``,
    ``iterations``, ``p50``/``p90``/``p99`` (tail latency), ``overall``, ``compute``,
    ``pure_comm``, ``overlap`` (non-blocking collectives); other columns get a slug of their
    header.
    """

    size: int
    value: float
    extra: dict[str, float] = field(default_factory=dict)


@dataclass
class OsuResult:
    title: str
    version: str | None
    benchmark: str
    unit: str
    rows: list[OsuRow]
    validation: list[bool] | None = None
    pairs: int | None = None
    window_size: int | None = None
    datatype: str | None = None
    accelerator: str | None = None
    #: where the buffers were, as OSU printed it: ``"D D"``, ``"H D"``, ``"MD H"``; None when
    #: the output does not say (host-only runs, 7.4, 7.5)
    buffers: str | None = None
    window_creation: str | None = None
    synchronization: str | None = None
    columns: list[str] = field(default_factory=list)
    cut_mid_line: bool = False  # the text ends inside this run's last line
    #: False for osu_barrier: one figure, no size column (its row has size 0)
    sized: bool = True
    #: lines that are neither OSU's nor a row, printed between the title and the last row
    #: (a job script prints around a run, never inside its table)
    inside: list[str] = field(default_factory=list)

    def at(self, size: int) -> float:
        """The value at message size ``size`` (KeyError if that size was not measured)."""
        for row in self.rows:
            if row.size == size:
                return row.value
        raise KeyError(f"{self.benchmark}: no row for size {size}")

    def peak(self) -> float:
        """The largest value (bandwidth: the peak; latency: the worst)."""
        return max(row.value for row in self.rows)

    def largest(self) -> OsuRow:
        """The row of the largest message size."""
        return max(self.rows, key=lambda row: row.size)

    def sizes(self) -> list[int]:
        return [row.size for row in self.rows]

    def values(self) -> dict[int, float]:
        return {row.size: row.value for row in self.rows}

    @property
    def validated(self) -> bool | None:
        """True when every row passed ``--validation``; None without the column."""
        return None if self.validation is None else all(self.validation)


def _is_title(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("# OSU") and _TITLE.match(stripped) is not None


def _split_segments(lines: list[str]) -> list[list[str]]:
    """Cut the text at OSU title lines; the same title repeated before any row stays one
    segment (7.1 ``osu_mbw_mr`` prints it twice), another title before any row is refused."""
    segments: list[list[str]] = []
    current: list[str] | None = None
    seen_row = False
    for line in lines:
        if _is_title(line):
            if current is not None and not seen_row:
                if line.strip() != current[0].strip():
                    raise ParseError(f"OSU output with two titles before its rows: "
                                     f"{current[0].strip()!r} and {line.strip()!r}")
                current.append(line)  # duplicated title (7.1 osu_mbw_mr)
                continue
            current = [line]
            segments.append(current)
            seen_row = False
            continue
        if current is not None:
            current.append(line)
            if _ROW.match(line):
                seen_row = True
    return segments


def _header_line(result: OsuResult, line: str) -> bool:
    """Read one of OSU's ``#`` lines before the rows into ``result``; False if it is none."""
    found = False
    if (p := _PAIRS.search(line)) is not None:
        result.pairs, found = int(p.group(1)), True
    if (w := _WINDOW.search(line)) is not None:
        result.window_size, found = int(w.group(1)), True
    if (d := _DATATYPE.match(line)) is not None:
        result.datatype = d.group(1)
    elif (wc := _WIN_CREATE.match(line)) is not None:
        result.window_creation = wc.group(1)
    elif (sy := _SYNC.match(line)) is not None:
        result.synchronization = sy.group(1)
    elif (b := _BUFFERS.match(line)) is not None:
        result.buffers = f"{b.group(1)} {b.group(2)}"
    else:
        return found or _is_title(line)
    return True


def _row(columns: list[str], line: str, sized: bool = True
         ) -> tuple[int, float, dict[str, float], bool | None] | None:
    """(size, value, extra columns, validation) of a result row, None if ``line`` is not one:
    a size (none where ``sized`` is false: osu_barrier) and exactly the header's columns, each
    a number (``Pass``/``Fail`` for ``Validation``)."""
    if sized:
        rm = _ROW.match(line)
        if rm is None:
            return None
        size, tokens = int(rm.group(1)), rm.group(2).split()
    else:
        size, tokens = 0, line.split()
    if len(tokens) != len(columns):
        return None
    value = to_float(tokens[0])
    if value is None:
        return None
    extra: dict[str, float] = {}
    passed = None
    for key, token in zip(columns[1:], tokens[1:], strict=True):
        if key == "validation":
            if token.lower() not in ("pass", "fail"):
                return None
            passed = token.lower() == "pass"
            continue
        number = to_float(token)
        if number is None:
            return None
        extra[key] = number
    return size, value, extra, passed


def _parse_segment(lines: list[str]) -> OsuResult:
    title_line = lines[0].strip()
    m = _TITLE.match(title_line)
    assert m is not None
    title = title_line.lstrip("#").strip()
    version = m.group("version")
    benchmark, accelerator = benchmark_name(m.group("api"), m.group("name"))
    result = OsuResult(
        title=title,
        version=version,
        benchmark=benchmark,
        unit="",
        rows=[],
        accelerator=accelerator,
    )
    columns: list[str] | None = None
    validation: list[bool] = []
    seen: dict[int, str] = {}
    pending: list[str] = []  # lines that are not OSU's, kept until a row follows them
    for raw in lines[1:]:
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#") and not result.rows:
            h = _HEADER.match(line)
            if h is None and benchmark in SIZELESS and columns is None:
                h = _SIZELESS_HEADER.match(line)
                result.sized = h is None
            if h is not None and columns is None:
                labels = [c for c in re.split(r"\s{2,}", h.group(1).strip()) if c]
                if not labels:
                    raise ParseError(f"OSU column header without value columns: {line!r}")
                result.unit = unit_of(labels[0])
                columns = [column_key(c) for c in labels]
                columns[0] = "value"
                result.columns = labels
            elif not _header_line(result, line):
                pending.append(line)
            continue
        row = _row(columns, raw, result.sized) if columns is not None else None
        if row is None:
            if not tool_noise(line):  # a compiler's or MPI's own line is no table's
                pending.append(line)
            continue
        size, value, extra, passed = row
        if size in seen:
            what = f"size {human_bytes(size)}" if result.sized else "its figure"
            raise ParseError(f"OSU output {title!r} prints {what} twice "
                             f"({seen[size]} and {line}): which one is the run's?")
        seen[size] = line
        result.inside += pending
        pending = []
        if passed is not None:
            validation.append(passed)
        result.rows.append(OsuRow(size=size, value=value, extra=extra))
    if columns is None:
        want = "'# Avg Latency(us)'" if benchmark in SIZELESS else "'# Size'"
        raise ParseError(f"OSU output {title!r} has no {want} column header (truncated?)")
    if not result.rows:
        raise ParseError(f"OSU output {title!r} has a header but no result rows (truncated?)")
    if "validation" in columns:
        result.validation = validation
    return result


def parse_osu_all(text: str) -> list[OsuResult]:
    """Every OSU run in ``text`` (several runs concatenated in one job output)."""
    text = require_text(text, "OSU")
    segments = _split_segments(text.splitlines())
    if not segments:
        raise ParseError("not OSU Micro-Benchmarks output: no '# OSU ... Test' title line")
    results = [_parse_segment(seg) for seg in segments]
    results[-1].cut_mid_line = ends_mid_line(text)
    return results


def parse_osu(text: str) -> OsuResult:
    """The one OSU run in ``text``; several (a table printed twice, two programs' outputs) are
    ambiguous: ParseError (:func:`parse_osu_all` reads a job that ran several on purpose)."""
    results = parse_osu_all(text)
    if len(results) > 1:
        titles = ", ".join(repr(r.title) for r in results[:3])
        raise ParseError(f"{len(results)} OSU runs in one output ({titles}): which one is the "
                         "run's?")
    return results[0]


def identity_problems(result: OsuResult, benchmark: str, label: str | None = None) -> list[str]:
    """Why ``result`` is not a run of ``benchmark`` (``osu_bw``): another title (another
    benchmark, or the other direction: ``Bi-Directional`` for ``osu_bw``), another unit in the
    column header, a line inside the table that is not OSU's."""
    label = label or benchmark
    want = benchmark.removeprefix("osu_")
    problems = []
    if result.benchmark != want:
        problems.append(f"{label}: the output is {result.title!r} (osu_{result.benchmark}), "
                        f"not {benchmark}")
    unit = expected_unit(want)
    if result.unit != unit:
        problems.append(f"{label}: the column header says {result.columns[0]!r} "
                        f"({result.unit or 'no unit'}), expected {unit}")
    return problems


def default_max_size(benchmark: str) -> int:
    """OSU's largest size without ``-m``: 1 MiB for the collectives, else 4 MiB."""
    return COLLECTIVE_MAX_SIZE if is_collective(benchmark) else DEFAULT_MAX_SIZE


def missing(
    result: OsuResult,
    max_size: int | None = None,
    min_size: int | None = None,
    name: str | None = None,
    benchmark: str | None = None,
    top_floor: float = physical.TOP_FLOOR,
    datatype: str | None = None,
) -> list[str]:
    """What keeps ``result`` from being a whole run of sizes ``min_size..max_size`` (OSU
    doubles the size from ``min_size``; by default the first size printed, which must be 0 or
    1; a collective's from its datatype's size; ``max_size`` by default
    :func:`default_max_size`): e.g. ``osu_latency: 3 of 23 sizes; last 4 B, expected up to 4
    MiB``; osu_barrier's one figure; a line printed
    inside its table; figures that are not a run's (:func:`unphysical`, and a bandwidth that
    collapses at the largest sizes: below ``top_floor`` of the smaller sizes' peak,
    ``physical.SHARED_TOP_FLOOR`` where the ranks share a host); with ``benchmark``
    (``osu_bw``), an output of another
    benchmark, direction or unit; with ``datatype`` (``-T mpi_float``), a ``# Datatype:`` line
    that names another (or none). Empty when whole. OSU prints no closing line, so a run cut
    after a row is only seen by its missing sizes."""
    label = name or benchmark or f"osu_{result.benchmark}"
    problems = identity_problems(result, benchmark, label) if benchmark else []
    if result.cut_mid_line:
        problems.append(f"{label}: output ends mid-line (cut short)")
    problems += datatype_problems(result, datatype, label) if datatype else []
    if result.inside:
        more = f" (and {len(result.inside) - 1} more)" if len(result.inside) > 1 else ""
        problems.append(f"{label}: a line inside its table that is not OSU's: "
                        f"{result.inside[0][:80]!r}{more}")
    got = result.sizes()
    first = min_size if min_size is not None else (got[0] if got and got[0] in (0, 1) else 1)
    if is_collective(result.benchmark):
        first = first_size(result.benchmark, result.datatype, first)
    top = max_size if max_size is not None else default_max_size(result.benchmark)
    if not result.sized:
        gap = None if len(got) == 1 else f"{label}: {len(got)} figures, expected 1"
    else:
        gap = sizes_missing(label, got, doubling_sizes(first, top))
    if gap:
        problems.append(gap)
    not_figures = unphysical(result, label)
    problems += not_figures
    if result.unit == "MB/s" and not not_figures:
        collapse = physical.top_collapse(label, [(r.size, r.value) for r in result.rows], "MB/s",
                                         top_floor)
        problems += [collapse] if collapse else []
    return problems


def datatype_problems(result: OsuResult, datatype: str, label: str | None = None) -> list[str]:
    """Why ``result`` is not of ``datatype`` (``mpi_float``, as ``-T`` takes it): its ``#
    Datatype:`` line names another, or none (an OSU that ignored ``-T``)."""
    if (result.datatype or "").upper() == datatype.upper():
        return []
    return [f"{label or f'osu_{result.benchmark}'}: datatype {result.datatype or 'not printed'}, "
            f"asked {datatype.upper()} (-T {datatype.lower()})"]


def above_line_rate(result: OsuResult, line_rate_gbps: float, links: int = 1,
                    label: str | None = None, what: str = "line rate") -> list[str]:
    """A rate the link cannot carry: above ``line_rate_gbps`` (x 2 for the bi-directional
    tests, x ``links`` for an aggregate over several links, x the margin of
    :mod:`physical`). Empty for latencies and for rates that fit."""
    if result.unit != "MB/s":
        return []
    label = label or f"osu_{result.benchmark}"
    directions = 2 if result.benchmark.endswith("bibw") else 1
    ceiling = physical.Ceiling(line_rate_gbps, directions, links, what)
    return physical.rates_above(label, [(r.size, r.value) for r in result.rows],
                                physical.GBPS_PER_MBS, "MB/s", ceiling)


def too_fast(result: OsuResult, line_rate_gbps: float, label: str | None = None,
             what: str = "line rate") -> list[str]:
    """A collective's latency below the least time its bytes take through a link of
    ``line_rate_gbps`` (:func:`collectives.faster_than_links`); empty for the other
    benchmarks and for figures that fit."""
    if result.unit != "us" or not is_collective(result.benchmark):
        return []
    return faster_than_links(result.benchmark, [(r.size, r.value) for r in result.rows],
                             line_rate_gbps, label or f"osu_{result.benchmark}", what)


def unphysical(result: OsuResult, label: str | None = None) -> list[str]:
    """Figures OSU cannot print for a real run: a latency, bandwidth or rate that is not a finite
    positive number (``inf``, ``nan``, negative, zero; a rate of 0.00 below 1 KiB is a slow
    link's), another column not finite or negative."""
    label = label or f"osu_{result.benchmark}"
    what = result.columns[0] if result.columns else "value"
    problems = []
    rate = result.unit != "us"
    for row in result.rows:
        where = f"{label}: {what} at {human_bytes(row.size)}"
        # a rate is printed with 2 decimals: 0.00 MB/s is what a slow link gives below 1 KiB
        if (p := not_a_figure(where, row.value, zero_ok=rate and row.size < 1024)) is not None:
            problems.append(p)
        for key, v in row.extra.items():
            if not math.isfinite(v) or v < 0:
                problems.append(f"{label}: {key} at {human_bytes(row.size)} is {v:g}, not a "
                                "finite number >= 0")
        problems += _spread_problems(label, row)
    return problems


def _spread_problems(label: str, row: OsuRow) -> list[str]:
    """``-f``'s columns: the average between the ranks' least and greatest latency (each
    printed with the same 2 decimals, so rounding keeps the order), at least one iteration."""
    where = f"{label} at {human_bytes(row.size)}"
    lo, hi = row.extra.get("min_latency"), row.extra.get("max_latency")
    problems = []
    if lo is not None and hi is not None and not lo <= row.value <= hi:
        problems.append(f"{where}: min {lo:g}, avg {row.value:g}, max {hi:g} us: not min <= "
                        "avg <= max, not one run's figures")
    if (n := row.extra.get("iterations")) is not None and n < 1:
        problems.append(f"{where}: {n:g} iterations: nothing was measured")
    return problems


def placement_problems(result: OsuResult, mode: str, runtime: str,
                       label: str | None = None) -> list[str]:
    """Why ``result`` is not a GPU run with buffers ``mode`` (``"D D"``) under ``runtime``
    (``cuda``, ``rocm``): a title naming no GPU API (OSU ran host-only), or the printed
    placement differing from the one asked for. OSU 7.4 and 7.5 print no placement line: then
    only the title is checked."""
    label = label or f"osu_{result.benchmark}"
    problems = []
    if result.accelerator is None:
        problems.append(f"{label}: the title {result.title!r} names no GPU API: OSU ran without "
                        f"{runtime} support (built without it?)")
    elif result.accelerator != runtime.upper():
        problems.append(f"{label}: OSU ran with {result.accelerator}, not {runtime}")
    if result.buffers is not None and result.buffers != " ".join(mode.split()):
        problems.append(f"{label}: OSU placed the buffers {result.buffers}, not {mode}")
    return problems

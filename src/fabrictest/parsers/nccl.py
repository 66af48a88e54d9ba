"""Output of NVIDIA's ``nccl-tests`` and AMD's ``rccl-tests`` (``all_reduce_perf``,
``alltoall_perf``, ... ``-b MIN -e MAX -f 2 -g 1``): the parameter line, the ranks' devices,
one row per size with the out-of-place and in-place time (us), algorithm and bus bandwidth
(GB/s) and ``#wrong`` (the elements that failed the check; ``N/A`` where a test checks none),
then ``# Out of bounds values : N OK`` and ``# Avg bus bandwidth : X``.

Read as nccl-tests 2.13-2.19 and rccl-tests print it (``src/common.cu``, ``src/util.cu``):
a ``# nThread ... validation: V ...`` line; ``#  Rank  0 Group  0 Pid ... on HOST device 0
[...] NAME`` (older and rccl builds without ``Group``); the two header lines; rows
``%12li %12li %8s %6s %6s`` then ``%7s %6.2f %6.2f %5g`` twice (2.19 prints bandwidths of
more than 6 characters with fewer decimals); lines of the libraries around them (``NCCL
version``, ``rccl-tests: Version``, ``RCCL version :``, ``# Errors with asterisks ...``,
``NCCL WARN``) are skipped, except a ``NCCL WARN`` that reports a failure (``completion with
error``, ``failed``, ``timeout``, ``abort``): the run it interrupts is refused, naming it; 2.19
names the benchmark (``# Collective test starting: all_reduce_perf``). The layout before
``#wrong`` (an ``error`` column, no ``root``) is refused.

What the printed figures must satisfy (``missing``), from nccl-tests' own arithmetic: one row
per requested size, in order (``-b 8 -e 8G -f 2``: 31 rows), each printing the size and count
the benchmark makes of it (``all_reduce``: the request in whole elements; ``alltoall``: a
multiple of ranks x 16 bytes per peer, so the smallest requests print 0); ``algbw`` = size /
time and ``busbw`` = algbw x 2(n-1)/n (``all_reduce``) or (n-1)/n (``alltoall``), n ranks, within
the printed digits; ``#wrong`` 0 out-of-place (and in-place where checked); ``Out of bounds
values : 0 OK``; the average of the bus bandwidths printed. With one rank ``busbw`` is 0 by
definition (no data crosses any link). Two ranks on one GPU (the same bus id on one host in
the ``Rank`` lines) are not one rank per GPU. A bus bandwidth above what the links carry
(:func:`above_line_rate`) is impossible.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from . import physical
from ._util import doubling_sizes, ends_mid_line, human_bytes, require_text
from .errors import ParseError

#: bytes per element of nccl-tests' ``-d`` types
TYPE_SIZES = {"int8": 1, "uint8": 1, "half": 2, "bfloat16": 2, "int32": 4, "uint32": 4,
              "float": 4, "int64": 8, "uint64": 8, "double": 8, "f8e4m3": 1, "f8e5m2": 1}
#: the benchmarks whose sizes and bus bandwidth this module checks: their reduction operator
#: (``-o``, default sum; ``none`` where there is none) and bus bandwidth factor for n ranks
BENCHMARKS = {
    "all_reduce_perf": ("sum", lambda n: 2 * (n - 1) / n),
    "alltoall_perf": ("none", lambda n: (n - 1) / n),
}
_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)"
_PARAMS = re.compile(
    r"^#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)\s+"
    r"step:\s*(\d+)\((factor|bytes)\)\s+warmup iters:\s*(\d+)\s+iters:\s*(\d+)(.*)$")
_VALIDATION = re.compile(r"\bvalidation:\s*(\d+)")
_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+"
                   r"device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$")
_HEADER = re.compile(r"^#\s*size\s+count\s+type\b(.*)$")
_UNITS = re.compile(r"^#\s*\(B\)\s+\(elements\)(.*)$")
#: the units line of the table: time in us, bandwidths in GB/s, twice
UNITS = ("(us)", "(GB/s)", "(GB/s)", "(us)", "(GB/s)", "(GB/s)")
_ROW_START = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z]\w*\s")
_ROW = re.compile(
    rf"^\s*(\d+)\s+(\d+)\s+([A-Za-z]\w*)\s+([A-Za-z]\w*)\s+(-?\d+)"
    rf"\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER}\*?|N/A)"
    rf"\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s+({_NUMBER}\*?|N/A)\s*$")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?\s*$")
_AVG = re.compile(rf"^#\s*Avg bus bandwidth\s*:\s*({_NUMBER})\s*(OK|FAILED)?\s*$")
_NAMED = re.compile(r"^#\s*Collective test (starting|concluded):\s*(\S+)\s*$")
_WARN = re.compile(r"\bNCCL WARN\b")
#: what a NCCL WARN says when an operation failed (the others, e.g. an unset variable, do not
#: touch the figures)
_FAILURE = re.compile(r"error|fail|abort|time ?out|timed out", re.IGNORECASE)
_LIBRARY = re.compile(r"^(?:NCCL version\s+\S+|RCCL version\s*:\s*\S+|rccl-tests: Version\s+\S+)")


@dataclass(frozen=True)
class NcclTiming:
    """One half of a row (out-of-place or in-place): time (us), algorithm and bus bandwidth
    (GB/s), the elements that failed the check (None: ``N/A``, not checked), and the half
    unit of the last printed digit of each figure (what rounding may have moved it by)."""

    time_us: float
    algbw: float
    busbw: float
    wrong: float | None
    rounding: tuple[float, float, float]


@dataclass(frozen=True)
class NcclRow:
    size: int  # bytes, as printed
    count: int  # elements, as printed (alltoall: per peer)
    dtype: str
    redop: str
    root: int
    out_of_place: NcclTiming
    in_place: NcclTiming


@dataclass(frozen=True)
class NcclRank:
    rank: int
    pid: int
    host: str
    device: int
    name: str
    bus: str = ""  # the PCI bus id in brackets, ``0000:04:00`` (empty where not printed)


@dataclass(frozen=True)
class NcclParams:
    nthreads: int
    ngpus: int
    min_bytes: int
    max_bytes: int
    step: int
    step_kind: str  # factor | bytes
    warmup: int
    iters: int
    validation: int | None


@dataclass
class NcclResult:
    params: NcclParams | None
    runs: int  # parameter lines: one run per output
    ranks: list[NcclRank]
    rows: list[NcclRow]
    unreadable: list[str] = field(default_factory=list)  # row-like lines that are not rows
    out_of_bounds: int | None = None
    out_of_bounds_verdict: str | None = None
    avg_busbw: float | None = None
    avg_verdict: str | None = None
    units: tuple[str, ...] | None = None  # the units line after (B) (elements)
    benchmark: str | None = None  # named by 2.19's "Collective test starting/concluded"
    concluded: bool = False
    library: str | None = None
    cut_mid_line: bool = False
    failures: list[str] = field(default_factory=list)  # NCCL WARN lines reporting a failure

    def largest(self) -> NcclRow:
        return max(self.rows, key=lambda r: r.size)


def _half_unit(token: str) -> float:
    """Half the unit of the last digit printed: ``12.34`` -> 0.005, ``47535`` -> 0.5,
    ``1.2e+04`` -> 50."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def _timing(time: str, algbw: str, busbw: str, wrong: str) -> NcclTiming:
    wrong_value = None if wrong == "N/A" else float(wrong.rstrip("*"))
    return NcclTiming(float(time), float(algbw), float(busbw), wrong_value,
                      (_half_unit(time), _half_unit(algbw), _half_unit(busbw)))


def parse_nccl(text: str) -> NcclResult:
    """The run in ``text``; ParseError when it is not nccl-tests/rccl-tests output of the
    layout read here, or stops before its first result row."""
    text = require_text(text, "nccl-tests")
    params, runs, ranks, rows, unreadable = None, 0, [], [], []
    header = old_header = False
    result = NcclResult(None, 0, ranks, rows, unreadable, cut_mid_line=ends_mid_line(text))
    for line in text.split("\n"):
        if (m := _PARAMS.match(line)) is not None:
            runs += 1
            v = _VALIDATION.search(m.group(9))
            params = params or NcclParams(*(int(m.group(i)) for i in (1, 2, 3, 4, 5)),
                                          m.group(6), int(m.group(7)), int(m.group(8)),
                                          int(v.group(1)) if v else None)
        elif (m := _RANK.match(line)) is not None:
            ranks.append(NcclRank(int(m.group(1)), int(m.group(2)), m.group(3),
                                  int(m.group(4)), m.group(6), m.group(5).strip()))
        elif (m := _HEADER.match(line)) is not None:
            columns = m.group(1).split()
            if columns[:4] == ["redop", "root", "time", "algbw"] and "#wrong" in columns:
                header = True
            elif "error" in columns or "root" not in columns:
                old_header = True
        elif (m := _UNITS.match(line)) is not None:
            result.units = tuple(m.group(1).split())
        elif (m := _NAMED.match(line)) is not None:
            result.benchmark = m.group(2)
            result.concluded |= m.group(1) == "concluded"
        elif (m := _OOB.match(line)) is not None:
            result.out_of_bounds, result.out_of_bounds_verdict = int(m.group(1)), m.group(2)
        elif (m := _AVG.match(line)) is not None:
            result.avg_busbw, result.avg_verdict = float(m.group(1)), m.group(2)
        elif _WARN.search(line):
            if _FAILURE.search(line):
                result.failures.append(line.strip())
        elif _LIBRARY.match(line.strip()):
            result.library = result.library or line.strip()
        elif header and _ROW_START.match(line):
            if (m := _ROW.match(line)) is None:
                unreadable.append(line.strip())
                continue
            rows.append(NcclRow(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4),
                                int(m.group(5)), _timing(*m.group(6, 7, 8, 9)),
                                _timing(*m.group(10, 11, 12, 13))))
    if old_header and not header:
        raise ParseError("nccl-tests output of the old layout (an 'error' column, no 'root' "
                         "and '#wrong'): read here are nccl-tests 2.13+ and rccl-tests")
    if not rows:
        if params is None and not header:
            raise ParseError("not nccl-tests output: no 'nThread N nGpus G minBytes ...' line "
                             "and no results table")
        raise ParseError("nccl-tests output without result rows (truncated?)")
    result.params, result.runs = params, runs
    return result


def printed_size(benchmark: str, requested: int, ranks: int, dtype: str = "float"
                 ) -> tuple[int, int]:
    """(size, count) nccl-tests prints for a requested size: whole elements (all_reduce), or
    a multiple of 16 bytes per peer (alltoall: the count printed is per peer)."""
    ws = TYPE_SIZES[dtype]
    count = requested // ws
    if benchmark == "alltoall_perf":
        per_peer = (count // ranks) & -(16 // ws)
        return ranks * per_peer * ws, per_peer
    return count * ws, count


def missing(result: NcclResult, benchmark: str, min_bytes: int, max_bytes: int,
            factor: int = 2, ranks: int | None = None, dtype: str = "float") -> list[str]:
    """What keeps ``result`` from being a whole, checked run of ``benchmark`` with ``-b
    min_bytes -e max_bytes -f factor -g 1`` over ``ranks`` ranks (default: the ranks it
    lists): empty when whole."""
    name, problems = benchmark, []
    if result.cut_mid_line:
        problems.append(f"{name}: output ends mid-line (cut short)")
    if result.runs > 1:
        problems.append(f"{name}: {result.runs} runs (parameter lines) in one output")
    problems += _params_problems(result.params, name, min_bytes, max_bytes, factor)
    if result.benchmark not in (None, benchmark):
        problems.append(f"{name}: the output is {result.benchmark}'s")
    if result.units != UNITS:
        problems.append(f"{name}: units {' '.join(result.units or ('none',))}, expected "
                        f"{' '.join(UNITS)} (time in us, bandwidths in GB/s)")
    problems += [f"{name}: {line!r}: the run reported a failure" for line in result.failures]
    n = _rank_count(result, name, ranks, problems)
    problems += [f"{name}: unreadable row {line!r}" for line in result.unreadable]
    problems += _rows_problems(result, name, doubling_sizes(min_bytes, max_bytes)
                               if factor == 2 else [], n, dtype)
    if result.out_of_bounds is None:
        problems.append(f"{name}: no '# Out of bounds values' line")
    elif result.out_of_bounds or result.out_of_bounds_verdict == "FAILED":
        problems.append(f"{name}: {result.out_of_bounds} out-of-bounds values (FAILED)")
    problems += _average_problems(result, name)
    return problems


def _params_problems(params: NcclParams | None, name: str, lo: int, hi: int, factor: int
                     ) -> list[str]:
    if params is None:
        return [f"{name}: no 'nThread N nGpus G minBytes ...' parameter line"]
    problems = []
    asked = (lo, hi, factor, "factor")
    got = (params.min_bytes, params.max_bytes, params.step, params.step_kind)
    # with one size (-b equal to -e) the step is never taken
    if got[:2] != asked[:2] or (lo != hi and got[2:] != asked[2:]):
        problems.append(f"{name}: ran minBytes {params.min_bytes} maxBytes {params.max_bytes} "
                        f"step {params.step}({params.step_kind}), asked -b {lo} -e {hi} "
                        f"-f {factor}")
    if params.ngpus != 1 or params.nthreads != 1:
        problems.append(f"{name}: nThread {params.nthreads} nGpus {params.ngpus}, asked one "
                        "GPU per rank (-g 1)")
    if params.validation != 1:
        problems.append(f"{name}: validation {params.validation}: the results were not checked "
                        "(-c 1), so '#wrong' says nothing")
    return problems


def _rank_count(result: NcclResult, name: str, ranks: int | None, problems: list[str]
                ) -> int | None:
    """The ranks the bus bandwidth is computed for: the ``Rank`` lines, which must be 0..n-1
    once each (and ``ranks`` many when given)."""
    listed = sorted(r.rank for r in result.ranks)
    if not listed:
        problems.append(f"{name}: no '#  Rank N ... device D' lines")
        return ranks
    if listed != list(range(len(listed))):
        problems.append(f"{name}: rank lines {listed}, expected 0..{len(listed) - 1} once each")
    if ranks is not None and len(listed) != ranks:
        problems.append(f"{name}: {len(listed)} ranks listed, expected {ranks}")
    seen: dict[tuple[str, str], int] = {}
    for r in result.ranks:
        if r.bus and (first := seen.setdefault((r.host, r.bus), r.rank)) != r.rank:
            problems.append(f"{name}: ranks {first} and {r.rank} on one GPU ({r.host} "
                            f"[{r.bus}]), asked one rank per GPU")
    return len(listed)


def _rows_problems(result: NcclResult, name: str, requested: list[int], n: int | None,
                   dtype: str) -> list[str]:
    problems = []
    redop, bus_factor = BENCHMARKS.get(name, (None, None))
    if redop is None:
        return [f"{name}: not a benchmark whose figures are checked here ({', '.join(BENCHMARKS)})"]
    if n is not None and dtype in TYPE_SIZES:
        want = [printed_size(name, size, n, dtype) for size in requested]
        got = [(r.size, r.count) for r in result.rows]
        if got != want:
            problems.append(_series_gap(name, got, want, requested))
    for row in result.rows:
        where = f"{name} at {human_bytes(row.size)}"
        if (row.dtype, row.redop, row.root) != (dtype, redop, -1):
            problems.append(f"{where}: type {row.dtype} redop {row.redop} root {row.root}, "
                            f"expected {dtype} {redop} -1 (another benchmark's row?)")
        for half, timing in (("out-of-place", row.out_of_place), ("in-place", row.in_place)):
            problems += _timing_problems(f"{where} ({half})", row.size, timing,
                                         bus_factor(n) if n else None,
                                         checked=half == "out-of-place" or name != "alltoall_perf")
    return problems


def _series_gap(name: str, got: list[tuple[int, int]], want: list[tuple[int, int]],
                requested: list[int]) -> str:
    if len(got) < len(want) and got == want[: len(got)]:
        last = human_bytes(got[-1][0]) if got else "none"
        return (f"{name}: {len(got)} of {len(want)} sizes; last {last}, expected up to "
                f"{human_bytes(want[-1][0])}")
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return (f"{name}: row {i + 1} prints {g[0]} B ({g[1]} elements), -b/-e/-f and the "
                    f"ranks make it {w[0]} B ({w[1]} elements) for {requested[i]} B requested")
    return f"{name}: {len(got)} rows, expected {len(want)} (one per size)"


def _timing_problems(where: str, size: int, t: NcclTiming, bus_factor: float | None,
                     checked: bool) -> list[str]:
    figures = (("time", t.time_us), ("algbw", t.algbw), ("busbw", t.busbw))
    bad = [f"{what} {value}" for what, value in figures
           if not math.isfinite(value) or value < 0 or (what == "time" and value == 0)]
    if bad:
        return [f"{where}: {', '.join(bad)} is not a possible figure"]
    problems = []
    if t.wrong is None:
        if checked:
            problems.append(f"{where}: #wrong N/A: the result was not checked")
    elif t.wrong != 0:
        problems.append(f"{where}: #wrong {t.wrong:g}: elements failed the check")
    h_time, h_alg, h_bus = t.rounding
    slow, fast = t.time_us + h_time, t.time_us - h_time
    lo = max(size / (slow * 1e3), t.algbw - h_alg)
    hi = min(size / (fast * 1e3) if fast > 0 else math.inf, t.algbw + h_alg)
    if lo > hi * (1 + 1e-9) + 1e-12:
        problems.append(f"{where}: algbw {t.algbw} GB/s is not size/time "
                        f"({size} B / {t.time_us} us = {size / (t.time_us * 1e3):.4g} GB/s)")
    elif bus_factor is not None and not (bus_factor * lo - h_bus - 1e-9 <= t.busbw
                                         <= bus_factor * hi + h_bus + 1e-9):
        problems.append(f"{where}: busbw {t.busbw} GB/s is not algbw x {bus_factor:.4g} "
                        f"({t.algbw} GB/s x {bus_factor:.4g} = {t.algbw * bus_factor:.4g})")
    return problems


def _average_problems(result: NcclResult, name: str) -> list[str]:
    """The closing ``# Avg bus bandwidth`` line: present, finite, and the mean of the bus
    bandwidths printed (both halves of every row), within their rounding."""
    if result.avg_busbw is None:
        return [f"{name}: no '# Avg bus bandwidth' line (cut short)"]
    avg = result.avg_busbw
    if not math.isfinite(avg) or avg < 0:
        return [f"{name}: average bus bandwidth {avg} is not a possible figure"]
    if result.avg_verdict == "FAILED":
        return [f"{name}: average bus bandwidth {avg} FAILED nccl-tests' own minimum"]
    halves = [t for r in result.rows for t in (r.out_of_place, r.in_place)]
    mean = sum(t.busbw for t in halves) / len(halves)
    slack = max(t.rounding[2] for t in halves) + 5e-6 * max(avg, mean) + 1e-9
    if abs(avg - mean) > slack:
        return [f"{name}: average bus bandwidth {avg} GB/s is not the mean of the rows' "
                f"{mean:.6g} (rows missing or added?)"]
    return []


def above_line_rate(result: NcclResult, benchmark: str, ceiling: physical.Ceiling) -> list[str]:
    """A bus bandwidth (GB/s, either half of a row) above ``ceiling``: the first such size and
    how many more. Empty when every figure fits."""
    rows = [(r.size, max(r.out_of_place.busbw, r.in_place.busbw)) for r in result.rows]
    return physical.rates_above(f"{benchmark} busbw", rows, 8.0, "GB/s", ceiling)

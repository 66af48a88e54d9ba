"""Output of GPCNeT's ``network_test`` and ``network_load_test`` (netbench/GPCNET, v1.2/1.3).

Both print a header, then boxed tables::

    NetworkLoad Tests v1.3
      Test with 10 MPI ranks (10 nodes)
      2 nodes running Network Tests
      8 nodes running Congestion Tests (min 100 nodes per congestor)
    ...
    +------------------------------------------------------------------ ... -+
    |                         Isolated Network Tests                         |
    +---------------------------------+--------------+-- ... -+--------------+
    |                            Name |          Min |   ...  |        Units |
    +---------------------------------+--------------+-- ... -+--------------+
    |          RR Two-sided Lat (8 B) |          2.1 |   ...  |         usec |
    +---------------------------------+--------------+-- ... -+--------------+

``network_test``: one table, "Isolated Network Tests", columns Avg, 99%, Units (8 rows).
``network_load_test``: "Isolated Network Tests" (3 rows), "Network Tests running with
Congestion Tests" (the same 3 beside the congestors) and the key results. A ``-DVERBOSE``
build prints Min, Max, Avg, Avg(Worst), 99%, 99.9% columns, adds "Isolated Congestion Tests"
(the 4 congestors) and prints one "Network Tests running with Congestion Tests (<test> Network
Test)" table per network test (its row and the congestors'). The key results are:
the **Congestion Impact Factor** of each network test, loaded / isolated for latency and
isolated / loaded for bandwidth (above 1 is worse under load), Avg and 99%, printed ``1.2X``.
Units as printed: ``usec`` (latency), ``MiB/s/rank`` (bandwidth per rank, 2^20 bytes). For
bandwidth the "99%" column is the 1st percentile from the bottom (the worst 1 %).

The programs print no closing line: the last table's bar closes the output. An error before the
tables is one line ``ERROR: ...`` on stdout (e.g. ``this application must be run on at least
10 nodes``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, require_text
from .errors import ParseError

ISOLATED = "Isolated Network Tests"
CONGESTORS = "Isolated Congestion Tests"
KEY_RESULTS = "Network Tests running with Congestion Tests - Key Results"
LOADED = "Network Tests running with Congestion Tests"  # default build: one table
LOADED_PREFIX = LOADED + " ("  # -DVERBOSE: one per network test, with the congestors' rows
STATS = ["Avg", "99%"]
VERBOSE_STATS = ["Min", "Max", "Avg", "Avg(Worst)", "99%", "99.9%"]

LAT, BW = "usec", "MiB/s/rank"
#: network_test's isolated rows (name without the size) and their units
NETWORK_TEST_ROWS = {
    "RR Two-sided Lat": LAT, "RR Get Lat": LAT, "RR Two-sided BW": BW, "RR Put BW": BW,
    "RR Two-sided BW+Sync": BW, "Nat Two-sided BW": BW, "Multiple Allreduce": LAT,
    "Multiple Alltoall": BW,
}
#: network_load_test's network tests and congestors (default build)
LOAD_TESTS = {"RR Two-sided Lat": LAT, "RR Two-sided BW+Sync": BW, "Multiple Allreduce": LAT}
LOAD_CONGESTORS = {"Alltoall": BW, "Two-sided Incast": BW, "Put Incast": BW, "Get Bcast": BW}

_HEADER = re.compile(r"^(Network|NetworkLoad) Tests v(\d+(?:\.\d+)*)\s*$", re.M)
_RANKS = re.compile(r"Test with (\d+) MPI ranks \((\d+) nodes\)")
_TEST_NODES = re.compile(r"(\d+) nodes running Network Tests")
_CONGESTOR_NODES = re.compile(r"(\d+) nodes running Congestion Tests")
_BAR = re.compile(r"^\+[-+]+\+\s*$")
_ERROR = re.compile(r"^ERROR: .*$", re.M)
_SIZE = re.compile(r"\s*\(\s*\d+ B\)$")


@dataclass(frozen=True)
class GpcnetRow:
    name: str  # as printed, with its size: "RR Two-sided Lat (8 B)"
    values: dict[str, float]  # column -> value ("Avg", "99%", ...)
    units: str  # "usec", "MiB/s/rank"; "X" for an impact factor

    @property
    def test(self) -> str:
        """The name without its message size: ``RR Two-sided Lat``."""
        return _SIZE.sub("", self.name)


@dataclass
class GpcnetTable:
    title: str
    columns: list[str] = field(default_factory=list)
    rows: list[GpcnetRow] = field(default_factory=list)

    def row(self, test: str) -> GpcnetRow | None:
        return next((r for r in self.rows if r.test == test), None)


@dataclass
class GpcnetResult:
    program: str  # network_test | network_load_test
    version: str
    ranks: int | None
    nodes: int | None
    test_nodes: int | None  # network_load_test: nodes running the network tests
    congestor_nodes: int | None
    tables: list[GpcnetTable]
    errors: list[str]
    closed: bool  # the output ends with a table's bar
    cut_mid_line: bool = False

    @property
    def verbose(self) -> bool:
        """Output of a ``-DVERBOSE`` build (its tables have Min, Max, ... columns)."""
        return any("Min" in t.columns for t in self.tables)

    def table(self, title: str) -> GpcnetTable | None:
        return next((t for t in self.tables if t.title == title), None)

    def loaded_tables(self) -> list[GpcnetTable]:
        return [t for t in self.tables if t.title.startswith(LOADED_PREFIX)]

    def impact(self, test: str) -> tuple[float, float]:
        """The Congestion Impact Factor of network test ``test`` (``RR Two-sided Lat``):
        (average, 99th percentile)."""
        row = self.table(KEY_RESULTS).row(test)
        return row.values["Avg"], row.values["99%"]

    def isolated(self, test: str) -> GpcnetRow:
        return self.table(ISOLATED).row(test)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _value(cell: str, name: str) -> float:
    try:
        return float(cell.rstrip("X"))
    except ValueError:
        raise ParseError(f"gpcnet: {name}: {cell!r} is not a number") from None


def parse_gpcnet(text: str) -> GpcnetResult:
    text = require_text(text, "GPCNeT")
    head = _HEADER.search(text)
    errors = _ERROR.findall(text)
    if head is None:
        if errors:  # failed before its header (too few nodes): still GPCNeT's verdict
            return GpcnetResult("", "", None, None, None, None, [], errors, False,
                                ends_mid_line(text))
        raise ParseError("not GPCNeT output: no 'Network Tests v...' or 'NetworkLoad Tests v...'"
                         " line")
    program = "network_test" if head.group(1) == "Network" else "network_load_test"
    ranks = _RANKS.search(text)
    tables: list[GpcnetTable] = []
    table: GpcnetTable | None = None
    after_outer = False
    last_line = ""
    for line in text[head.end():].splitlines():
        if not line.strip():
            continue
        last_line = line
        if _BAR.match(line):
            after_outer = "+" not in line.strip()[1:-1]  # an outer bar has no inner joints
            continue
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        if after_outer and len(cells) == 1:  # a title row
            table = GpcnetTable(re.sub(r"\s+", " ", cells[0]).replace("( ", "("))
            tables.append(table)
        elif table is None:
            continue
        elif cells[0] == "Name":
            table.columns = cells[1:] if table.title != KEY_RESULTS else []
        elif cells[0] == "" and table.title == KEY_RESULTS:
            table.columns = cells[1:]  # Avg, 99%
        elif table.title == KEY_RESULTS:
            values = {c: _value(v, cells[0]) for c, v in zip(table.columns, cells[1:], strict=False)}
            table.rows.append(GpcnetRow(cells[0], values, "X"))
        elif cells[0] and table.columns:
            cols = table.columns[:-1]  # the last column is Units
            values = {c: _value(v, cells[0]) for c, v in zip(cols, cells[1:-1], strict=False)}
            table.rows.append(GpcnetRow(cells[0], values, cells[-1]))
        after_outer = False
    return GpcnetResult(
        program=program,
        version=head.group(2),
        ranks=int(ranks.group(1)) if ranks else None,
        nodes=int(ranks.group(2)) if ranks else None,
        test_nodes=_int(_TEST_NODES, text),
        congestor_nodes=_int(_CONGESTOR_NODES, text),
        tables=tables,
        errors=errors,
        closed=bool(_BAR.match(last_line)),
        cut_mid_line=ends_mid_line(text),
    )


def _int(pattern: re.Pattern[str], text: str) -> int | None:
    m = pattern.search(text)
    return int(m.group(1)) if m else None


def _table_problems(table: GpcnetTable | None, title: str, expected: dict[str, str],
                    columns: list[str]) -> list[str]:
    if table is None:
        return [f"gpcnet: no '{title}' table"]
    problems = []
    if table.columns[:-1] != columns and table.columns != columns:
        problems.append(f"gpcnet: '{title}' has columns {table.columns}, expected {columns}")
    for test, units in expected.items():
        row = table.row(test)
        if row is None:
            problems.append(f"gpcnet: '{title}' has no {test} row")
            continue
        if row.units != units:
            problems.append(f"gpcnet: {test} in '{title}' in {row.units!r}, expected {units!r}")
        for col in columns:
            value = row.values.get(col)
            if value is None:
                problems.append(f"gpcnet: {test} in '{title}' has no {col}")
            elif not math.isfinite(value) or value < 0 or (value == 0 and units != LAT):
                # a latency may print 0.0 (%.1f of a shared-memory figure); a rate or an
                # impact factor of 0 is no measurement
                problems.append(f"gpcnet: {test} in '{title}': {col} {value} is not a "
                                "positive number")
    return problems


def missing(result: GpcnetResult, program: str | None = None, ranks: int | None = None,
            verbose: bool | None = None) -> list[str]:
    """What keeps ``result`` from being a whole run of ``program`` with ``ranks`` ranks from a
    default (``verbose=False``) or ``-DVERBOSE`` build (each checked when given; the build is
    otherwise told by the columns): no ERROR line; every table of that build with every row,
    its units and finite, non-negative figures (positive for rates and impact factors);
    network_load_test's Congestion Impact Factor of every network test (Avg and 99%); the last
    table closed by its bar. Empty when whole."""
    problems = [f"gpcnet: {e}" for e in result.errors]
    if result.cut_mid_line:
        problems.append("gpcnet: output ends mid-line (cut short)")
    if not result.program:
        return problems or ["gpcnet: no header"]
    if program is not None and result.program != program:
        problems.append(f"gpcnet: output of {result.program}, expected {program}")
    if ranks is not None and result.ranks != ranks:
        problems.append(f"gpcnet: {result.ranks} ranks, expected {ranks}")
    built_verbose = result.verbose
    if verbose is not None and built_verbose != verbose:
        problems.append("gpcnet: output of a " + ("-DVERBOSE" if built_verbose else "default") +
                        " build, expected a " + ("-DVERBOSE" if verbose else "default") + " one")
    stats = VERBOSE_STATS if built_verbose else STATS
    if result.program == "network_test":
        problems += _table_problems(result.table(ISOLATED), ISOLATED, NETWORK_TEST_ROWS, stats)
    else:
        problems += _table_problems(result.table(ISOLATED), ISOLATED, LOAD_TESTS, stats)
        if built_verbose:
            problems += _table_problems(result.table(CONGESTORS), CONGESTORS, LOAD_CONGESTORS,
                                        stats)
            loaded = {t.title: t for t in result.loaded_tables()}
            for test, units in LOAD_TESTS.items():
                title = f"{LOADED_PREFIX}{test} Network Test)"
                problems += _table_problems(loaded.get(title), title,
                                            {test: units, **LOAD_CONGESTORS}, stats)
        else:
            problems += _table_problems(result.table(LOADED), LOADED, LOAD_TESTS, stats)
        problems += _table_problems(result.table(KEY_RESULTS), KEY_RESULTS,
                                    dict.fromkeys(LOAD_TESTS, "X"), STATS)
    if not result.closed:
        problems.append("gpcnet: the last table is not closed by its bar (cut short)")
    return problems

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

A site's job script may print around GPCNeT's output (the HPE Slingshot fabric validation
guide's ``run_gpc_tests.sh``: node and rank counts before, the NICs' counters after): lines
before the header and after the last table's closing bar are not GPCNeT's and are ignored. A
line that is not GPCNeT's between its header and its last table (inside a table, between two
tables) is kept in ``foreign`` and makes the output not whole: it was cut there, or another
writer's lines run through it. A second header (two runs in one output) is counted in ``runs``
and refused as ambiguous; a table, a row or a line of the header's counts printed twice is
refused, never read first-wins.

What the output must agree with (:func:`missing`): the job's ranks and nodes
(``Test with R MPI ranks (N nodes)``); network_load_test's split of the nodes, GPCNeT's own
rule (``floor(0.8 N)`` congestor nodes, at least 8, the rest running the network tests, at
least 2, and ``floor(congestors / 4)`` per congestor); and the Congestion Impact Factors,
which GPCNeT computes from the printed averages and 99th percentiles (loaded / isolated for
latency, isolated / loaded for bandwidth, printed to one decimal): a factor that differs
from the tables' by more than that rounding contradicts them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, require_text
from .errors import ParseError
from .physical import MARGIN

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
_CONGESTOR_NODES = re.compile(r"(\d+) nodes running Congestion Tests(?: \(min (\d+) nodes per "
                              r"congestor\))?")
_BAR = re.compile(r"^\+[-+]+\+\s*$")
_ERROR = re.compile(r"^ERROR: .*$", re.M)
_SIZE = re.compile(r"\s*\(\s*\d+ B\)$")
#: network_load_test's share of congestor nodes, the fewest of each kind and the congestors
#: (GPCNeT's CONGESTOR_NODE_FRAC, its refusal below 2 + 2 x NUM_CONGESTOR_TESTS nodes)
CONGESTOR_FRACTION = 0.8
MIN_TEST_NODES, NUM_CONGESTORS = 2, 4
MIN_CONGESTOR_NODES = 2 * NUM_CONGESTORS
#: how far a printed impact factor may be from the tables' ratio: its own rounding to 0.1
IMPACT_ROUNDING = 0.05 + 1e-9
#: rows whose partner is on another node (random ring): their rate per rank, times the ranks
#: of a node, crosses that node's link
CROSSING_ROWS = ("RR Two-sided BW", "RR Put BW", "RR Two-sided BW+Sync")
MIB_GBPS = (1 << 20) * 8 / 1e9  # Gb/s in one MiB/s


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
    closed: bool  # GPCNeT's output ends with a table's bar
    cut_mid_line: bool = False  # ... inside one of GPCNeT's lines (not a site's after it)
    per_congestor: int | None = None  # "(min N nodes per congestor)"
    runs: int = 1  # headers in the output: more than one is ambiguous
    foreign: list[str] = field(default_factory=list)  # not GPCNeT's, inside its output
    duplicates: list[str] = field(default_factory=list)  # tables and rows printed twice

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


def _is_table_line(line: str) -> bool:
    return line.startswith("|") or bool(_BAR.match(line))


def parse_gpcnet(text: str) -> GpcnetResult:
    text = require_text(text, "GPCNeT")
    heads = list(_HEADER.finditer(text))
    errors = _ERROR.findall(text)
    if not heads:
        if errors:  # failed before its header (too few nodes): still GPCNeT's verdict
            return GpcnetResult("", "", None, None, None, None, [], errors, False,
                                ends_mid_line(text))
        raise ParseError("not GPCNeT output: no 'Network Tests v...' or 'NetworkLoad Tests v...'"
                         " line")
    head = heads[0]
    # this run's text: from its header to the next header (a second run, refused in missing)
    end = heads[1].start() if len(heads) > 1 else len(text)
    run = text[head.start():end]
    lines = run[head.end() - head.start():].splitlines()
    tables: list[GpcnetTable] = []
    table: GpcnetTable | None = None
    after_outer = False
    foreign: list[str] = []
    pending: list[str] = []  # lines not GPCNeT's: inside its output if a table line follows
    duplicates: list[str] = []
    last_line = ""
    for line in lines:
        if not line.strip():
            continue
        if not _is_table_line(line):
            if not tables and line.startswith(" "):  # the header's counts and legend
                foreign += pending
                pending = []
            else:
                pending.append(line)
            continue
        foreign += pending
        pending = []
        last_line = line
        if _BAR.match(line):
            after_outer = "+" not in line.strip()[1:-1]  # an outer bar has no inner joints
            continue
        cells = _cells(line)
        if after_outer and len(cells) == 1:  # a title row
            table = GpcnetTable(re.sub(r"\s+", " ", cells[0]).replace("( ", "("))
            if any(t.title == table.title for t in tables):
                duplicates.append(f"the '{table.title}' table printed twice")
            tables.append(table)
        elif table is None:
            pass
        elif cells[0] == "Name":
            table.columns = cells[1:] if table.title != KEY_RESULTS else []
        elif cells[0] == "" and table.title == KEY_RESULTS:
            table.columns = cells[1:]  # Avg, 99%
        elif table.title == KEY_RESULTS:
            values = {c: _value(v, cells[0]) for c, v in zip(table.columns, cells[1:], strict=False)}
            _add_row(table, GpcnetRow(cells[0], values, "X"), duplicates)
        elif cells[0] and table.columns:
            cols = table.columns[:-1]  # the last column is Units
            values = {c: _value(v, cells[0]) for c, v in zip(cols, cells[1:-1], strict=False)}
            _add_row(table, GpcnetRow(cells[0], values, cells[-1]), duplicates)
        after_outer = False
    counts = {"Test with R MPI ranks (N nodes)": _RANKS, "N nodes running Network Tests":
              _TEST_NODES, "N nodes running Congestion Tests": _CONGESTOR_NODES}
    duplicates += [f"the '{what}' line printed twice" for what, pattern in counts.items()
                   if len(pattern.findall(run)) > 1]
    ranks = _RANKS.search(run)
    congestors = _CONGESTOR_NODES.search(run)
    return GpcnetResult(
        program="network_test" if head.group(1) == "Network" else "network_load_test",
        version=head.group(2),
        ranks=int(ranks.group(1)) if ranks else None,
        nodes=int(ranks.group(2)) if ranks else None,
        test_nodes=_int(_TEST_NODES, run),
        congestor_nodes=int(congestors.group(1)) if congestors else None,
        tables=tables,
        errors=errors,
        closed=bool(_BAR.match(last_line)),
        # the text ends inside GPCNeT's own last line, not inside a line a site printed after it
        cut_mid_line=ends_mid_line(text) and not pending and len(heads) == 1,
        per_congestor=int(congestors.group(2)) if congestors and congestors.group(2) else None,
        runs=len(heads),
        foreign=foreign,
        duplicates=duplicates,
    )


def _add_row(table: GpcnetTable, row: GpcnetRow, duplicates: list[str]) -> None:
    if any(r.name == row.name for r in table.rows):
        duplicates.append(f"{row.name} printed twice in '{table.title}'")
    table.rows.append(row)


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
            verbose: bool | None = None, nodes: int | None = None) -> list[str]:
    """What keeps ``result`` from being a whole run of ``program`` with ``ranks`` ranks on
    ``nodes`` nodes from a default (``verbose=False``) or ``-DVERBOSE`` build (each checked
    when given; the build is otherwise told by the columns): no ERROR line; one run, nothing
    but GPCNeT's lines inside it, every table and row once; every table of that build with
    every row, its units and finite, non-negative figures (positive for rates and impact
    factors); network_load_test's split of the nodes as GPCNeT makes it and the Congestion
    Impact Factor of every network test (Avg and 99%), agreeing with the tables; the last table
    closed by its bar. Empty when whole."""
    problems = [f"gpcnet: {e}" for e in result.errors]
    if result.cut_mid_line:
        problems.append("gpcnet: output ends mid-line (cut short)")
    if not result.program:
        return problems or ["gpcnet: no header"]
    if result.runs > 1:
        problems.append(f"gpcnet: {result.runs} runs in one output (headers 'Network... Tests "
                        "v...'): ambiguous, which one is this test's?")
    problems += [f"gpcnet: a line that is not GPCNeT's inside its output (cut there, or "
                 f"another writer's): {line.strip()[:80]!r}" for line in result.foreign[:3]]
    problems += [f"gpcnet: {d}" for d in result.duplicates]
    if program is not None and result.program != program:
        problems.append(f"gpcnet: output of {result.program}, expected {program}")
    problems += _count_problems(result, ranks, nodes)
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
        problems += impact_problems(result)
    if not result.closed:
        problems.append("gpcnet: the last table is not closed by its bar (cut short)")
    return problems


def _count_problems(result: GpcnetResult, ranks: int | None, nodes: int | None) -> list[str]:
    problems = []
    if result.ranks is None or result.nodes is None:
        return ["gpcnet: no 'Test with R MPI ranks (N nodes)' line"]
    if ranks is not None and result.ranks != ranks:
        problems.append(f"gpcnet: {result.ranks} ranks, expected {ranks}")
    if nodes is not None and result.nodes != nodes:
        problems.append(f"gpcnet: {result.nodes} nodes, expected {nodes} (GPCNeT counts the "
                        "hosts by name)")
    if not 1 <= result.nodes <= result.ranks:
        problems.append(f"gpcnet: {result.ranks} ranks on {result.nodes} nodes is impossible")
    if result.program != "network_load_test":
        return problems
    test, cong = result.test_nodes, result.congestor_nodes
    if test is None or cong is None:
        return [*problems, "gpcnet: no 'N nodes running Network Tests' and 'N nodes running "
                           "Congestion Tests' lines"]
    want_cong = math.floor(CONGESTOR_FRACTION * result.nodes)
    if (test, cong) != (result.nodes - want_cong, want_cong) or test < MIN_TEST_NODES or \
            cong < MIN_CONGESTOR_NODES:
        problems.append(f"gpcnet: {test} nodes running network tests and {cong} running "
                        f"congestion tests on {result.nodes} nodes; GPCNeT runs "
                        f"{result.nodes - want_cong} and {want_cong} (at least "
                        f"{MIN_TEST_NODES} and {MIN_CONGESTOR_NODES})")
    elif result.per_congestor is not None and result.per_congestor != cong // NUM_CONGESTORS:
        problems.append(f"gpcnet: min {result.per_congestor} nodes per congestor, but "
                        f"{cong} congestor nodes make {cong // NUM_CONGESTORS}")
    return problems


def _loaded_row(result: GpcnetResult, test: str) -> GpcnetRow | None:
    if result.verbose:
        table = next((t for t in result.loaded_tables()
                      if t.title == f"{LOADED_PREFIX}{test} Network Test)"), None)
    else:
        table = result.table(LOADED)
    return table.row(test) if table else None


def impact_problems(result: GpcnetResult) -> list[str]:
    """The Congestion Impact Factors that contradict the tables they come from (GPCNeT: the
    printed loaded / isolated figure for latency, isolated / loaded for bandwidth, rounded to
    0.1). Rows or figures that are absent are :func:`missing`'s to name."""
    key, iso = result.table(KEY_RESULTS), result.table(ISOLATED)
    if key is None or iso is None:
        return []
    problems = []
    for test, units in LOAD_TESTS.items():
        printed, base, loaded = key.row(test), iso.row(test), _loaded_row(result, test)
        if printed is None or base is None or loaded is None:
            continue
        for col in STATS:
            b, n, x = base.values.get(col), loaded.values.get(col), printed.values.get(col)
            if b is None or n is None or x is None:
                continue
            num, den = (n, b) if units == LAT else (b, n)
            ratio = num / den if den else math.inf
            if not (math.isfinite(ratio) and math.isfinite(x)) or \
                    abs(ratio - x) > IMPACT_ROUNDING:
                problems.append(f"gpcnet: {test} impact factor {col} {x:g}X contradicts the "
                                f"tables ({'loaded' if units == LAT else 'isolated'} {num:g} / "
                                f"{'isolated' if units == LAT else 'loaded'} {den:g} = "
                                f"{ratio:.3g})")
    return problems


def above_line_rate(result: GpcnetResult, line_rate_gbps: float,
                    what: str = "line rate") -> list[str]:
    """Rates no node could carry: a random-ring row's average per rank (its partner on another
    node) times the ranks of a node, above ``line_rate_gbps`` x :data:`MARGIN`."""
    if not result.ranks or not result.nodes:
        return []
    per_node = result.ranks / result.nodes
    problems = []
    for table in result.tables:
        for row in table.rows:
            avg = row.values.get("Avg")
            if row.test not in CROSSING_ROWS or row.units != BW or avg is None:
                continue
            gbps = avg * per_node * MIB_GBPS
            if gbps > line_rate_gbps * MARGIN:
                problems.append(f"gpcnet: {row.name} in '{table.title}': {avg:g} MiB/s/rank x "
                                f"{per_node:g} ranks per node = {gbps:.4g} Gb/s, above the "
                                f"{line_rate_gbps:g} Gb/s {what} x {MARGIN:g} margin: impossible")
    return problems

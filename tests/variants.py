"""Hostile variants of real outputs, generated with Hypothesis, and the oracle each must meet.

From every recording a parser reads whole, :func:`variants` draws one of these changes and
:func:`check` judges what the parser (with its ``missing()`` and identity rules) made of it:

=================  ===========================================  ===============================
kind               change                                       oracle
=================  ===========================================  ===============================
``dup_table``      a table copied after itself, figures x 0.5   refused
``dup_row``        a row copied after itself, figures x 0.5     refused
``sibling``        the title of a sibling benchmark             refused
``unit``           the unit in the unit line (header) changed   refused
``scale``          one figure x 10^-3, 10^3 or 10^6             refused, or read exactly as the
                                                                printed new value; refused when
                                                                the plugin says it is impossible
``delete_row``     a row inside a table (not first, not last)   refused (read exactly less that
                                                                row where the row is optional)
``foreign_out``    a job script's lines before or after         read exactly (refused or read
                                                                exactly for a text that is a
                                                                command's whole stdout or a
                                                                file: ``outside_read`` False)
``foreign_in``     a foreign line between two rows              refused (read exactly where the
                                                                format interleaves lines)
``cut``            the text cut at any character                refused, or read exactly (a cut
                                                                in trailing blank lines); a cut
                                                                mid-line always refused
=================  ===========================================  ===============================

"Refused" is a ParseError or a non-empty ``missing()``; "read exactly" compares every figure the
plugin names (a missing figure is a change too).

How a parser plugs in (the counters, topology, GPCNeT, all-to-many, bisection and congestion
parsers will): subclass :class:`Plugin` with

* ``name`` and ``files()``: the recordings (``tests/recordings.py``) it reads whole
  (``text(path)``: a recording's text, by default the file's);
* ``context(text)``: what the family would ask of the original (benchmark, sizes, layout, a
  line rate), handed back to ``read``;
* ``read(text, ctx)``: parse, run ``missing()`` and the identity rules; return
  :class:`Accepted` ``(values)`` (every figure by a key the layout uses) or :class:`Refused`
  ``(why)``;
* ``layout(text)``: the :class:`Table` s of the text: title line, unit line and its unit
  token, rows with their figures' character spans and keys (only what applies: a format
  without titles has none, and its ``sibling`` variants are not drawn);
* optionally ``siblings(ctx)``, ``other_units(unit)``, ``impossible(ctx, key, value)``, and the
  flags ``inside_refused`` / ``mid_line_refused`` / ``outside_read``; ``cut_ok`` for a format
  read line by line.

then, in a test, :func:`assert_read_whole` (the unchanged recordings are accepted) and
:func:`run_variants` (:data:`EXAMPLES` derandomized variants, each judged by :func:`check`)::

    @pytest.mark.parametrize("plugin", [MyPlugin()], ids=lambda p: p.name)
    def test_my_parser_variants(plugin):
        assert_read_whole(plugin)
        run_variants(plugin)
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fabrictest.parsers import physical

KINDS = ("dup_table", "dup_row", "sibling", "unit", "scale", "delete_row", "foreign_out",
         "foreign_in", "cut")

#: lines site job scripts print around a tool's output (module systems, shell tracing, Slurm
#: prologues, `time`, banners), none of them a tool's
FOREIGN = [
    'Lmod is automatically replacing "gcc/12.2.0" with "intel/2021.4.0".',
    "module load openmpi/4.1.5-gcc-12.2.0",
    "+ srun --mpi=pmix -N 2 --ntasks-per-node=1 ./benchmark",
    "Job 4242424 started on node001 at Thu Nov 26 10:00:00 CET 2026",
    "==================== run 1 of 1 ====================",
    "real\t0m3.214s",
    "Loading compiler version 2021.4.0",
    "SLURM_JOB_NODELIST=node[001-002]",
    "Thu Nov 26 10:00:01 UTC 2026",
    "done",
]


#: line rates a partition declares (Gb/s): the vcluster's 0.2, Ethernet and InfiniBand
#: generations, a host's shared memory
LADDER = (0.2, 1, 10, 25, 40, 50, 56, 100, 200, 400, 800, 1600, 3200, 40_000)


def rung(gbps: float) -> float:
    """The smallest line rate of :data:`LADDER` that carries ``gbps`` with the margin: a
    recording's own physical bound, as a partition would declare it."""
    return next(r for r in LADDER if r * physical.MARGIN >= gbps)


def number_spans(line: str, start: int = 0) -> list[tuple[int, int]]:
    """(start, end) of each whitespace-delimited number token in ``line`` from ``start``."""
    return [(m.start(), m.end()) for m in re.finditer(
        r"(?<!\S)[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\S)", line) if m.start() >= start]


# ------------------------------------------------------------------------- the layout
@dataclass(frozen=True)
class Figure:
    key: object  # what the plugin's Accepted values call it
    start: int  # character span in its line
    end: int


@dataclass(frozen=True)
class Row:
    line: int  # index in text.splitlines(keepends=True)
    figures: tuple[Figure, ...] = ()
    essential: bool = True  # deleting it must be refused (else: read exactly less its keys)
    keys: tuple = ()  # every value the row carries (default: its figures' keys)


@dataclass(frozen=True)
class Table:
    first: int  # first line of the table (its title, else its header), inclusive
    rows: tuple[Row, ...]
    title: int | None = None
    unit: tuple[int, int, int] | None = None  # (line, start, end) of the unit token


# ------------------------------------------------------------------------- readings
@dataclass(frozen=True)
class Accepted:
    values: dict


@dataclass(frozen=True)
class Refused:
    why: str


class Plugin:
    """One parser under the variant generator (see the module docstring)."""

    name = "?"
    inside_refused = True  # a foreign line between two rows is refused
    mid_line_refused = True  # a text whose last line has no newline is refused
    #: lines before or after the output are read past; False where the text is one command's
    #: whole stdout or a file (a counter listing, sysfs, topology.conf): refusing them is right
    outside_read = True

    def files(self) -> list[Path]:
        raise NotImplementedError

    def text(self, path: Path) -> str:
        """The recording's text as the tool printed it (by default the file's)."""
        return path.read_text()

    def context(self, text: str):
        return None

    def read(self, text: str, ctx) -> Accepted | Refused:
        raise NotImplementedError

    def layout(self, text: str) -> list[Table]:
        return []

    def siblings(self, ctx) -> list[str]:
        """Title lines of sibling benchmarks (each must be refused in place of the title)."""
        return []

    def other_units(self, unit: str) -> list[str]:
        return []

    def impossible(self, ctx, key, value: float, values: dict) -> bool:
        """``value`` at ``key`` (the other figures ``values``) is no run's: must be refused."""
        return False

    def cut_ok(self, original: dict, cut: dict) -> bool:
        """A cut text read as ``cut``: only a reading equal to the whole one is exact."""
        return cut == original


@dataclass
class Variant:
    plugin: Plugin
    path: Path
    kind: str
    text: str
    original: dict
    ctx: object
    expect: str  # refused | exact | exact_or_refused
    values: dict = field(default_factory=dict)  # the exact reading expected (exact*)
    note: str = ""

    def __repr__(self) -> str:  # what Hypothesis prints for a failing example
        return f"Variant({self.plugin.name}, {self.path.name}, {self.kind}: {self.note})"


# ------------------------------------------------------------------------- helpers
def _token_scaled(token: str, factor: float) -> str:
    """``token`` x ``factor`` printed as the tool printed ``token`` (its decimals)."""
    value = float(token) * factor
    if re.search(r"[eE]", token):
        return f"{value:.6e}"
    decimals = len(token.split(".", 1)[1]) if "." in token else 0
    return f"{value:.{decimals}f}"


def _replace_span(line: str, start: int, end: int, new: str) -> str:
    return line[:start] + new + line[end:]


def _scaled_row(line: str, row: Row, factor: float) -> str:
    for fig in sorted(row.figures, key=lambda f: -f.start):
        line = _replace_span(line, fig.start, fig.end,
                             _token_scaled(line[fig.start:fig.end], factor))
    return line


def _with_newline(line: str) -> str:
    return line if line.endswith("\n") else line + "\n"


# ------------------------------------------------------------------------- the strategy
@st.composite
def variants(draw, plugin: Plugin, kinds: tuple[str, ...] = KINDS):
    """One hostile variant of one of ``plugin``'s whole recordings."""
    path = draw(st.sampled_from(plugin.files()))
    text = plugin.text(path)
    ctx = plugin.context(text)
    original = plugin.read(text, ctx)
    assert isinstance(original, Accepted), f"{path.name} is not read whole: {original}"
    lines = text.splitlines(keepends=True)
    tables = [t for t in plugin.layout(text) if t.rows]
    units = [t for t in tables
             if t.unit is not None and plugin.other_units(_unit_of(lines, t))]
    siblings = plugin.siblings(ctx)
    titled = [t for t in tables if t.title is not None
              and any(_words(x) != _words(lines[t.title]) for x in siblings)]
    possible = [k for k in kinds if _applies(k, tables, units, titled)]
    kind = draw(st.sampled_from(possible))
    v = Variant(plugin, path, kind, text, original.values, ctx, "refused")
    if kind == "dup_table":
        t = draw(st.sampled_from(tables))
        last = t.rows[-1].line
        copy = [_with_newline(x) for x in lines[t.first:last + 1]]
        for row in t.rows:
            copy[row.line - t.first] = _with_newline(_scaled_row(lines[row.line], row, 0.5))
        v.text = "".join([*lines[:last + 1], *([] if lines[last].endswith("\n") else ["\n"]),
                          *copy, *lines[last + 1:]])
        v.note = f"lines {t.first}-{last} again at half the figures"
    elif kind == "dup_row":
        t = draw(st.sampled_from([t for t in tables if any(r.figures for r in t.rows)]))
        row = draw(st.sampled_from([r for r in t.rows if r.figures]))
        new = _with_newline(_scaled_row(lines[row.line], row, 0.5))
        v.text = "".join([*lines[:row.line + 1], new, *lines[row.line + 1:]])
        v.note = f"line {row.line} again: {new.strip()!r}"
    elif kind == "sibling":
        t = draw(st.sampled_from(titled))
        own = _words(lines[t.title])  # (a sibling is never the title's own)
        title = draw(st.sampled_from([x for x in siblings if _words(x) != own]))
        v.text = "".join([*lines[:t.title], _with_newline(title), *lines[t.title + 1:]])
        v.note = f"title {title!r}"
    elif kind == "unit":
        t = draw(st.sampled_from(units))
        i, start, end = t.unit
        new = draw(st.sampled_from(plugin.other_units(lines[i][start:end])))
        v.text = "".join([*lines[:i], _replace_span(lines[i], start, end, new), *lines[i + 1:]])
        v.note = f"unit {lines[i][start:end]!r} -> {new!r} in line {i}"
    elif kind == "scale":
        t = draw(st.sampled_from([t for t in tables if any(r.figures for r in t.rows)]))
        row = draw(st.sampled_from([r for r in t.rows if r.figures]))
        fig = draw(st.sampled_from(row.figures))
        factor = draw(st.sampled_from([1e-3, 1e3, 1e6]))
        old = lines[row.line][fig.start:fig.end]
        new = _token_scaled(old, factor)
        v.text = "".join([*lines[:row.line],
                          _replace_span(lines[row.line], fig.start, fig.end, new),
                          *lines[row.line + 1:]])
        v.values = {**original.values, fig.key: float(new)}
        bad = plugin.impossible(ctx, fig.key, float(new), v.values)
        v.expect = "refused" if bad else "exact_or_refused"
        v.note = f"{fig.key}: {old} -> {new}" + (" (impossible)" if bad else "")
    elif kind == "delete_row":
        t = draw(st.sampled_from([t for t in tables if len(t.rows) >= 3]))
        row = draw(st.sampled_from(t.rows[1:-1]))
        v.text = "".join([*lines[:row.line], *lines[row.line + 1:]])
        if not row.essential:
            keys = set(row.keys) | {f.key for f in row.figures}
            v.values = {k: x for k, x in original.values.items() if k not in keys}
            v.expect = "exact_or_refused"
        v.note = f"line {row.line} deleted: {lines[row.line].strip()!r}"
    elif kind == "foreign_out":
        foreign = draw(st.lists(st.sampled_from(FOREIGN), min_size=1, max_size=3))
        block = "".join(x + "\n" for x in foreign)
        if draw(st.booleans()):
            v.text, v.note = block + text, f"before: {foreign}"
        else:
            v.text, v.note = _with_newline(text) + block, f"after: {foreign}"
        v.expect = "exact" if plugin.outside_read else "exact_or_refused"
        v.values = original.values
    elif kind == "foreign_in":
        t = draw(st.sampled_from([t for t in tables if len(t.rows) >= 2]))
        at = draw(st.integers(1, len(t.rows) - 1))
        i = t.rows[at].line
        foreign = draw(st.sampled_from(FOREIGN))
        v.text = "".join([*lines[:i], foreign + "\n", *lines[i:]])
        if not plugin.inside_refused:
            v.expect, v.values = "exact_or_refused", original.values
        v.note = f"before line {i}: {foreign!r}"
    else:  # cut
        at = draw(st.integers(1, max(1, len(text.rstrip("\n")) - 1)))
        v.text = text[:at]
        mid = not v.text.endswith("\n")
        v.expect = "refused" if mid and plugin.mid_line_refused else "exact_or_refused"
        v.values = original.values
        v.note = f"cut at {at} of {len(text)}: ...{v.text[-40:]!r}"
    return v


def _applies(kind: str, tables: list[Table], units: list[Table], titled: list[Table]) -> bool:
    if kind in ("foreign_out", "cut"):
        return True
    if not tables:
        return False
    if kind == "sibling":
        return bool(titled)
    if kind == "unit":
        return bool(units)
    if kind == "delete_row":
        return any(len(t.rows) >= 3 for t in tables)
    if kind == "foreign_in":
        return any(len(t.rows) >= 2 for t in tables)
    if kind == "dup_table":
        return True
    return any(r.figures for t in tables for r in t.rows)


def _words(line: str) -> str:
    return " ".join(line.split())


def _unit_of(lines: list[str], table: Table) -> str:
    i, start, end = table.unit
    return lines[i][start:end]


# ------------------------------------------------------------------------- the oracle
def check(v: Variant) -> None:
    """Assert that the plugin's reading of ``v.text`` meets ``v.expect``."""
    got = v.plugin.read(v.text, v.ctx)
    if v.expect == "refused":
        assert isinstance(got, Refused), f"{v!r} was read, not refused: {_diff(v.original, got)}"
        return
    if isinstance(got, Refused):
        assert v.expect == "exact_or_refused", f"{v!r} must be read exactly, was refused: {got.why}"
        return
    if v.kind == "cut":
        assert v.plugin.cut_ok(v.values, got.values), (
            f"{v!r} was read wrongly: {_diff(v.values, got)}")
        return
    assert got.values == v.values, f"{v!r} was read wrongly: {_diff(v.values, got)}"


def _diff(expected: dict, got) -> str:
    if not isinstance(got, Accepted):
        return str(got)
    changed = {k: (expected.get(k), got.values.get(k)) for k in set(expected) | set(got.values)
               if not _same(expected.get(k), got.values.get(k))}
    return f"{len(changed)} figures differ: {dict(list(changed.items())[:4])}"


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


#: generated variants per parser (VARIANT_EXAMPLES for more): 22 parsers x 120 in ~6 s on 2 cores
EXAMPLES = int(os.environ.get("VARIANT_EXAMPLES", 120))


def assert_read_whole(plugin: Plugin) -> None:
    """Every recording of ``plugin`` is accepted unchanged: the variants start from whole
    readings (recordings really cut are left out of ``files()``)."""
    files = plugin.files()
    assert files, f"{plugin.name}: no recordings"
    for path in files:
        text = plugin.text(path)
        got = plugin.read(text, plugin.context(text))
        assert isinstance(got, Accepted), (path.name, got)


def run_variants(plugin: Plugin, examples: int = EXAMPLES) -> None:
    """``examples`` variants of ``plugin``'s recordings, derandomized, each judged by
    :func:`check`."""
    @settings(max_examples=examples, derandomize=True, deadline=None, database=None)
    @given(variant=variants(plugin))
    def run(variant):
        check(variant)

    run()

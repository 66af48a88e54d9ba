"""Hostile variants (tests/variants.py) of every recorded output of GPCNeT's ``network_test``
and ``network_load_test`` that is whole (real-outputs, real-outputs-local): each is refused, or
read exactly where harmless.

The context is what GPCNeTTest asks (program, build, ranks, nodes) and the recording's own line
rate (``variants.rung``); a figure scaled is impossible when it breaks GPCNeT's rules, written
again in ``_gpcnet_contradictions``: the counts, the load test's split of the nodes, positive
rates and impact factors, impact factors that agree with the tables, no crossing rate above
the line.
"""

from __future__ import annotations

import math
import re

import pytest
from recordings import recordings
from variants import (
    Accepted,
    Figure,
    Plugin,
    Refused,
    Row,
    Table,
    assert_read_whole,
    run_variants,
    rung,
)

from fabrictest.parsers import ParseError, gpcnet, physical

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


# --------------------------------------------------------------------------------- GPCNeT
#: not whole: GPCNeT's ERROR outputs, and superbench's sample of a -DVERBOSE build whose
#: impact factors read 0.0X (tests/parsers/test_gpcnet.py)
GPCNET_NOT_WHOLE = ("error", "too-few-nodes", "verbose-superbench-sample")
_COUNTS = {"ranks": re.compile(r"Test with (\d+) MPI ranks \((\d+) nodes\)"),
           "test_nodes": re.compile(r"(\d+) nodes running Network Tests"),
           "congestor_nodes": re.compile(r"(\d+) nodes running Congestion Tests"
                                         r"(?: \(min (\d+) nodes per congestor\))?")}


def _title(cell: str) -> str:
    return re.sub(r"\s+", " ", cell).replace("( ", "(")


class Gpcnet(Plugin):
    name = "gpcnet"
    # a cut inside a line a site printed after GPCNeT's last table leaves GPCNeT's output
    # whole, and the parser reads it so (gpcnet.py): only a cut inside its own lines is
    # refused, which the oracle's exact-or-refused covers
    mid_line_refused = False

    def files(self):
        return [p for p in recordings("gpcnet-*.txt")
                if not any(x in p.name for x in GPCNET_NOT_WHOLE)]

    def context(self, text):
        r = gpcnet.parse_gpcnet(text)
        per_node = r.ranks / r.nodes
        top = max((row.values["Avg"] * per_node * gpcnet.MIB_GBPS for t in r.tables
                   for row in t.rows if row.test in gpcnet.CROSSING_ROWS
                   and row.units == gpcnet.BW), default=0)
        return {"program": r.program, "ranks": r.ranks, "nodes": r.nodes, "verbose": r.verbose,
                "version": r.version, "rate": rung(top)}

    def read(self, text, ctx):
        try:
            r = gpcnet.parse_gpcnet(text)
        except ParseError as err:
            return Refused(str(err))
        problems = gpcnet.missing(r, program=ctx["program"], ranks=ctx["ranks"],
                                  verbose=ctx["verbose"], nodes=ctx["nodes"])
        problems += gpcnet.above_line_rate(r, ctx["rate"])
        if problems:
            return Refused("; ".join(problems))
        values = {(name,): getattr(r, name) for name in (
            "ranks", "nodes", "test_nodes", "congestor_nodes", "per_congestor")
            if getattr(r, name) is not None}
        for t in r.tables:
            for row in t.rows:
                values[(t.title, row.name, "units")] = row.units
                values.update({(t.title, row.name, c): v for c, v in row.values.items()})
        return Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        head = next(i for i, x in enumerate(lines) if gpcnet._HEADER.match(x))
        counts = []
        for i in range(head + 1, len(lines)):
            if lines[i].startswith("+"):
                break
            for name, pattern in _COUNTS.items():
                if m := pattern.search(lines[i]):
                    keys = {"ranks": ("ranks", "nodes"), "test_nodes": ("test_nodes",),
                            "congestor_nodes": ("congestor_nodes", "per_congestor")}[name]
                    counts.append(Row(i, tuple(Figure((k,), m.start(g), m.end(g))
                                               for g, k in enumerate(keys, 1) if m.group(g))))
        tables = [Table(first=head, rows=tuple(counts), title=head)]
        title = columns = None
        rows: list[Row] = []
        unit = None
        for i, line in enumerate(lines):
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 1:
                if title is not None:
                    tables.append(Table(first=title - 1, rows=tuple(rows), title=title,
                                        unit=unit))
                title, columns, rows, unit, name = i, None, [], None, _title(cells[0])
            elif cells[0] == "Name":
                columns = cells[1:-1] if name != gpcnet.KEY_RESULTS else []
            elif cells[0] == "" and name == gpcnet.KEY_RESULTS:
                columns = cells[1:]
            elif columns:
                spans = [m.span() for m in re.finditer(r"(?<=\|)[^|]*", line)][1:]
                figs = []
                for column, (a, b) in zip(columns, spans[:len(columns)], strict=False):
                    n = _NUMBER.search(line, a, b)
                    figs.append(Figure((name, cells[0], column), n.start(), n.end()))
                rows.append(Row(i, tuple(figs)))
                if unit is None and name != gpcnet.KEY_RESULTS:
                    a, b = spans[len(columns)]
                    u = re.search(r"\S+", line[a:b])
                    unit = (i, a + u.start(), a + u.end())
        if title is not None:
            tables.append(Table(first=title - 1, rows=tuple(rows), title=title, unit=unit))
        return tables

    def siblings(self, ctx):
        boxes = (gpcnet.ISOLATED, gpcnet.CONGESTORS, gpcnet.LOADED, gpcnet.KEY_RESULTS)
        return [f"Network Tests v{ctx['version']}", f"NetworkLoad Tests v{ctx['version']}",
                *(f"|{t:^78}|" for t in boxes)]

    def other_units(self, unit):
        return {gpcnet.LAT: ["msec", "nsec", gpcnet.BW],
                gpcnet.BW: ["MB/s/rank", "GiB/s/rank", gpcnet.LAT]}.get(unit, [])

    def impossible(self, ctx, key, value, values):
        return bool(_gpcnet_contradictions(ctx, values))


def _gpcnet_contradictions(ctx, values) -> list[str]:
    """GPCNeT's rules written again (gpcnet.py's docstring): the job's counts, the load test's
    split of the nodes, positive rates and impact factors, impact factors that agree with the
    tables, no crossing rate above the line."""
    nodes = values.get(("nodes",))
    if (values.get(("ranks",)), nodes) != (ctx["ranks"], ctx["nodes"]):
        return ["counts"]
    out = []
    if ctx["program"] == "network_load_test":
        cong = math.floor(gpcnet.CONGESTOR_FRACTION * nodes)
        if (values.get(("test_nodes",)), values.get(("congestor_nodes",))) != (nodes - cong, cong):
            out.append("split")
        elif ("per_congestor",) in values and values[("per_congestor",)] != cong // 4:
            out.append("per congestor")
    rows = {k[:2]: values[(*k[:2], "units")] for k in values if len(k) == 3}
    for (title, row), units in rows.items():
        for col in ("Avg", "99%"):
            v = values.get((title, row, col))
            if v is not None and (v < 0 or v == 0 and units != gpcnet.LAT):
                out.append(f"{row} {col} not positive")
        test = gpcnet._SIZE.sub("", row)
        avg = values.get((title, row, "Avg"))
        if test in gpcnet.CROSSING_ROWS and units == gpcnet.BW and avg * ctx["ranks"] / nodes \
                * gpcnet.MIB_GBPS > ctx["rate"] * physical.MARGIN:
            out.append(f"{row} above the line")
    if ctx["program"] == "network_load_test":
        for title, row in rows:
            if title != gpcnet.KEY_RESULTS:
                continue
            for col in ("Avg", "99%"):
                base = values[(gpcnet.ISOLATED, row, col)]
                load = values[(gpcnet.LOADED, row, col)]
                unit = values[(gpcnet.ISOLATED, row, "units")]
                num, den = (load, base) if unit == gpcnet.LAT else (base, load)
                ratio = num / den if den else math.inf
                if not math.isfinite(ratio) or abs(ratio - values[(title, row, col)]) > 0.05 + 1e-9:
                    out.append(f"{row} impact {col}")
    return out


PLUGINS = [Gpcnet()]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_every_gpcnet_recording_is_read_whole(plugin):
    assert_read_whole(plugin)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_hostile_gpcnet_variants(plugin):
    run_variants(plugin)

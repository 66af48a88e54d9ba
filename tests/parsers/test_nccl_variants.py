"""Hostile variants of the nccl-tests and rccl-tests recordings (tests/variants.py): duplicated
rows and tables, deleted rows, changed units, scaled figures, job-script lines around and between
the rows, cuts anywhere. Each is refused, or read exactly where harmless (nccl-tests' format
interleaves the libraries' lines with its rows, so a foreign line between rows is read).

A scaled figure is impossible, and must be refused, when it breaks nccl-tests' own arithmetic
by more than 2 % (+0.01): algbw = size / time, busbw = algbw x 2(n-1)/n (all_reduce) or
(n-1)/n (alltoall), an oracle looser than the parser's (the printed digits' rounding), so
that what it flags the parser must refuse; a time scaled at a size whose bandwidths print 0.00
stays possible (a slower run of 8 bytes), read exactly or refused.
"""

from __future__ import annotations

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
)

from fabrictest.parsers import ParseError, nccl

WHOLE = ("nccl-all_reduce_perf-2nodes-16xh100-a3mega.txt", "rccl-all_reduce_perf-1node-8xmi300x.txt",
         "rccl-all_reduce_perf-2nodes-16xmi300x-e16G.txt",
         "nccl-alltoall_perf-1rank-rtx5090-one-size.txt")
FIGURES = ("time", "algbw", "busbw")


class Nccl(Plugin):
    name = "nccl"
    inside_refused = False  # NCCL's and RCCL's own lines sit between the rows

    def files(self):
        return [p for p in recordings("*cl-*.txt") if p.name in WHOLE]

    def context(self, text):
        r = nccl.parse_nccl(text)
        benchmark = "alltoall_perf" if r.rows[0].redop == "none" else "all_reduce_perf"
        n = len(r.ranks)
        ctx = {"benchmark": benchmark, "lo": r.params.min_bytes, "hi": r.params.max_bytes,
               "ranks": n, "factor": nccl.BENCHMARKS[benchmark][1](n),
               "sizes": [row.size for row in r.rows]}
        ctx["values"] = self.read(text, ctx).values
        return ctx

    def read(self, text, ctx):
        try:
            r = nccl.parse_nccl(text)
        except ParseError as err:
            return Refused(str(err))
        problems = nccl.missing(r, ctx["benchmark"], ctx["lo"], ctx["hi"], ranks=ctx["ranks"])
        if problems:
            return Refused("; ".join(problems))
        values = {}
        for i, row in enumerate(r.rows):
            for half, t in (("oop", row.out_of_place), ("ip", row.in_place)):
                values.update({(i, half, "time"): t.time_us, (i, half, "algbw"): t.algbw,
                               (i, half, "busbw"): t.busbw})
        return Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        header = next(i for i, x in enumerate(lines) if re.match(r"#\s*size\s+count", x))
        units = header + 1
        m = re.search(r"\(GB/s\)", lines[units])
        rows, index = [], 0
        for i in range(units + 1, len(lines)):
            if not re.match(r"^\s*\d+\s+\d+\s+\w+\s", lines[i]):
                continue
            spans = [(t.start(), t.end()) for t in re.finditer(r"\S+", lines[i])]
            figs = tuple(Figure((index, half, what), *spans[col])
                         for half, base in (("oop", 5), ("ip", 9))
                         for col, what in zip(range(base, base + 3), FIGURES, strict=True))
            rows.append(Row(i, figs))
            index += 1
        return [Table(first=header, rows=tuple(rows), unit=(units, m.start(), m.end()))]

    def other_units(self, unit):
        return ["(MB/s)", "(Gb/s)", "(GiB/s)"]

    def impossible(self, ctx, key, value, values):
        index, half, what = key
        size = ctx["sizes"][index]
        time, alg, bus = (values[(index, half, w)] for w in FIGURES)
        if time <= 0:
            return True
        expected_alg = size / (time * 1e3)
        off = abs(alg - expected_alg) > 0.01 + 0.02 * max(alg, expected_alg)
        off_bus = abs(bus - alg * ctx["factor"]) > 0.01 + 0.02 * max(bus, alg * ctx["factor"])
        return off or off_bus


@pytest.mark.parametrize("plugin", [Nccl()], ids=lambda p: p.name)
def test_nccl_variants(plugin):
    assert_read_whole(plugin)
    run_variants(plugin)

"""Hostile variants (tests/variants.py) of every recorded output of the all-to-many, bisection
bandwidth and congestion programs (GPCNeT's: test_variants_gpcnet.py): each is refused, or read
exactly where harmless.

What the family asks of the original (its program, ranks, nodes, sizes, repetitions) is the
context; a figure scaled is impossible, and must be refused, when it breaks what the program
prints together (each plugin's ``impossible`` writes that arithmetic again, from the parsers'
docstrings) or exceeds the recording's own line rate (``variants.rung``).
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

from fabrictest.parsers import ParseError, alltomany, bisection, congestion, physical

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


# ---------------------------------------------------------------------------- all-to-many
#: the lines our program prints in a block besides the notes' (src/c/alltomany.c)
PROGRAM_EXTRAS = ("Buffer memory", "Payload check", "Injected fault")


class AllToMany(Plugin):
    name = "alltomany"
    # (the notes' program prints its blocks among the shell's lines; ours among MPI's
    # warnings: only `Label = value` lines are read, and a foreign one changes no figure)
    inside_refused = False

    def files(self):
        # the corrupt run's payload check FAILED and the switched-off one has no block:
        # both refused whole (tests/parsers/test_local_recordings.py)
        return [*recordings("alltomany-cuda-device-ompi4.1-h100.txt"),
                *recordings("seed004-alltomany-*.txt")]

    def context(self, text):
        blocks = alltomany.parse_alltomany_all(text)
        return {"blocks": [{"iterations": b.iterations, "nprocs": b.nprocs,
                            "repetitions": b.repetitions,
                            "payload": "Payload check" in b.extra} for b in blocks]}

    def read(self, text, ctx):
        try:
            blocks = alltomany.parse_alltomany_all(text)
        except ParseError as err:
            return Refused(str(err))
        if len(blocks) != len(ctx["blocks"]):
            return Refused(f"{len(blocks)} blocks, expected {len(ctx['blocks'])}")
        values, problems = {}, []
        for j, (b, want) in enumerate(zip(blocks, ctx["blocks"], strict=True)):
            problems += alltomany.missing(b, iterations=want["iterations"],
                                          nprocs=want["nprocs"],
                                          repetitions=want["repetitions"])
            if want["payload"] and not b.extra.get("Payload check", "").startswith("passed"):
                problems.append("no passed payload check")
            for name in (*(f for f, _ in alltomany._FIELDS.values()), "repetitions",
                         "footer_nprocs"):
                if getattr(b, name) is not None:
                    values[(j, name)] = getattr(b, name)
            # (`extra` keeps any other `Label = value` line, a job script's `A=B` too: the
            # family reads the program's own ones)
            values.update({(j, "extra", k): v for k, v in b.extra.items() if k in PROGRAM_EXTRAS})
            for t in b.times:
                for name in alltomany._TIME_FIELDS:
                    values[(j, t.rep, name)] = getattr(t, name)
                values[(j, t.rep, "at")] = t.at
                for name in ("irecv_at", "end_to_end_at"):
                    values.update({(j, t.rep, name, k): v
                                   for k, v in enumerate(getattr(t, name))})
        return Refused("; ".join(problems)) if problems else Accepted(values)

    _ESSENTIAL = {"nprocs", "iterations", "t_irecv", "t_isend", "t_waitall", "t_end_to_end",
                  "repetitions", "footer_nprocs"}

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        tables, rows, first, j = [], [], None, -1
        for i, line in enumerate(lines):
            if re.match(r"^\s*-{10,}\s*$", line):
                if first is None:
                    first, rows, j = i, [], j + 1
                else:
                    tables.append(Table(first=first, rows=tuple(rows)))
                    first = None
                continue
            if first is None:
                continue
            if m := alltomany._TIMES.match(line):
                rep = int(m.group("rep"))
                figs = []
                for f in re.finditer(r"(\w+)=(\S+)", line):
                    if f.group(1) in alltomany._TIME_FIELDS:
                        figs.append(Figure((j, rep, f.group(1)), f.start(2), f.end(2)))
                    elif f.group(1) in ("irecv_at", "end_to_end_at"):
                        figs += [Figure((j, rep, f.group(1), k), f.start(2) + n.start(),
                                        f.start(2) + n.end())
                                 for k, n in enumerate(_NUMBER.finditer(f.group(2)))]
                rows.append(Row(i, tuple(figs)))
            elif m := alltomany._FOOTER.search(line):
                rows.append(Row(i, (Figure((j, "footer_nprocs"), m.start(1), m.end(1)),)))
            elif m := alltomany._LINE.match(line):
                label = re.sub(r"\s+", " ", m.group("label")).strip()
                name = (alltomany._FIELDS.get(label.lower()) or (None,))[0] or (
                    "repetitions" if label == "Repetitions" else None)
                key = (j, name) if name else (j, "extra", label)
                n = _NUMBER.match(m.group("value"))
                figs = (Figure(key, m.start("value"), m.start("value") + n.end()),) if (
                    name and n) else ()
                essential = name in self._ESSENTIAL or label == "Payload check"
                rows.append(Row(i, figs, essential=essential, keys=(key,)))
        return tables

    def impossible(self, ctx, key, value, values):
        want = ctx["blocks"][key[0]]
        block = {k[1:]: v for k, v in values.items() if k[0] == key[0]}
        if block.get(("nprocs",)) != want["nprocs"] or \
                block.get(("iterations",)) != want["iterations"] or \
                block.get(("repetitions",)) != want["repetitions"]:
            return True
        return _alltomany_contradicts(block)


def _alltomany_contradicts(b: dict) -> bool:
    """The program's arithmetic written again (alltomany.py's docstring, src/c/alltomany.c)."""
    n, recv, unit = b[("nprocs",)], b.get(("receivers",)), b.get(("unit_size",))
    if not 1 <= b.get(("senders",), 1) <= n or recv is not None and not 1 <= recv <= n:
        return True
    if b.get(("footer_nprocs",), n) != n or unit is not None and (
            b.get(("min_msg_size",), unit) != unit or
            recv is not None and b.get(("max_msg_size",), unit * recv) != unit * recv):
        return True
    total = b[("t_end_to_end",)]
    times = [b[(f"t_{x}",)] for x in ("irecv", "isend", "waitall")]
    if any(t < 0 for t in times) or total < 0 or any(t > total for t in times):
        return True
    reps = sorted({k[0] for k in b if len(k) >= 2 and isinstance(k[0], int)})
    for r in reps:
        e2e = b[(r, "end_to_end")]
        irecv_at = [b[(r, "irecv_at", k)] for k in range(len(b[(r, "at")]))]
        e2e_at = [b[(r, "end_to_end_at", k)] for k in range(len(b[(r, "at")]))]
        if not e2e > 0 or any(b[(r, x)] < 0 or b[(r, x)] > e2e
                              for x in ("irecv", "isend", "waitall")):
            return True
        decreasing = any(y < x for s in (irecv_at, e2e_at) for x, y in zip(s, s[1:], strict=False))
        if decreasing or any(i > e for i, e in zip(irecv_at, e2e_at, strict=True)) or \
                irecv_at[-1] != b[(r, "irecv")] or e2e_at[-1] > e2e or irecv_at[0] < 0 or \
                not e2e_at[0] > 0:
            return True
    if reps:
        middle = sorted(b[(r, "end_to_end")] for r in reps)[(len(reps) - 1) // 2]
        return not any(all(abs(b[(f"t_{x}",)] - b[(r, x)]) <= 0.00005 + 1e-9
                           for x in alltomany._TIME_FIELDS)
                       for r in reps if b[(r, "end_to_end")] == middle)
    return False


# ------------------------------------------------------------------------------ bisection
class Bisection(Plugin):
    name = "bisection"
    # the notes' program prints other ranks' fragments anywhere (bisection.py): its rows are
    # found by their shape, and a foreign line changes none
    inside_refused = False

    def files(self):
        return recordings("bisection_bw-*.txt") + recordings("seed003-bisection-*.txt")

    def context(self, text):
        r = bisection.parse_bisection(text)
        return {"ranks": r.nprocs, "nodes": r.nodes, "ppn": r.ppn, "reps": r.reps,
                "sizes": [row.size for row in r.rows],
                "rate": rung(r.peak_node_mbps() * 8e-3)}

    def read(self, text, ctx):
        try:
            r = bisection.parse_bisection(text)
        except ParseError as err:
            return Refused(str(err))
        problems = bisection.missing(r, ranks=ctx["ranks"], sizes=ctx["sizes"],
                                     nodes=ctx["nodes"], ppn=ctx["ppn"], reps=ctx["reps"])
        problems += bisection.above_line_rate(r, ctx["rate"])
        if problems:
            return Refused("; ".join(problems))
        values = {("nprocs",): r.nprocs, ("ppn",): r.ppn, ("nodes",): r.nodes,
                  ("reps",): r.reps}
        for row in r.rows:
            values.update({(row.size, "ranks"): row.ranks, (row.size, "node"): row.node_mbps,
                           (row.size, "aggregate"): row.aggregate_gbps})
        return Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        head = next(i for i, x in enumerate(lines) if bisection._RANK0.search(x))
        m = re.search(r"Number of Process\s*(\d+)PPN:\s*(\d+),\s*Number of nodes:\s*(\d+),"
                      r"\s*Num_reps\s*=\s*(\d+)", lines[head])
        rows = [Row(head, tuple(Figure((k,), m.start(g), m.end(g))
                                for g, k in enumerate(("nprocs", "ppn", "nodes", "reps"), 1)))]
        unit = None
        for i, line in enumerate(lines):
            if not (r := bisection._ROW.search(line)):
                continue
            size = int(r.group(2))
            rows.append(Row(i, (Figure((size, "ranks"), r.start(1), r.end(1)),
                                Figure((size, "node"), r.start(3), r.end(3)),
                                Figure((size, "aggregate"), r.start(4), r.end(4)))))
            if unit is None:
                u = line.index("MB/sec/node")
                unit = (i, u, u + len("MB/sec/node"))
        return [Table(first=head, rows=tuple(rows), title=head, unit=unit)]

    def other_units(self, unit):
        return ["GB/sec/node", "Mb/sec/node"]

    def impossible(self, ctx, key, value, values):
        if (values[("nprocs",)], values[("nodes",)], values[("ppn",)], values[("reps",)]) != (
                ctx["ranks"], ctx["nodes"], ctx["ppn"], ctx["reps"]):
            return True
        nodes = ctx["nodes"]
        for size in ctx["sizes"]:
            node, agg = values[(size, "node")], values[(size, "aggregate")]
            if values[(size, "ranks")] != ctx["ranks"] or not node > 0 or agg < 0:
                return True
            if abs(node * nodes / 1000 - agg) > 0.005 + 0.005 * nodes / 1000 + 1e-9:
                return True
            if node * 8e-3 > ctx["rate"] * physical.MARGIN:
                return True
        return False


# ----------------------------------------------------------------------------- congestion
class Congestion(Plugin):
    name = "congestion"
    # each line is found by its own shape (congestion.py): a foreign line changes no figure
    inside_refused = False

    def files(self):
        return recordings("congestion-*.txt")

    def context(self, text):
        r = congestion.parse_congestion(text)
        links = 1 if r.mode == "incast" else max(r.nodes - 2, 1)
        top = max([p.bw_gbps for p in r.phases.values()] + [r.aggressors.gbps / links])
        return {"mode": r.mode, "nodes": r.nodes, "ranks": r.ranks, "one_host": r.one_host,
                "sizes": dict(r.sizes), "rate": rung(top), "links": links, "victim": r.victim}

    def read(self, text, ctx):
        try:
            r = congestion.parse_congestion(text)
        except ParseError as err:
            return Refused(str(err))
        problems = congestion.missing(r, mode=ctx["mode"], nodes=ctx["nodes"],
                                      ranks=ctx["ranks"], one_host=ctx["one_host"],
                                      sizes=ctx["sizes"])
        problems += congestion.above_line_rate(r, ctx["rate"])
        if problems:
            return Refused("; ".join(problems))
        values = {("nodes",): r.nodes, ("ranks",): r.ranks, ("aggressor_ranks",):
                  r.aggressor_ranks, ("victim",): r.victim, ("mode",): r.mode}
        values.update({("sizes", k): v for k, v in r.sizes.items()})
        for phase, p in r.phases.items():
            values.update({(phase, k): getattr(p, k) for k in ("lat_avg_us", "lat_p99_us",
                                                               "bw_gbps")})
        values.update({("aggressors", k): getattr(r.aggressors, k)
                       for k in ("ranks", "bytes", "seconds", "gbps")})
        return Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        rows, head = [], None
        shapes = [(congestion._HEADER, {1: ("nodes",), 2: ("ranks",), 4: ("aggressor_ranks",)}),
                  (congestion._SIZES, {k: ("sizes", n) for k, n in
                                       enumerate(congestion.SIZE_NAMES, 1)}),
                  (congestion._PHASE, {2: "lat_avg_us", 3: "lat_p99_us", 4: "bw_gbps"}),
                  (congestion._AGGRESSORS, {k: ("aggressors", n) for k, n in
                                            enumerate(("ranks", "bytes", "seconds", "gbps"), 1)}),
                  (congestion._DONE, {})]
        unit = None
        for i, line in enumerate(lines):
            for pattern, groups in shapes:
                if not (m := pattern.match(line.rstrip("\n"))):
                    continue
                if pattern is congestion._HEADER:
                    head = i
                if pattern is congestion._PHASE:
                    groups = {g: (m.group(1), k) for g, k in groups.items()}
                if pattern is congestion._AGGRESSORS:
                    unit = (i, line.rindex("Gbps"), line.rindex("Gbps") + 4)
                rows.append(Row(i, tuple(Figure(k, m.start(g), m.end(g))
                                         for g, k in groups.items())))
        return [Table(first=head, rows=tuple(rows), title=head, unit=unit)]

    def siblings(self, ctx):
        a, b = ctx["victim"]
        return [f"# congestion: nodes {ctx['nodes']}, ranks {ctx['ranks']}, aggressors {mode} "
                f"({(ctx['nodes'] - 2) * ctx['ranks'] // ctx['nodes']} ranks), victim {a} -> {b}"
                + (", one host" if ctx["one_host"] else "") for mode in congestion.MODES]

    def other_units(self, unit):
        return ["Mbps", "GB/s"]

    def impossible(self, ctx, key, value, values):
        v = values
        nodes, ranks = v[("nodes",)], v[("ranks",)]
        if (nodes, ranks) != (ctx["nodes"], ctx["ranks"]) or \
                v[("aggressor_ranks",)] != (nodes - 2) * (ranks // nodes):
            return True
        if any(not math.isclose(v[("sizes", k)], x, rel_tol=1e-9, abs_tol=0.05)
               for k, x in ctx["sizes"].items()):
            return True
        ceiling = ctx["rate"] * physical.MARGIN
        for phase in congestion.PHASES:
            if any(not v[(phase, k)] > 0 for k in ("lat_avg_us", "lat_p99_us", "bw_gbps")) or \
                    v[(phase, "bw_gbps")] > ceiling:
                return True
        agg = {k: v[("aggressors", k)] for k in ("ranks", "bytes", "seconds", "gbps")}
        if agg["ranks"] != v[("aggressor_ranks",)] or not (
                agg["bytes"] > 0 and agg["seconds"] > 0 and agg["gbps"] > 0):
            return True
        low = agg["bytes"] * 8 / (agg["seconds"] + 0.005) / 1e9 - 5e-5
        high = agg["bytes"] * 8 / max(agg["seconds"] - 0.005, 1e-9) / 1e9 + 5e-5
        return not low <= agg["gbps"] <= high or agg["gbps"] > ceiling * ctx["links"]


# ------------------------------------------------------------------------------ the tests
PLUGINS = [AllToMany(), Bisection(), Congestion()]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_every_program_recording_is_read_whole(plugin):
    assert_read_whole(plugin)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_hostile_program_variants(plugin):
    run_variants(plugin)

"""Hostile variants of every recorded real output (tests/variants.py) for the OSU, IMB,
perftest, tx/rx, ibv_devinfo, rdma link and launch parsers: each variant is refused, or read
exactly where it is harmless (the oracle of each kind is in tests/variants.py).

A figure's physical bound here is the recording's own: the smallest line rate of LADDER that
holds it (a 100 Gb/s link for a 97 Gbps stream), as a partition would declare it; a figure
scaled past it is impossible and must be refused.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from recordings import DATA, recordings
from variants import (
    LADDER,
    Accepted,
    Figure,
    Plugin,
    Refused,
    Row,
    Table,
    assert_read_whole,
    run_variants,
)
from variants import number_spans as _spans
from variants import rung as _rung

from fabrictest.parsers import (
    ParseError,
    collectives,
    ibv_devinfo,
    imb,
    launch,
    osu,
    perftest,
    physical,
    rdma_link,
    txrx,
)

WRAPPED = DATA / "real-outputs-wrapped"  # site-wrapped outputs (SOURCES.md there)


def _time_rung(benchmark: str, rows) -> float:
    """The smallest line rate under which no collective latency of ``rows`` (size, us) is
    faster than its bytes' share can cross (parsers/collectives.py), as a partition would
    declare it; 0.2 (the vcluster's) for a benchmark without a share."""
    share = collectives.LINK_SHARE.get(collectives.blocking(benchmark))
    if not share:
        return LADDER[0]
    need = max((share * size * 8 / (us * 1e3) for size, us in rows if size and us > 0),
               default=0)
    return _rung(need)


def _too_fast(ctx, size: int, us: float) -> bool:
    """The oracle of the collectives' time bound, written again."""
    share = collectives.LINK_SHARE.get(collectives.blocking(ctx["benchmark"]))
    return bool(share and size and us < share * size * 8 / (ctx["rate"] * physical.MARGIN
                                                             * 1e3))


def _collapses(rates: dict[int, float]) -> bool:
    """A rate at the largest sizes below TOP_FLOOR of what the smaller sizes reach (the rule of
    fabrictest.parsers.physical, written again here as the oracle)."""
    top = max(rates) * physical.TOP_SHARE
    below = [v for s, v in rates.items() if s < top]
    return bool(below) and any(v < physical.TOP_FLOOR * max(below)
                               for s, v in rates.items() if s >= top)


# ------------------------------------------------------------------------------------ OSU
OSU_SIBLINGS = {"latency": "MPI Latency", "bw": "MPI Bandwidth",
                "bibw": "MPI Bi-Directional Bandwidth", "get_bw": "MPI_Get Bandwidth",
                "mbw_mr": "MPI Multiple Bandwidth / Message Rate"}


class Osu(Plugin):
    name = "osu"

    def files(self):
        return [p for p in recordings("*osu_*.txt")
                if "no-rows" not in p.name and "-fails" not in p.name] + [
            p for p in sorted(WRAPPED.glob("osu_*.txt")) if "two-runs" not in p.name]

    def context(self, text):
        r = osu.parse_osu(text)
        links = r.pairs if r.benchmark == "mbw_mr" and r.pairs else 1
        directions = 2 if r.benchmark.endswith("bibw") else 1
        top = r.peak() * physical.GBPS_PER_MBS / (links * directions) if r.unit == "MB/s" else 0
        rate = _rung(top) if r.unit == "MB/s" else _time_rung(
            r.benchmark, [(row.size, row.value) for row in r.rows])
        return {"benchmark": f"osu_{r.benchmark}", "lo": r.sizes()[0], "hi": r.sizes()[-1],
                "links": links, "directions": directions, "rate": rate, "unit": r.unit,
                "version": r.version}

    def read(self, text, ctx):
        try:
            r = osu.parse_osu(text)
        except ParseError as err:
            return Refused(str(err))
        problems = osu.missing(r, ctx["hi"], ctx["lo"], benchmark=ctx["benchmark"])
        problems += osu.above_line_rate(r, ctx["rate"], ctx["links"])
        problems += osu.too_fast(r, ctx["rate"])
        if problems:
            return Refused("; ".join(problems))
        values = {}
        for row in r.rows:
            values[(row.size, 0)] = row.value
            for i, v in enumerate(row.extra.values(), 1):
                values[(row.size, i)] = v
        return Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        title = next(i for i, x in enumerate(lines) if x.startswith("# OSU"))
        header = next(i for i, x in enumerate(lines) if re.match(r"#\s*(Size|Avg Latency)\b", x))
        m = re.search(r"\(([^)]*)\)", lines[header]) or re.search(r"MB/s", lines[header])
        span = (m.start(1), m.end(1)) if m and m.groups() else (m.start(), m.end())
        rows = []
        sizeless = re.match(r"#\s*Avg Latency", lines[header]) is not None  # osu_barrier
        for i in range(header + 1, len(lines)):
            if sizeless and re.match(r"^\s*[\d.]+(\s+[\d.]+)*\s*$", lines[i]):
                rows.append(Row(i, tuple(Figure((0, k), a, b)
                                         for k, (a, b) in enumerate(_spans(lines[i])))))
                continue
            first = re.match(r"^\s*(\d+)\s+", lines[i])
            if first and not sizeless:
                figs = tuple(Figure((int(first.group(1)), k), a, b)
                             for k, (a, b) in enumerate(_spans(lines[i], first.end())))
                rows.append(Row(i, figs))
        return [Table(first=title, rows=tuple(rows), title=title, unit=(header, *span))]

    def siblings(self, ctx):
        return [f"# OSU {name} Test v{ctx['version']}" for bench, name in OSU_SIBLINGS.items()
                if f"osu_{bench}" != ctx["benchmark"]]

    def other_units(self, unit):
        return {"MB/s": ["GB/s", "us", "Mbit/s"], "us": ["ms", "MB/s", "ns"]}.get(unit, [])

    def impossible(self, ctx, key, value, values):
        size, column = key
        if ctx["unit"] == "us" and column == 0:
            return _too_fast(ctx, size, value)
        if ctx["unit"] != "MB/s" or column != 0:
            return False
        ceiling = ctx["rate"] * ctx["directions"] * ctx["links"] * physical.MARGIN
        rates = {s: v for (s, c), v in values.items() if c == 0}
        return value * physical.GBPS_PER_MBS > ceiling or _collapses(rates)


# ------------------------------------------------------------------------------------ IMB
IMB_PT2PT = ("PingPong", "PingPing", "Uniband", "Biband", "Sendrecv")


class Imb(Plugin):
    name = "imb"

    def files(self):
        return recordings("imb-*.txt") + recordings("seed001-imb*.txt")

    def context(self, text):
        r = imb.parse_imb(text)
        bench = r.benchmarks[0].name
        sizes = [row.bytes for row in r.benchmarks[0].rows]
        blocks = [b for b in r.benchmarks if b.name == bench]
        directions = imb.DIRECTIONS.get(bench.lower(), 1)
        rates = [row.mbytes_per_sec / (directions * self._links(b)) for b in blocks
                 for row in b.rows if row.mbytes_per_sec is not None]
        if rates:
            rate = _rung(max(rates) * physical.GBPS_PER_MBS)
        else:  # a collective: times only, bounded by what its bytes take through a link
            rate = _time_rung(bench.lower(), [(row.bytes, row.t_avg) for b in blocks
                                              for row in b.rows])
        return {"benchmark": bench, "lo": sizes[1], "hi": sizes[-1], "rate": rate,
                "directions": directions, "links": {b.nprocs: self._links(b) for b in blocks},
                "times": not rates}

    @staticmethod
    def _links(block) -> int:
        return imb.pairs(block.name, block.nprocs)

    def read(self, text, ctx):
        try:
            r = imb.parse_imb(text)
        except ParseError as err:
            return Refused(str(err))
        problems = imb.missing(r, ctx["benchmark"], ctx["hi"], ctx["lo"])
        problems += imb.above_line_rate(r, ctx["benchmark"], ctx["rate"])
        problems += imb.too_fast(r, ctx["benchmark"], ctx["rate"])
        if problems:
            return Refused("; ".join(problems))
        values = {}
        for b in r.benchmarks:
            for row in b.rows:
                figures = [row.t_usec, row.mbytes_per_sec, row.msg_per_sec, row.t_min,
                           row.t_max, row.t_avg]
                for i, v in enumerate(x for x in figures if x is not None):
                    values[(b.name, b.nprocs, row.bytes, i)] = v
        return Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        tables, i = [], 0
        while i < len(lines):
            m = re.match(r"#\s*Benchmarking\s+(\S+)", lines[i].strip())
            if not m:
                i += 1
                continue
            title, nprocs = i, 0
            header = None
            rows = []
            i += 1
            while i < len(lines) and not re.match(r"#\s*Benchmarking", lines[i].strip()) \
                    and "MPI_Finalize" not in lines[i]:
                if (n := re.search(r"#processes\s*=\s*(\d+)", lines[i])) and not rows:
                    nprocs = int(n.group(1))
                elif "#bytes" in lines[i]:
                    header = i
                elif header is not None and re.match(r"^\s*\d+(\s+[\d.]+)+\s*$", lines[i]):
                    spans = _spans(lines[i])
                    size = int(lines[i].split()[0])
                    # bytes and repetitions are the row's key, the rest its figures
                    rows.append(Row(i, tuple(Figure((m.group(1), nprocs, size, k), a, b)
                                             for k, (a, b) in enumerate(spans[2:]))))
                i += 1
            unit = None
            if header is not None:
                u = re.search(r"t\[usec\]|Mbytes/sec", lines[header])
                unit = (header, u.start(), u.end()) if u else None
            tables.append(Table(first=title, rows=tuple(rows), title=title, unit=unit))
        return tables

    def siblings(self, ctx):
        return [f"# Benchmarking {b} " for b in IMB_PT2PT if b != ctx["benchmark"]]

    def other_units(self, unit):
        return {"t[usec]": ["t[msec]", "t[nsec]"], "Mbytes/sec": ["Gbytes/sec", "Mbits/sec"]
                }.get(unit, [])

    def impossible(self, ctx, key, value, values):
        name, nprocs, size, column = key
        if ctx["times"]:  # t_min, t_max, t_avg: min <= avg <= max, t_avg within the links
            row = {c: v for (n, p, s, c), v in values.items() if p == nprocs and s == size}
            return not row[0] <= row[2] <= row[1] or (column == 2 and _too_fast(
                {**ctx, "benchmark": name}, size, value))
        rate_col = 1 if ctx["benchmark"].lower() in ("pingpong", "pingping") else 0
        if column != rate_col:
            return False
        rates = {s: v for (n, p, s, c), v in values.items() if p == nprocs and c == rate_col}
        ceiling = ctx["rate"] * ctx["directions"] * ctx["links"][nprocs] * physical.MARGIN
        return value * physical.GBPS_PER_MBS > ceiling or _collapses(rates)


# ------------------------------------------------------------------------------- perftest
PERFTEST_CUT = {"ib_write_bw-roce-qp8-gbits-truncated.txt", "ib_write_bw-roce-cx6dx-gbits-q1.txt"}
PERFTEST_TESTS = ("RDMA_Write BW", "RDMA_Read BW", "Send BW")


class Perftest(Plugin):
    name = "perftest"

    def files(self):
        return [p for p in recordings("ib_*_bw-*.txt") if p.name not in PERFTEST_CUT]

    def context(self, text):
        r = perftest.parse_perftest(text)
        top = max((r.to_gbps(row.bw_avg) for row in r.rows), default=0)
        return {"test": r.test, "units": r.units, "role": r.role, "rate": _rung(top)}

    def read(self, text, ctx):
        try:
            r = perftest.parse_perftest(text)
        except ParseError as err:
            return Refused(str(err))
        problems = perftest.missing(r, test=ctx["test"], units=ctx["units"])
        problems += perftest.above_line_rate(r, ctx["rate"])
        if r.role != ctx["role"]:
            problems.append(f"the {r.role}'s output, not the {ctx['role']}'s")
        if problems:
            return Refused("; ".join(problems))
        return Accepted({(row.bytes, k): v for row in r.rows
                         for k, v in enumerate((row.bw_peak, row.bw_avg, row.msg_rate))})

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        banner = next(i for i, x in enumerate(lines) if re.search(r"(BW|Latency) Test\s*$", x))
        header = next(i for i, x in enumerate(lines) if "#bytes" in x)
        rows = [Row(i, tuple(Figure((int(lines[i].split()[0]), k), a, b)
                             for k, (a, b) in enumerate(_spans(lines[i])[2:])))
                for i in range(header + 1, len(lines))
                if re.match(r"^\s*\d+\s+\d+(\s+[\d.]+){3}\s*$", lines[i])]
        u = re.search(r"\[(Gb/sec|MB/sec)\]", lines[header])
        return [Table(first=banner, rows=tuple(rows), title=banner,
                      unit=(header, u.start(1), u.end(1)))]

    def siblings(self, ctx):
        return [f"                    {t} Test" for t in PERFTEST_TESTS if t != ctx["test"]]

    def other_units(self, unit):
        return {"Gb/sec": ["MB/sec", "Mb/sec"], "MB/sec": ["Gb/sec", "GB/sec"]}.get(unit, [])

    def impossible(self, ctx, key, value, values):
        bits = 1e9 if ctx["units"] == "Gb/sec" else 8 * 0x100000
        return key[1] == 1 and value * bits / 1e9 > ctx["rate"] * physical.MARGIN


# ----------------------------------------------------------------------------------- tx/rx
TXRX_LAYOUT = {  # nrx, nlink (tests/parsers/test_completeness.py)
    "seed000-txrx-10pairs-same-node.txt": (10, 10), "seed000-txrx-1pair.txt": (1, 1),
    "seed000-txrx-1rx-2tx.txt": (1, 2), "seed000-txrx-2pairs.txt": (2, 2),
    "txrx-cuda-ompi4.1-h100.txt": (1, 1), "txrx-cuda-increment-ompi4.1-h100.txt": (1, 2),
    "txrx-cuda-many-to-one-reframe-local-h100.txt": (1, 2),
}
#: the SEREN tx/rx notes' demos whose ranks share one node (their tool prints no `link is`)
TXRX_ONE_NODE = {"seed000-txrx-10pairs-same-node.txt", "seed000-txrx-1rx-2tx.txt"}
_TXRX_FIGURE = re.compile(r"(Rank (\d+) (?:receiver from transmitter (\d+), |transmitter ))"
                          r"([a-z ]+) is (\S+)")


class Txrx(Plugin):
    name = "txrx"
    inside_refused = False  # ranks interleave their lines with anything

    def files(self):
        return [p for name in sorted(TXRX_LAYOUT) for p in recordings(name)]

    def context(self, text):
        name = next(n for n in TXRX_LAYOUT if recordings(n)[0].read_text() == text)
        nrx, nlink = TXRX_LAYOUT[name]
        rep = txrx.parse_txrx(text)
        one = name in TXRX_ONE_NODE
        hosts = {(s.receiver_rank, s.transmitter): (
            s.transmitter_host or ("node" if one else f"tx{s.receiver_rank + s.transmitter * nrx}"),
            s.receiver_host or ("node" if one else f"rx{s.receiver_rank}")) for s in rep.streams}
        top = max([s.gbps for s in rep.streams] + [t.gbps for t in rep.transmitters])
        return {"nrx": nrx, "nlink": nlink, "hosts": hosts, "rate": _rung(top)}

    def read(self, text, ctx):
        try:
            rep = txrx.parse_txrx(text)
        except ParseError as err:
            return Refused(str(err))
        problems = txrx.missing(rep, ctx["nrx"], ctx["nlink"])
        problems += txrx.above_line_rate(rep, ctx["nrx"], ctx["rate"], 40_000, ctx["hosts"])
        if problems:
            return Refused("; ".join(problems))
        values = {}
        for s in rep.streams:
            for name in ("elapsed_s", "gbps", "missed", "received", "total", "loss_rate",
                         "corrupt"):
                if getattr(s, name) is not None:
                    values[("rx", s.receiver_rank, s.transmitter, name)] = getattr(s, name)
        for t in rep.transmitters:
            values[("tx", t.rank, "elapsed_s")] = t.elapsed_s
            values[("tx", t.rank, "gbps")] = t.gbps
        return Accepted(values)

    _FIELDS = {"elapsed time": "elapsed_s", "data rate": "gbps", "message missed": "missed",
               "message received": "received", "message total": "total",
               "message loss rate": "loss_rate", "message corrupt": "corrupt"}

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        rows, unit = [], None
        for i, line in enumerate(lines):
            m = _TXRX_FIGURE.search(line)
            if m is None or m.group(4) not in self._FIELDS:
                continue
            field = self._FIELDS[m.group(4)]
            key = (("rx", int(m.group(2)), int(m.group(3)), field) if m.group(3) is not None
                   else ("tx", int(m.group(2)), field))
            rows.append(Row(i, (Figure(key, m.start(5), m.end(5)),)))
            if unit is None and field == "gbps" and (u := re.search(r" (Gbps)\s*$", line)):
                unit = (i, u.start(1), u.end(1))
        return [Table(first=rows[0].line, rows=tuple(rows), unit=unit)] if rows else []

    def other_units(self, unit):
        return ["Mbps", "GB/s"] if unit == "Gbps" else []

    def impossible(self, ctx, key, value, values):
        if key[-1] != "gbps":
            return False
        nrx = ctx["nrx"]
        stream = (key[1], key[2]) if key[0] == "rx" else (key[1] % nrx, key[1] // nrx)
        tx_host, rx_host = ctx["hosts"][stream]
        ceiling = (40_000 if tx_host == rx_host else ctx["rate"]) * physical.MARGIN
        into: Counter = Counter()
        for (kind, *who), v in values.items():
            if kind == "rx" and who[-1] == "gbps":
                ends = ctx["hosts"][(who[0], who[1])]
                if ends[0] != ends[1]:
                    into[ends[1]] += v
        line = ctx["rate"] * physical.MARGIN
        return value > ceiling or any(total > line for total in into.values())


# ---------------------------------------------------------------------- ibv_devinfo, rdma
class IbvDevinfo(Plugin):
    name = "ibv_devinfo"
    inside_refused = False  # MOFED prints lines of its own inside a block

    def files(self):
        return recordings("ibv_devinfo*.txt")

    def read(self, text, ctx):
        try:
            hcas = ibv_devinfo.parse_ibv_devinfo(text)
        except ParseError as err:
            return Refused(str(err))
        if problems := ibv_devinfo.missing(hcas, text):
            return Refused("; ".join(problems))
        values = {}
        for h in hcas:
            for p in h.ports:
                for name in ("state", "phys_state", "link_layer", "active_mtu", "max_mtu",
                             "active_speed_gbps", "active_width", "lid", "sm_lid"):
                    if getattr(p, name) is not None:
                        values[(h.name, p.port, name)] = getattr(p, name)
                for g in p.gids:
                    values[(h.name, p.port, "gid", g.index)] = g.gid
        return Accepted(values)

    def cut_ok(self, original, cut):
        """``ibv_devinfo`` prints no GID count: a cut at a line end inside the last port's GID
        list loses those GIDs, everything else reads exactly."""
        lost = [k for k in original if k not in cut]
        return all(original.get(k, "absent") == v for k, v in cut.items()) and all(
            k[2] == "gid" for k in lost)

    _KEYS = {"active_mtu": "active_mtu", "max_mtu": "max_mtu", "port_lid": "lid",
             "sm_lid": "sm_lid", "active_speed": "active_speed_gbps"}
    _ESSENTIAL = ("state", "active_mtu", "link_layer", "phys_state")

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        tables, hca, port, rows, first, unit = [], None, None, [], None, None

        def close():
            if port is not None:
                tables.append(Table(first=first, rows=tuple(rows), unit=unit))

        for i, line in enumerate(lines):
            if m := re.match(r"^\s*hca_id:\s*(\S+)", line):
                close()
                hca, port, rows, unit = m.group(1), None, [], None
            elif (m := re.match(r"^\s*port:\s*(\d+)\s*$", line)) and hca is not None:
                close()
                port, first, rows, unit = int(m.group(1)), i, [], None
            elif port is not None and (m := re.match(r"^\s*([a-z_]+):\s*(\S.*?)\s*$", line)):
                key = m.group(1)
                figs = ()
                if key in self._KEYS:
                    a, b = _spans(line, m.start(2))[0]
                    figs = (Figure((hca, port, self._KEYS[key]), a, b),)
                    if key == "active_speed" and (u := re.search(r"Gbps", line)):
                        unit = (i, u.start(), u.end())
                rows.append(Row(i, figs, essential=key in self._ESSENTIAL,
                                keys=((hca, port, self._KEYS.get(key, key)),)))
        close()
        return tables

    def other_units(self, unit):
        return ["Mbps", "GB/s"] if unit == "Gbps" else []


class RdmaLink(Plugin):
    name = "rdma_link"
    inside_refused = False  # one line per link: nothing is inside

    def files(self):
        return recordings("rdma-link-*.txt")

    def read(self, text, ctx):
        try:
            links = rdma_link.parse_rdma_link(text)
        except ParseError as err:
            return Refused(str(err))
        if problems := rdma_link.missing(links, text):
            return Refused("; ".join(problems))
        return Accepted({(x.device, x.port, name): getattr(x, name) for x in links
                         for name in ("state", "physical_state", "netdev", "lid", "sm_lid",
                                      "lmc", "subnet_prefix")})

    def cut_ok(self, original, cut):
        """``rdma link`` prints no count: a cut at a line end loses whole links, the others
        read exactly."""
        kept = {k[:2] for k in cut}
        return all(original.get(k, "absent") == v for k, v in cut.items()) and all(
            k in cut for k in original if k[:2] in kept)

    def layout(self, text):
        rows = []
        for i, line in enumerate(text.splitlines(keepends=True)):
            m = re.match(r"^\s*(?:link\s+|\d+/\d+:\s*)([^\s/]+)/(\d+)", line)
            if not m:
                continue
            dev, port = m.group(1), int(m.group(2))
            figs = tuple(Figure((dev, port, key.group(1)), key.start(2), key.end(2))
                         for key in re.finditer(r"\b(lid|sm_lid|lmc) (\d+)", line))
            keys = tuple((dev, port, name) for name in ("state", "physical_state", "netdev",
                                                        "lid", "sm_lid", "lmc", "subnet_prefix"))
            rows.append(Row(i, figs, essential=False, keys=keys))
        return [Table(first=rows[0].line, rows=tuple(rows))] if rows else []


# ----------------------------------------------------------------------------------- launch
class Launch(Plugin):
    """Launcher and MPI failure lines in any recording: wrapper lines add none, and a cut
    never reads a failure with another rank, node or status (a failure line cut mid-line is
    reported as cut)."""

    name = "launch"
    mid_line_refused = False  # a cut output is not a launch failure (its parser says cut)

    def files(self):
        return sorted(recordings("*.txt")) + sorted(WRAPPED.glob("*.txt"))

    def read(self, text, ctx):
        failures = launch.launch_failures(text)
        if any(f.kind == "cut" for f in failures):
            return Refused("a failure line cut short")
        seen: Counter = Counter()
        values = {}
        for f in failures:
            key = (f.kind, f.rank, f.node, f.signal, f.code, f.detail)
            values[(key, seen[key])] = True
            seen[key] += 1
        for what, status in launch.exit_statuses(text).items():
            values[("status", what)] = status
        return Accepted(values)

    def cut_ok(self, original, cut):
        """Every failure read from a cut agrees with one of the whole text's (fields it read
        equal; a banner cut before its errorcode reads none), every status is the whole's."""
        whole = [k[0] for k in original if k[0] != "status"]
        for key, value in cut.items():
            if key[0] == "status":
                if original.get(key) != value:
                    return False
            elif not any(_agrees(key[0], w) for w in whole):
                return False
        return True


def _agrees(part: tuple, whole: tuple) -> bool:
    return part[0] == whole[0] and all(a is None or a == b for a, b in zip(part[1:5], whole[1:5],
                                                                           strict=True))


# ------------------------------------------------------------------------------- the tests
PLUGINS = [Osu(), Imb(), Perftest(), Txrx(), IbvDevinfo(), RdmaLink(), Launch()]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_every_recording_is_read_whole(plugin):
    assert_read_whole(plugin)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_hostile_variants(plugin):
    run_variants(plugin)

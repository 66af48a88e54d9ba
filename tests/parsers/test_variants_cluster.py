"""Hostile variants (tests/variants.py) of every recorded cluster description: Slurm's topology
(``scontrol show topology``, ``topology.conf``) and our own topology file, ``sinfo``, the LLDP
agents' neighbours (``lldpctl`` plain and keyvalue, ``lldptool``) and ``ip addr``. Each is
refused, or read exactly where harmless.

These formats carry no count: a line deleted is read exactly less what it said (a switch, a
block, a field), and a cut at a line end loses what follows it, the rest read exactly (a cut
mid-line is refused). A line printed again with other figures is refused, never read first-
or last-wins.
"""

from __future__ import annotations

import re

import pytest
from recordings import DATA, recordings
from variants import Accepted, Figure, Plugin, Refused, Row, Table, assert_read_whole, run_variants

from fabrictest.parsers import ParseError, ip_addr, lldp, sinfo
from fabrictest.parsers.hostlists import expand
from fabrictest.parsers.topology import parse_any_topology

TOPOLOGY = DATA / "topology"


def _subset(original: dict, cut: dict) -> bool:
    """What a cut at a line end reads is the whole text's."""
    return all(k in original and original[k] == v for k, v in cut.items())


# ------------------------------------------------------------------------------- topology
_SLURM_FIGURES = re.compile(r"\b(Level|LinkSpeed)=(\d+)", re.I)
_SWITCH_NAME = re.compile(r"^\s*(?:SwitchName|BlockName|AggregatedBlock)=(\S+)", re.I)
_OWN_LINE = re.compile(r"^([\w.+-]+)\s*:")


class Topology(Plugin):
    name = "topology"
    outside_read = False  # a file, or scontrol's whole stdout: another line is refused

    def files(self):
        return sorted(TOPOLOGY.glob("*.txt")) + sorted(TOPOLOGY.glob("*/*.topology"))

    def read(self, text, ctx):
        try:
            topo = parse_any_topology(text)
        except ParseError as err:
            return Refused(str(err))
        own = topo.source == "file"
        values = {}
        for s in topo.switches.values():
            # what its own line said (a switch only named by another line has none)
            lists = {"parents": s.parents, "globals": s.globals} if own else {
                "children": s.children}
            if s.level is None and s.link_speed is None and not s.nodes and not any(
                    lists.values()):
                continue
            values[(s.name, "nodes")] = tuple(s.nodes)
            values.update({(s.name, k): tuple(v) for k, v in lists.items() if v})
            if s.level is not None:
                values[(s.name, "level")] = s.level
            if s.link_speed is not None:
                values[(s.name, "speed")] = s.link_speed
        values.update({("block_sizes", i): n for i, n in enumerate(topo.block_sizes)})
        if topo.routing:
            values[("routing",)] = topo.routing
        return Accepted(values)

    def layout(self, text):
        rows = []
        for i, raw in enumerate(text.splitlines(keepends=True)):
            line = raw.split("#", 1)[0]
            if not line.strip():
                continue
            if m := _SWITCH_NAME.match(line):
                name = m.group(1)
                figs = tuple(Figure((name, "level" if f.group(1).lower() == "level" else "speed"),
                                    f.start(2), f.end(2)) for f in _SLURM_FIGURES.finditer(line))
                keys = tuple((name, k) for k in ("nodes", "children", "level", "speed"))
            elif re.match(r"^\s*BlockSizes=", line, re.I):
                spans = [x.span() for x in re.finditer(r"\d+", line)]
                figs = tuple(Figure(("block_sizes", k), a, b) for k, (a, b) in enumerate(spans))
                keys = tuple(("block_sizes", k) for k in range(len(spans)))
            elif m := _OWN_LINE.match(line):
                name = m.group(1)
                figs = tuple(Figure((name, "speed"), f.start(1), f.end(1))
                             for f in re.finditer(r"\bspeed=(\d+)", line))
                keys = tuple((name, k) for k in ("nodes", "parents", "globals", "speed"))
            else:  # routing=, shape=
                figs, keys = (), (("routing",),) if "routing" in line else ()
            # no line is essential: a topology has no count, and one without a switch (or
            # block) is another topology; a switch only named by another line has no values
            rows.append(Row(i, figs, essential=False, keys=keys))
        return [Table(first=rows[0].line, rows=tuple(rows))]

    def impossible(self, ctx, key, value, values):
        if key[-1] == "speed" or key[0] == "block_sizes":
            return value < 1  # a relative rate, a block size: at least 1
        return key[-1] == "level" and _levels_contradict(values)

    def cut_ok(self, original, cut):
        return _subset(original, cut)


def _levels_contradict(values: dict) -> bool:
    """Slurm's levels, the oracle written again: a leaf at 0, a switch one above the highest
    of its switches (above each listed one, when some are not listed)."""
    level = {k[0]: v for k, v in values.items() if len(k) == 2 and k[1] == "level"}
    for name, at in level.items():
        children = values.get((name, "children"), ())
        known = [level[c] for c in children if c in level]
        if not children and at != 0:
            return True
        if known and (at <= max(known) or len(known) == len(children) and at != max(known) + 1):
            return True
    return False


# ---------------------------------------------------------------------------------- sinfo
class Sinfo(Plugin):
    name = "sinfo"
    outside_read = False  # sinfo's whole stdout: a line after its rows is refused

    def files(self):
        return recordings("sinfo-*.txt")

    def read(self, text, ctx):
        try:
            r = sinfo.parse_sinfo(text)
        except ParseError as err:
            return Refused(str(err))
        values = {("timestamp",): r.timestamp, ("format",): r.format}
        for row in r.rows:
            for column, cell in row.fields.items():
                try:
                    cell = float(cell)
                except ValueError:
                    pass
                values[(row.partition, row.nodelist, column)] = cell
        return Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        header = next(i for i, x in enumerate(lines) if x.split()[:1] in (["NODELIST"],
                                                                        ["PARTITION"]))
        columns = lines[header].split()
        rows = []
        for i in range(header + 1, len(lines)):
            words = list(re.finditer(r"\S+", lines[i]))
            if not words:
                continue
            cells = dict(zip(columns, (w.group() for w in words), strict=False))
            key = (cells.get("PARTITION", "").rstrip("*") or None, cells["NODELIST"])
            figs = tuple(Figure((*key, c), w.start(), w.end())
                         for c, w in zip(columns[:-1], words, strict=False)
                         if re.fullmatch(r"\d+(\.\d+)?", w.group()))
            rows.append(Row(i, figs))
        return [Table(first=header, rows=tuple(rows))]

    def impossible(self, ctx, key, value, values):
        *_, column = key
        if column != "NODES":
            return False
        return value != len(expand(key[1]))  # the nodes its node list names


# ----------------------------------------------------------------------------------- LLDP
def _neighbours(report: lldp.LldpReport) -> dict:
    values = {}
    for iface, found in report.neighbors.items():
        for k, n in enumerate(found):
            for name in ("chassis_id", "chassis_id_type", "sysname", "port_id",
                         "port_id_type", "port_descr", "ttl"):
                if getattr(n, name) is not None:
                    values[(iface, k, name)] = getattr(n, name)
    return values


_KV_LINE = re.compile(r"^lldp\.([^.=\s]+)\.([^=\s]+)=")
_LLDPCTL_KEYS = {"ChassisID": ("chassis_id", "chassis_id_type"), "SysName": ("sysname",),
                 "PortID": ("port_id", "port_id_type"), "PortDescr": ("port_descr",),
                 "TTL": ("ttl",), "chassis.name": ("sysname",), "port.descr": ("port_descr",),
                 "port.ttl": ("ttl",)}


class Lldpctl(Plugin):
    name = "lldpctl"
    # plain: only indented `Key: value` lines inside a block are read; keyvalue: only
    # `lldp.IF.KEY=VALUE` lines (a value's continuation lines have no key): a line of a job
    # script changes no field
    inside_refused = False

    def files(self):
        return recordings("lldpctl-*.txt")

    def read(self, text, ctx):
        try:
            report = lldp.parse_lldpctl(text)
        except ParseError as err:
            return Refused(str(err))
        if problems := lldp.missing(report):
            return Refused("; ".join(problems))
        return Accepted(_neighbours(report))

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        keyvalue = any(_KV_LINE.match(x.strip()) for x in lines)
        tables: list[tuple[int, list[Row]]] = []
        count: dict[str, int] = {}  # neighbours so far on each interface
        current: dict[str, tuple[int, set, list[Row]]] = {}  # interface -> (k, keys, rows)
        iface = None
        for i, line in enumerate(lines):
            if keyvalue:  # as the parser: a block per interface, again at `via` or `rid`
                if not (m := _KV_LINE.match(line.strip())):
                    continue
                iface, key, value_at = m.group(1), m.group(2), line.index("=") + 1
                if iface not in current or key in ("via", "rid") and key in current[iface][1]:
                    count[iface] = count.get(iface, -1) + 1
                    current[iface] = (count[iface], set(), [])
                    tables.append((i, current[iface][2]))
                current[iface][1].add(key)
                side, _, subtype = key.partition(".")
                names = _LLDPCTL_KEYS.get(key) or (
                    (f"{side}_id", f"{side}_id_type") if side in ("chassis", "port") and
                    subtype in ("mac", "local", "ifname", "ip", "ifalias") else ())
            elif m := re.match(r"^Interface:\s+([^,\s]+)", line):
                iface = m.group(1)
                count[iface] = count.get(iface, -1) + 1
                current[iface] = (count[iface], set(), [])
                tables.append((i, current[iface][2]))
                continue
            elif iface and (m := re.match(r"^\s+([A-Za-z][A-Za-z ]*?):\s*(\S.*?)\s*$", line)):
                names, value_at = _LLDPCTL_KEYS.get(m.group(1), ()), m.start(2)
            else:
                continue
            k = current[iface][0]
            figs = ()
            if "ttl" in names and (n := re.compile(r"\d+").search(line, value_at)):
                figs = (Figure((iface, k, "ttl"), n.start(), n.end()),)
            current[iface][2].append(Row(i, figs, essential=False,
                                         keys=tuple((iface, k, n) for n in names)))
        return [Table(first=first, rows=tuple(rows)) for first, rows in tables if rows]

    def impossible(self, ctx, key, value, values):
        return value > lldp.MAX_TTL

    def cut_ok(self, original, cut):
        return _subset(original, cut)  # keyvalue has no closing line


class Lldptool(Plugin):
    name = "lldptool"

    def files(self):
        return recordings("lldptool-*.txt")

    def context(self, text):
        return {"nic": "hsn0"}

    def read(self, text, ctx):
        try:
            report = lldp.parse_lldptool(text, ctx["nic"])
        except ParseError as err:
            return Refused(str(err))
        if problems := lldp.missing(report):
            return Refused("; ".join(problems))
        return Accepted(_neighbours(report))

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        rows = []
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            figs = ()
            if i and lines[i - 1].strip() == "Time to Live TLV":
                m = re.search(r"\d+", line)
                figs = (Figure(("hsn0", 0, "ttl"), m.start(), m.end()),)
            # every TLV read is one title and one value line: without either it is refused
            rows.append(Row(i, figs))
        return [Table(first=0, rows=tuple(rows))]

    def impossible(self, ctx, key, value, values):
        return value > lldp.MAX_TTL


# -------------------------------------------------------------------------------- ip addr
class IpAddr(Plugin):
    name = "ip_addr"
    # only the head, link and inet lines are read (`altname`, `valid_lft` lines are not):
    # another line changes no field
    inside_refused = False

    def files(self):
        return recordings("ip-*.txt")

    def read(self, text, ctx):
        try:
            found = ip_addr.parse_ip_addr(text)
        except ParseError as err:
            return Refused(str(err))
        values = {}
        for name, iface in found.items():
            for f in ("mac", "permaddr", "state", "mtu"):
                if getattr(iface, f) is not None:
                    values[(name, f)] = getattr(iface, f)
            for a in iface.addresses:
                values[(name, "prefix", a.address)] = a.prefixlen
                values[(name, "address", a.address)] = (a.family, a.scope)
        return Accepted(values)

    def layout(self, text):
        tables, rows, first, name = [], [], None, None
        for i, raw in enumerate(text.splitlines(keepends=True)):
            line = raw.strip()
            if m := re.match(r"^\d+:\s+([^:@\s]+)", line):
                if rows:
                    tables.append(Table(first=first, rows=tuple(rows)))
                name, first = m.group(1), i
                mtu = re.search(r"\bmtu (\d+)", raw)
                rows = [Row(i, (Figure((name, "mtu"), mtu.start(1), mtu.end(1)),),
                            keys=((name, "mtu"), (name, "state")))]
            elif name and line.startswith("link/"):
                rows.append(Row(i, essential=False, keys=((name, "mac"), (name, "permaddr"))))
            elif name and (m := re.match(r"^\s*(inet6?) ([^\s/]+)/(\d+)", raw)):
                keys = ((name, "prefix", m.group(2)), (name, "address", m.group(2)))
                # an IPv4 address copied at another prefix length is a second address of
                # it, which Linux allows: only an IPv6 one's prefix is a figure to copy
                figs = (Figure(keys[0], m.start(3), m.end(3)),) if m.group(1) == "inet6" else ()
                rows.append(Row(i, figs, essential=False, keys=keys))
        if rows:
            tables.append(Table(first=first, rows=tuple(rows)))
        return tables

    def impossible(self, ctx, key, value, values):
        if key[1] == "prefix":
            return value > (32 if values[(key[0], "address", key[2])][0] == "inet" else 128)
        return False

    def cut_ok(self, original, cut):
        return _subset(original, cut)


# ------------------------------------------------------------------------------ the tests
PLUGINS = [Topology(), Sinfo(), Lldpctl(), Lldptool(), IpAddr()]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_every_cluster_recording_is_read_whole(plugin):
    assert_read_whole(plugin)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_hostile_cluster_variants(plugin):
    run_variants(plugin)

"""Hostile variants (tests/variants.py) of every recorded counter output: ``ethtool -S``,
``perfquery``, ``cxi_stat``, the sysfs counter files and ``/proc/net/snmp``
(tests/data/real-outputs, tests/data/real-outputs-local/sysfs-veth-netns). Each is refused, or
read exactly where harmless.

"Refused" here is what a snapshot does with it: the reader raises ParseError, or names the
output (perfquery, cxi_stat) or the counter (ethtool, sysfs, snmp) unreadable, so that no value
of it is judged. A counter listing has no title and no unit line: its variants are a listing or
a counter printed twice with other values, a value x 10^-3, 10^3 or 10^6 (impossible, so
refused, past the counter's width), a line deleted (read exactly less that counter: the tools
print no count), job-script lines around and inside it, and a cut anywhere (mid-line always
refused: ``rx_discards_phy: 58591428329`` cut is not 58591; at a line end the counters after
the cut are absent, the others read exactly).
"""

from __future__ import annotations

import re

import pytest
from recordings import DATA, recordings
from variants import Accepted, Figure, Plugin, Refused, Row, Table, assert_read_whole, run_variants

from fabrictest.counters.cxi import _RATE, cxi_missing, parse_cxi_stat
from fabrictest.counters.ethtool import parse_ethtool_stats
from fabrictest.counters.kinds import IB_PORT_COUNTERS_BITS
from fabrictest.counters.perfquery import (
    NAMES,
    OLD_OFED_NAMES,
    SELECTORS,
    parse_perfquery,
    perfquery_missing,
)
from fabrictest.counters.sysfs import parse_counter_value, parse_snmp
from fabrictest.counters.text import MAX_VALUE
from fabrictest.parsers import ParseError

VETH = DATA / "real-outputs-local" / "sysfs-veth-netns"
#: recordings whose copy lost the final newline the tool printed (tests/counters/test_readers.py)
NO_FINAL_NEWLINE = {"ethtool-S-bnxt_en-10g-per-queue.txt"}


def _subset(original: dict, cut: dict) -> bool:
    """A cut at a line end of a listing without a count: what it reads is the whole's."""
    return all(k in original and original[k] == v for k, v in cut.items())


# -------------------------------------------------------------------------------- ethtool
_ETHTOOL_LINE = re.compile(r"^\s*(?:\[(\d+)\]:\s*)?([^:]+?):\s*(\d+)\s*$")


class Ethtool(Plugin):
    name = "ethtool"
    outside_read = False  # ethtool's whole stdout: a line after the listing is refused

    def files(self):
        return recordings("ethtool-S-*.txt")

    def text(self, path):
        text = path.read_text()
        return text + "\n" if path.name in NO_FINAL_NEWLINE else text

    def read(self, text, ctx):
        try:
            stats = parse_ethtool_stats(text)
        except ParseError as err:
            return Refused(str(err))
        unreadable = [n for n, v in stats.values.items() if v is None]
        if stats.cut is not None or stats.twice or unreadable:
            return Refused(f"cut {stats.cut!r}, twice {stats.twice}, unreadable {unreadable}")
        return Accepted(dict(stats.values))

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        header = next(i for i, x in enumerate(lines) if x.strip() == "NIC statistics:")
        rows = []
        for i in range(header + 1, len(lines)):
            m = _ETHTOOL_LINE.match(lines[i])
            if not m:
                continue
            name = m.group(2).strip() + (f"[{m.group(1)}]" if m.group(1) else "")
            # a counter of 0 copied at half is 0 again: printed twice with one value, which
            # the reader takes (one counter, one value); every other value is a figure
            figs = (Figure(name, m.start(3), m.end(3)),) if int(m.group(3)) else ()
            rows.append(Row(i, figs, essential=False, keys=(name,)))
        return [Table(first=header, rows=tuple(rows))]

    def impossible(self, ctx, key, value, values):
        return value > MAX_VALUE  # wider than any counter (64 bits)

    def cut_ok(self, original, cut):
        return _subset(original, cut)


# ------------------------------------------------------------------------------ perfquery
_PQ_HEADER = re.compile(r"^#?\s*Port (extended )?counters: Lid (\d+) port (\d+)")
_PQ_LINE = re.compile(r"^\s*([A-Za-z0-9]+):\.*(\S*)\s*$")


class Perfquery(Plugin):
    name = "perfquery"
    outside_read = False  # perfquery's whole stdout

    def files(self):
        # perfquery -E (PortRcvErrorDetails) is another attribute, refused whole (test_readers)
        return [p for p in recordings("perfquery-*.txt") if "-E-" not in p.name]

    def read(self, text, ctx):
        try:
            ports = parse_perfquery(text)
        except ParseError as err:
            return Refused(str(err))
        if problems := perfquery_missing(ports):
            return Refused("; ".join(problems))
        return Accepted({(p.lid, p.port, p.extended, n): v for p in ports
                         for n, v in p.counters.items()})

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        ports = {(p.lid, p.port, p.extended): p for p in parse_perfquery(text)}
        tables, rows, first, port = [], [], None, None
        for i, line in enumerate(lines):
            if m := _PQ_HEADER.match(line):
                if port is not None:
                    tables.append(Table(first=first, rows=tuple(rows)))
                port, first, rows = ports[(int(m.group(2)), int(m.group(3)), bool(m.group(1)))], i, []
                continue
            m = _PQ_LINE.match(line)
            if port is None or not m:
                continue
            name = NAMES.get(m.group(1)) or OLD_OFED_NAMES.get(m.group(1)) or m.group(1)
            if m.group(1) in SELECTORS or name not in port.counters:  # selects, or dropped
                rows.append(Row(i, essential=False))
                continue
            key = (port.lid, port.port, port.extended, name)
            rows.append(Row(i, (Figure(key, m.start(2), m.end(2)),),
                            essential=name in port.required(), keys=(key,)))
        if port is not None:
            tables.append(Table(first=first, rows=tuple(rows)))
        return tables

    def impossible(self, ctx, key, value, values):
        _lid, _port, extended, name = key
        bits = 64 if extended else IB_PORT_COUNTERS_BITS.get(name, 64)
        return value > (1 << bits) - 1  # wider than the counter's field

    def cut_ok(self, original, cut):
        return _subset(original, cut)  # a cut before the next port's block loses that port


# ------------------------------------------------------------------------------- cxi_stat
_CXI_FIELD = re.compile(r"^(\s*)([^:]+):\s*(.*?)\s*$")
_CXI_NUMBER = re.compile(r"[0-9][0-9.eE+-]*")
_CXI_KEYS = {"Network device": "netdev", "Link state": "link_state", "Link speed": "link_speed"}


class CxiStat(Plugin):
    name = "cxi_stat"
    # slingshot-diag prints its own lines between one device's block and the next's, and
    # cxi_stat reads only its `key: value` lines: a line without one changes no figure
    inside_refused = False

    def files(self):
        return recordings("cxi_stat*.txt")

    def context(self, text):
        return {"rates": "Rates:" in text}

    def read(self, text, ctx):
        try:
            devices = parse_cxi_stat(text)
        except ParseError as err:
            return Refused(str(err))
        if problems := cxi_missing(devices, rates=ctx["rates"]):
            return Refused("; ".join(problems))
        values = {}
        for d in devices:
            for name in ("netdev", "link_state", "link_speed"):
                if getattr(d, name) is not None:
                    values[(d.device, name)] = getattr(d, name)
            values.update({(d.device, k): v for k, v in d.rates.items()})
        return Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        tables, rows, first, dev, in_rates = [], [], None, None, False
        for i, line in enumerate(lines):
            m = _CXI_FIELD.match(line.rstrip("\n"))
            if m is None:
                continue
            indent, key, value = m.groups()
            if key == "Device" and not indent:
                if dev is not None:
                    tables.append(Table(first=first, rows=tuple(rows)))
                dev, first, rows, in_rates = value, i, [], False
                continue
            if dev is None:
                continue
            if key == "Rates":
                in_rates = True
                rows.append(Row(i, essential=True, keys=()))  # without it no rate is read
                continue
            figs, keys = (), ()
            if key in _CXI_KEYS:
                keys = ((dev, _CXI_KEYS[key]),)
            elif in_rates and _RATE.match(value.replace("%", "")):  # a rate, as read
                n = _CXI_NUMBER.search(line, m.start(3))
                keys = ((dev, key),)
                figs = (Figure((dev, key), n.start(), n.end()),)
            essential = key == "Link state" or key in ("Corrected CW", "Uncorrected CW")
            rows.append(Row(i, figs, essential=essential, keys=keys))
        if dev is not None:
            tables.append(Table(first=first, rows=tuple(rows)))
        return tables

    def impossible(self, ctx, key, value, values):
        return "Pause" in key[1] and value > 100  # a share of the time, in %

    def cut_ok(self, original, cut):
        return _subset(original, cut)  # a cut between two devices' blocks loses the second


# ---------------------------------------------------------------------------------- sysfs
class SysfsFile(Plugin):
    """One counter file: the kernel prints ``"%llu\\n"``, nothing else."""

    name = "sysfs"
    outside_read = False

    def files(self):
        return [VETH / "class/net/eth0/carrier_changes",
                *sorted((VETH / "class/net/eth0/statistics").iterdir())]

    def read(self, text, ctx):
        value = parse_counter_value(text)
        return Refused("not one counter value") if value is None else Accepted({"value": value})

    def layout(self, text):
        m = re.match(r"\d+", text)
        return [Table(first=0, rows=(Row(0, (Figure("value", m.start(), m.end()),)),))]

    def impossible(self, ctx, key, value, values):
        return value > MAX_VALUE


class Snmp(Plugin):
    """``/proc/net/snmp``: a header line and a value line per protocol; the snapshot reads
    ``Tcp: RetransSegs``."""

    name = "snmp"
    outside_read = False
    # a line without `Proto:` is skipped and changes no figure (the kernel prints none)
    inside_refused = False

    def files(self):
        return [VETH / "proc/net/snmp"]

    def context(self, text):
        snmp = parse_snmp(text)
        return {"signed": {(p, n) for p, f in snmp.items() for n, v in f.items() if v is None}}

    def read(self, text, ctx):
        try:
            snmp = parse_snmp(text)
        except ParseError as err:
            return Refused(str(err))
        values = {(p, n): v for p, f in snmp.items() for n, v in f.items()}
        unread = [k for k, v in values.items() if v is None and k not in ctx["signed"]]
        return Refused(f"unreadable {unread}") if unread else Accepted(values)

    def layout(self, text):
        lines = text.splitlines(keepends=True)
        names: dict[str, list[str]] = {}
        rows = []
        for i, line in enumerate(lines):
            proto, sep, rest = line.partition(":")
            if not sep:
                continue
            essential = proto == "Tcp"
            if proto not in names:
                names[proto] = rest.split()
                rows.append(Row(i, essential=essential,
                                keys=tuple((proto, n) for n in names[proto])))
                continue
            spans = [m.span() for m in re.finditer(r"(?<!\S)\d+(?!\S)", line)]
            words = [(m.start(), m.group()) for m in re.finditer(r"\S+", rest)]
            figs = tuple(Figure((proto, n), len(proto) + 1 + a, len(proto) + 1 + a + len(w))
                         for n, (a, w) in zip(names[proto], words, strict=True)
                         if (len(proto) + 1 + a, len(proto) + 1 + a + len(w)) in spans)
            rows.append(Row(i, figs, essential=essential,
                            keys=tuple((proto, n) for n in names[proto])))
        return [Table(first=0, rows=tuple(rows))]

    def impossible(self, ctx, key, value, values):
        return value > MAX_VALUE

    def cut_ok(self, original, cut):
        return _subset(original, cut)  # a cut after the Tcp pair loses the protocols after it


# ------------------------------------------------------------------------------ the tests
PLUGINS = [Ethtool(), Perfquery(), CxiStat(), SysfsFile(), Snmp()]


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_every_counter_recording_is_read_whole(plugin):
    assert_read_whole(plugin)


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_hostile_counter_variants(plugin):
    run_variants(plugin)

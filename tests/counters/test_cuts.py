"""Every counter recording cut anywhere: read exactly (each value the whole output's, or None)
or judged incomplete, never a shorter number or another state. A cut in the middle of a line
(the text does not end with its newline) is always said.

Recordings: every perfquery, ethtool -S and cxi_stat output in tests/data/real-outputs, the
sysfs counter files and /proc/net/snmp recorded on this machine
(tests/data/real-outputs-local/sysfs-veth-netns), and a snapshot of them in our own format.
Small outputs are cut at every character; the long ethtool listings at every line end and at
every character of the header and of every line a snapshot keeps."""

from __future__ import annotations

import pytest
from recordings import DATA, recordings

from fabrictest.counters.cxi import cxi_missing, parse_cxi_stat
from fabrictest.counters.ethtool import parse_ethtool_stats
from fabrictest.counters.gather import gather_counters
from fabrictest.counters.kinds import kind_of
from fabrictest.counters.perfquery import parse_perfquery, perfquery_missing
from fabrictest.counters.snapshot import parse_snapshot
from fabrictest.counters.sysfs import parse_counter_value, parse_snmp
from fabrictest.parsers import ParseError

VETH = DATA / "real-outputs-local" / "sysfs-veth-netns"


def cuts(text: str, every_char=lambda line: True):
    """Proper prefixes of ``text``: at every line end, and at every character of the lines
    ``every_char`` selects."""
    out, offset = [], 0
    for line in text.splitlines(keepends=True):
        if every_char(line):
            out += [text[:offset + i] for i in range(len(line))]
        else:
            out.append(text[:offset])
        offset += len(line)
    return [c for c in out if len(c) < len(text)]


def _mid_line(cut: str) -> bool:
    return bool(cut) and not cut.endswith("\n")


@pytest.mark.parametrize("path", recordings("perfquery-*.txt"), ids=lambda p: p.name)
def test_perfquery_cut_anywhere(path):
    text = path.read_text()
    try:
        whole = {(p.lid, p.port, p.extended): p.counters for p in parse_perfquery(text)}
    except ParseError:
        whole = None  # not PortCounters at all: every cut is refused too
    for cut in cuts(text):
        try:
            ports = parse_perfquery(cut)
        except ParseError:
            continue
        assert whole is not None, cut
        for p in ports:
            for name, value in p.counters.items():
                assert value is None or value == whole[(p.lid, p.port, p.extended)][name], (
                    f"{name} read as {value} from a cut: {cut[-60:]!r}")
        if _mid_line(cut):
            assert perfquery_missing(ports), f"a cut mid-line judged whole: {cut[-60:]!r}"


def _kept_or_header(line: str) -> bool:
    name = line.split(":")[0].strip()
    return kind_of(name) is not None or line.strip() == "NIC statistics:"


@pytest.mark.parametrize("path", recordings("ethtool-S-*.txt"), ids=lambda p: p.name)
def test_ethtool_cut_anywhere(path):
    text = path.read_text()
    whole = parse_ethtool_stats(text).values
    small = len(text) < 2500
    for cut in cuts(text, (lambda line: True) if small else _kept_or_header):
        try:
            stats = parse_ethtool_stats(cut)
        except ParseError:
            continue
        for name, value in stats.values.items():
            assert value is None or value == whole[name], (
                f"{name} read as {value} from a cut: {cut[-60:]!r}")
        if _mid_line(cut):
            assert stats.cut is not None


@pytest.mark.parametrize("path", recordings("cxi_stat*.txt"), ids=lambda p: p.name)
def test_cxi_stat_cut_anywhere(path):
    text = path.read_text()
    whole = {d.device: d.link_up for d in parse_cxi_stat(text)}
    for cut in cuts(text):
        try:
            devices = parse_cxi_stat(cut)
        except ParseError:
            continue
        for d in devices:
            assert d.link_up is None or d.link_up == whole[d.device], cut[-60:]
        if _mid_line(cut):
            assert cxi_missing(devices), f"a cut mid-line judged whole: {cut[-60:]!r}"


@pytest.mark.parametrize("path", sorted(p for p in VETH.rglob("*") if p.is_file()),
                         ids=lambda p: str(p.relative_to(VETH)))
def test_sysfs_and_snmp_files_cut_anywhere(path):
    text = path.read_text()
    if path.name == "snmp":
        whole = parse_snmp(text)["Tcp"]["RetransSegs"]
        for cut in cuts(text):
            try:
                value = parse_snmp(cut)["Tcp"]["RetransSegs"]
            except ParseError:
                continue
            assert value is None or value == whole
        return
    whole = parse_counter_value(text)
    assert whole is not None
    for cut in cuts(text):
        assert parse_counter_value(cut) is None, f"{path.name}: {cut!r} read as a value"


def test_snapshot_cut_anywhere_is_refused():
    text = gather_counters("node03", VETH, VETH / "proc", commands=False).to_json(indent=1)
    assert parse_snapshot(text).node == "node03"
    for n in range(len(text)):  # even without only its last newline
        with pytest.raises(ParseError):
            parse_snapshot(text[:n])


def test_the_issue_s_cuts():
    """A cut ``rx_discards_phy: 58591428329`` is not 58591; a cut ``Link state: u`` is not a
    link that is down; a perfquery listing cut mid-line is not whole."""
    stats = parse_ethtool_stats("NIC statistics:\n     rx_discards_phy: 58591")
    assert stats.values == {"rx_discards_phy": None} and stats.cut is not None
    (dev,) = parse_cxi_stat("Device: cxi0\n    Network device: hsn0\n        Link state: u")
    assert dev.link_up is None and cxi_missing([dev])
    (dev,) = parse_cxi_stat("Device: cxi0\n        Link state: down")  # whole word, no newline
    assert dev.link_up is None
    ports = parse_perfquery("# Port counters: Lid 5 port 1\nPortXmitWait:.......22730")
    assert ports[0].counters["port_xmit_wait"] is None
    assert any("ends mid-line" in m for m in perfquery_missing(ports))

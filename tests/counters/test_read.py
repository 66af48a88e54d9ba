"""Counter parsers on real recorded outputs (tests/data/real-outputs/SOURCES-project.md) and on every
cut of them: a cut output is refused or shows what it lacks; nothing unreadable reads as 0."""

from __future__ import annotations

import pytest
from recordings import DATA, read, recordings

from fabrictest.counters.read import (
    CONGESTION,
    ERROR,
    LINK,
    cxi_missing,
    kind_of,
    parse_counter_files,
    parse_cxi_stat,
    parse_ethtool_stats,
    parse_perfquery,
    parse_snmp,
    perfquery_missing,
)
from fabrictest.counters.snapshot import (
    Counter,
    Snapshot,
    difference,
    parse_snapshot,
)
from fabrictest.parsers import ParseError

PERFQUERY = "perfquery-x-ib-2port-lid1719.txt"
CXI = "cxi_stat-r-cassini-400g.txt"


def _cuts(text: str):
    """``text`` cut at every line end before its last line, and inside its last line."""
    body = text.rstrip("\n")
    ends = [i + 1 for i, ch in enumerate(body) if ch == "\n"]
    return [text[:e] for e in ends] + [body[:-1]]


@pytest.mark.parametrize("path", recordings("perfquery-*.txt") + recordings("cxi_stat-*.txt"),
                         ids=lambda p: p.name)
def test_every_perfquery_and_cxi_recording_is_read(path):
    text = path.read_text()
    if path.name.startswith("cxi_stat"):
        assert cxi_missing(parse_cxi_stat(text), rates=True) == []
    elif "rcverr" in path.name:  # another perfquery attribute: refused, not misread
        with pytest.raises(ParseError):
            parse_perfquery(text)
    else:
        assert perfquery_missing(parse_perfquery(text)) == []


def test_perfquery_two_extended_blocks():
    ports = parse_perfquery(read(PERFQUERY))
    assert [(p.lid, p.port, p.extended) for p in ports] == [(1719, 1, True), (1719, 2, True)]
    assert ports[0].counters["port_xmit_wait"] == 22730501
    assert ports[1].counters["port_xmit_wait"] == 36510964
    assert ports[0].counters["link_downed"] == 0 and ports[0].counters["symbol_error"] == 0
    assert perfquery_missing(ports) == []


def test_perfquery_cut_anywhere_is_refused_or_incomplete():
    text = read(PERFQUERY)
    # the last mandatory counter of the second block: cuts before it lack something
    upto = text.rindex("ExcessiveBufferOverrunErrors")
    for cut in [c for c in _cuts(text) if len(c) <= upto]:
        try:
            ports = parse_perfquery(cut)
        except ParseError:
            continue
        assert len(ports) < 2 or perfquery_missing(ports), cut[-60:]


def test_perfquery_other_attribute_is_not_port_counters():
    with pytest.raises(ParseError, match="no '# Port counters"):
        parse_perfquery(read("perfquery-E-rcverr-details-lid1719.txt"))


@pytest.mark.parametrize("path", recordings("ethtool-S-*.txt"), ids=lambda p: p.name)
def test_ethtool_real_outputs(path):
    stats = parse_ethtool_stats(path.read_text())
    assert len(stats) > 300 and None not in stats.values()


def test_ethtool_bnxt_queues_and_port_counters():
    stats = parse_ethtool_stats(read("ethtool-S-bnxt_en-10g-per-queue.txt"))
    assert stats["rx_discards[3]"] == 0 and stats["rx_ucast_packets[0]"] == 276347403
    assert stats["link_down_events"] == 2 and kind_of("link_down_events") == LINK
    assert stats["rx_pause_frames"] == 0 and kind_of("rx_pause_frames") == CONGESTION
    assert kind_of("rx_fcs_err_frames") == ERROR


def test_ethtool_cut_mid_line_is_unreadable_not_zero():
    text = read("ethtool-S-i40e-25g.txt")
    for cut in _cuts(text)[1:]:
        stats = parse_ethtool_stats(cut)
        last = cut.rstrip("\n").rsplit("\n", 1)[-1]
        if last.rstrip().endswith(":"):  # the value was cut off
            assert list(stats.values())[-1] is None
    with pytest.raises(ParseError):
        parse_ethtool_stats(text.split("\n", 1)[1])  # no 'NIC statistics:' line
    with pytest.raises(ParseError):
        parse_ethtool_stats("")


def test_ethtool_cut_inside_a_value_keeps_the_number_seen():
    # a cut that drops the whole value reads None; ethtool -S has no closing line, so a cut at
    # a line end reads as fewer counters: the snapshot difference names the counters lost
    stats = parse_ethtool_stats("NIC statistics:\n     rx_crc_errors.nic: \n")
    assert stats == {"rx_crc_errors.nic": None}


def test_snmp_local_recording_and_cuts():
    text = (DATA / "real-outputs-local/sysfs-veth-netns/proc/net/snmp").read_text()
    assert parse_snmp(text)["Tcp"]["RetransSegs"] == 0
    tcp_values_end = text.index("\n", text.index("Tcp: 1 "))
    for cut in _cuts(text):
        if len(cut) < tcp_values_end:
            with pytest.raises(ParseError):
                parse_snmp(cut)


def test_counter_files_unreadable_is_none():
    assert parse_counter_files({"symbol_error": "12\n", "link_downed": None,
                                "np_cnp_sent": "N/A", "rx_errors": "-1"}) == {
        "symbol_error": 12, "link_downed": None, "np_cnp_sent": None, "rx_errors": None}


def test_cxi_stat_rates_and_cuts():
    text = read(CXI)
    (dev,) = parse_cxi_stat(text)
    assert (dev.device, dev.netdev, dev.link_state, dev.link_speed) == (
        "cxi0", "hsn0", "up", "CK_400G")
    assert dev.rates["Corrected CW"] == 348 and dev.rates["Uncorrected BER"] == 1.176e-12
    assert "PID granule" not in dev.rates
    assert cxi_missing([dev], rates=True) == []
    upto = text.index("Uncorrected CW")
    for cut in _cuts(text):
        try:
            devices = parse_cxi_stat(cut)
        except ParseError:
            continue
        if len(cut) < upto:
            assert cxi_missing(devices, rates=True), cut[-60:]
    with pytest.raises(ParseError):
        parse_cxi_stat(read(PERFQUERY))


def _snap(node, **values):
    return Snapshot(node, [Counter("netdev", "eth0", "-", k, v) for k, v in values.items()])


def test_snapshot_round_trip_and_difference():
    before = _snap("node03", carrier_changes=14, rx_errors=0, rx_crc_errors=None)
    after = _snap("node03", carrier_changes=18, rx_errors=5, rx_crc_errors=1)
    assert parse_snapshot(before.to_json()) == before
    d = difference(before, after)
    assert [c.line() for c in d.changes] == [
        "node03 eth0 carrier_changes: 14 -> 18 (+4)", "node03 eth0 rx_errors: 0 -> 5 (+5)"]
    assert d.unknown == ["node03 eth0 rx_crc_errors: unreadable before the test"]


def test_difference_names_lost_reset_and_saturated_counters():
    before = Snapshot("n1", [Counter("ib", "mlx5_0", "1", "symbol_error", 65000),
                             Counter("ib", "mlx5_0", "1", "port_rcv_errors", 9),
                             Counter("ib", "mlx5_0", "1", "link_downed", 1)])
    after = Snapshot("n1", [Counter("ib", "mlx5_0", "1", "symbol_error", 65535),
                            Counter("ib", "mlx5_0", "1", "port_rcv_errors", 2)])
    unknown = difference(before, after).unknown
    assert any("symbol_error: saturated at 65535" in u for u in unknown)
    assert any("port_rcv_errors: went backwards (9 -> 2)" in u for u in unknown)
    assert "n1 mlx5_0/1 link_downed: read before the test, not after" in unknown


def test_snapshot_cut_or_foreign_json_is_refused():
    text = _snap("n1", carrier_changes=2).to_json()
    for cut in (text[:n] for n in range(0, len(text) - 1, 7)):
        with pytest.raises(ParseError):
            parse_snapshot(cut)
    with pytest.raises(ParseError, match="not a counters snapshot"):
        parse_snapshot('{"node": "n1"}')
    with pytest.raises(ParseError, match="malformed"):
        parse_snapshot('{"format": "fabrictest-counters/1", "node": "n", "counters": '
                       '[{"source": "x", "device": "d", "port": "-", "name": "n", "value": -3}]}')

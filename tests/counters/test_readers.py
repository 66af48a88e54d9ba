"""The counter readers on real recorded outputs (tests/data/real-outputs/SOURCES-project.md):
perfquery of the older OFED and of rdma-core, with and without -x; ethtool -S of mlx5, bnxt_en,
i40e and ice; cxi_stat of three libcxi versions and one wrapped by slingshot-diag; sysfs
counter files and /proc/net/snmp. Every cut of them: tests/counters/test_cuts.py."""

from __future__ import annotations

import pytest
from recordings import DATA, read, recordings

from fabrictest.counters.cxi import cxi_missing, parse_cxi_stat
from fabrictest.counters.ethtool import parse_ethtool_stats
from fabrictest.counters.kinds import CONGESTION, ERROR, LINK, kind_of, width_of
from fabrictest.counters.perfquery import parse_perfquery, perfquery_missing
from fabrictest.counters.sysfs import parse_counter_files, parse_counter_value, parse_snmp
from fabrictest.parsers import ParseError

PERFQUERY = "perfquery-x-ib-2port-lid1719.txt"
CXI = "cxi_stat-r-cassini-400g.txt"
#: the recordings whose file lost its final newline (a copy, not the tool): the last line reads
#: as cut, which is what a reader must do with a text that ends mid-line
NO_FINAL_NEWLINE = {"ethtool-S-bnxt_en-10g-per-queue.txt"}


@pytest.mark.parametrize("path", recordings("perfquery-*.txt") + recordings("cxi_stat*.txt"),
                         ids=lambda p: p.name)
def test_every_perfquery_and_cxi_recording_is_read_whole(path):
    text = path.read_text()
    if path.name.startswith("cxi_stat"):
        assert cxi_missing(parse_cxi_stat(text), rates="-r-" in path.name) == []
    elif "rcverr" in path.name:  # another perfquery attribute: refused, not misread
        with pytest.raises(ParseError, match="no whole '# Port counters"):
            parse_perfquery(text)
    else:
        assert perfquery_missing(parse_perfquery(text)) == []


def test_perfquery_x_two_extended_blocks_are_64_bit():
    ports = parse_perfquery(read(PERFQUERY))
    assert [(p.lid, p.port, p.extended, p.additional) for p in ports] == [
        (1719, 1, True, True), (1719, 2, True, True)]
    assert ports[0].counters["port_xmit_wait"] == 22730501
    assert ports[1].counters["port_xmit_wait"] == 36510964
    assert ports[0].width("symbol_error") == 64 == ports[0].width("port_xmit_wait")


def test_perfquery_x_without_additional_counters_drops_the_error_fields():
    """CapMask2 0: libibmad prints the error fields of every -x block, the PMA filled them with
    zeros; they are not counters, and reading them as 0 would pass any error."""
    (port,) = parse_perfquery(read("perfquery-x-capmask2-0-lid133.txt"))
    assert (port.cap_mask, port.cap_mask2, port.additional) == (0x5A00, 0, False)
    assert "symbol_error" not in port.counters and "port_xmit_wait" not in port.counters
    assert "symbol_error" in port.dropped and "link_downed" in port.dropped
    assert port.counters["port_xmit_data"] == 37108676853855
    assert perfquery_missing([port]) == []


def test_perfquery_x_with_errors_of_a_real_port():
    (port,) = parse_perfquery(read("perfquery-x-lid2052-linkdowned-discards.txt"))
    assert port.counters["link_downed"] == 1 and port.counters["port_xmit_discards"] == 20046
    assert port.counters["port_rcv_switch_relay_errors"] == 7
    assert port.counters["port_xmit_wait"] == 41864608


@pytest.mark.parametrize("name", ["perfquery-ofed-oldnames-lid936-tacc.txt",
                                  "perfquery-ofed-oldnames-linkrecovers-255-ompi-users-2008.txt"])
def test_old_ofed_names_are_mapped(name):
    (port,) = parse_perfquery(read(name))
    assert not port.extended and port.cap_mask is None
    assert {"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
            "port_rcv_remote_physical_errors", "port_xmit_discards",
            "local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped",
            "port_xmit_data", "port_rcv_packets"} <= set(port.counters)
    assert not any(n[0].isupper() and n != "VL15_dropped" for n in port.counters), port.counters
    assert port.width("link_error_recovery") == 8 and port.width("symbol_error") == 16


def test_old_ofed_listing_at_saturation():
    """LinkRecovers 255: an 8-bit LinkErrorRecoveryCounter at its maximum (a mailing-list
    listing of 2008): the value read is the maximum, which the difference calls saturated."""
    (port,) = parse_perfquery(read("perfquery-ofed-oldnames-linkrecovers-255-ompi-users-2008.txt"))
    assert port.counters["link_error_recovery"] == 255 == (1 << port.width("link_error_recovery")) - 1
    assert port.counters["symbol_error"] == 7836 and port.counters["port_rcv_errors"] == 24058


def test_perfquery_without_xmit_wait_support_drops_it():
    text = ("# Port counters: Lid 5 port 1 (CapMask: 0x0200)\nSymbolErrorCounter:......0\n"
            "PortXmitWait:............0\n")
    (port,) = parse_perfquery(text)
    assert "port_xmit_wait" not in port.counters and port.dropped == ["port_xmit_wait"]


def test_perfquery_field_or_port_printed_twice():
    one = "# Port counters: Lid 5 port 1\nLinkDownedCounter:....0\nLinkDownedCounter:....3\n"
    (port,) = parse_perfquery(one)
    assert port.counters["link_downed"] is None and "printed twice" in " ".join(
        perfquery_missing([port]))
    with pytest.raises(ParseError, match="lid 5 port 1 printed twice"):
        parse_perfquery(one + one)


@pytest.mark.parametrize("path", recordings("ethtool-S-*.txt"), ids=lambda p: p.name)
def test_ethtool_real_outputs(path):
    stats = parse_ethtool_stats(path.read_text())
    assert len(stats.values) > 100 and not stats.twice
    if path.name in NO_FINAL_NEWLINE:
        assert stats.cut is not None and [k for k, v in stats.values.items() if v is None] == [
            stats.cut.split(":")[0].strip()]
    else:
        assert stats.cut is None and None not in stats.values.values()


def test_ethtool_mlx5_of_the_field():
    """The issue's own figure: 58591428329 discards on a ConnectX port, read whole."""
    stats = parse_ethtool_stats(read("ethtool-S-mlx5-kernel5.15-nonzero-bpf-list.txt")).values
    assert stats["rx_discards_phy"] == 58591428329 and kind_of("rx_discards_phy") == ERROR
    assert stats["tx_pause_ctrl_phy"] == 5745055 and kind_of("tx_pause_ctrl_phy") == CONGESTION
    later = parse_ethtool_stats(read("ethtool-S-mlx5-kernel6.5-nonzero-bpf-list.txt")).values
    assert later["rx_discards_phy"] == 441063206498


def test_ethtool_bnxt_queues_and_port_counters():
    stats = parse_ethtool_stats(read("ethtool-S-bnxt_en-10g-per-queue.txt")).values
    assert stats["rx_discards[3]"] == 0 and stats["rx_ucast_packets[0]"] == 276347403
    assert stats["link_down_events"] == 2 and kind_of("link_down_events") == LINK
    assert stats["rx_pause_frames"] == 0 and kind_of("rx_pause_frames") == CONGESTION
    newer = parse_ethtool_stats(read("ethtool-S-bnxt_en-ring-discards-ethq.txt")).values
    assert newer["rx_fcs_err_frames"] == 0 and newer["rx_total_ring_discards"] == 655430134


def test_ethtool_ice_and_i40e_port_counters():
    """Added by following docs/architecture.md's "Adding a counter" literally: ice's CRC
    errors and pause (XOFF) frames, the same names as i40e's."""
    stats = parse_ethtool_stats(read("ethtool-S-ice-ethq.txt")).values
    assert stats["rx_crc_errors.nic"] == 0 and kind_of("rx_crc_errors.nic") == ERROR
    assert stats["link_xoff_rx.nic"] == 0 and kind_of("link_xoff_rx.nic") == CONGESTION
    assert stats["link_xoff_tx.nic"] == 0 and kind_of("link_xoff_tx.nic") == CONGESTION
    assert stats["rx_unicast"] == 12117448 and kind_of("rx_unicast") is None
    i40e = parse_ethtool_stats(read("ethtool-S-i40e-25g.txt")).values
    assert i40e["rx_crc_errors.nic"] == 1


def test_ethtool_name_twice_with_two_values_is_unreadable():
    stats = parse_ethtool_stats("NIC statistics:\n     rx_crc_errors_phy: 0\n"
                                "     rx_crc_errors_phy: 9\n     tx_errors: 0\n     tx_errors: 0\n")
    assert stats.values == {"rx_crc_errors_phy": None, "tx_errors": 0}
    assert stats.twice == ["rx_crc_errors_phy"]


def test_ethtool_refusals():
    text = read("ethtool-S-i40e-25g.txt")
    with pytest.raises(ParseError, match="no whole 'NIC statistics:'"):
        parse_ethtool_stats(text.split("\n", 1)[1])
    with pytest.raises(ParseError, match="empty"):
        parse_ethtool_stats("")
    assert parse_ethtool_stats("NIC statistics:\n     rx_crc_errors.nic: \n").values == {
        "rx_crc_errors.nic": None}


def test_cxi_stat_rates_and_fields():
    (dev,) = parse_cxi_stat(read(CXI))
    assert (dev.device, dev.netdev, dev.link_state, dev.link_up, dev.link_speed) == (
        "cxi0", "hsn0", "up", 1, "CK_400G")
    assert dev.rates["Corrected CW"] == 348 and dev.rates["Uncorrected BER"] == 1.176e-12
    assert "PID granule" not in dev.rates


def test_cxi_stat_two_devices_a_newer_driver_and_a_wrapper():
    two = parse_cxi_stat(read("cxi_stat-2dev-cassini-400g-storage-validation.txt"))
    assert [(d.device, d.netdev, d.link_up) for d in two] == [("cxi0", "hsn0", 1),
                                                              ("cxi1", "hsn1", 1)]
    (newer,) = parse_cxi_stat(read("cxi_stat-sa410s-bs200g-install.txt"))
    assert (newer.link_speed, newer.link_up) == ("bs200G", 1)
    (wrapped,) = parse_cxi_stat(read("cxi_stat-r-slingshot-diag-fru-errors.txt"))
    assert (wrapped.device, wrapped.link_up, wrapped.rates["Corrected CW"]) == ("cxi1", 1, 81.70)


@pytest.mark.parametrize("state, up, problem", [
    ("up", 1, None), ("down", 0, None), ("", None, "neither up nor down"),
    ("error", None, "neither up nor down"), ("Up", None, "neither up nor down")])
def test_cxi_link_states(state, up, problem):
    text = f"Device: cxi0\n    Network device: hsn0\n        Link state: {state}\n"
    (dev,) = parse_cxi_stat(text)
    assert dev.link_up == up
    assert (problem is None) == (cxi_missing([dev]) == [])


def test_cxi_state_or_device_twice():
    (dev,) = parse_cxi_stat("Device: cxi0\n    Link state: down\n    Link state: up\n")
    assert dev.link_up is None and "printed twice" in cxi_missing([dev])[0]
    with pytest.raises(ParseError, match="cxi0 printed twice"):
        parse_cxi_stat("Device: cxi0\n    Link state: up\nDevice: cxi0\n    Link state: up\n")
    with pytest.raises(ParseError):
        parse_cxi_stat(read(PERFQUERY))


def test_snmp_local_recording():
    text = (DATA / "real-outputs-local/sysfs-veth-netns/proc/net/snmp").read_text()
    assert parse_snmp(text)["Tcp"]["RetransSegs"] == 0


def test_counter_files():
    assert parse_counter_files({"symbol_error": "12\n", "link_downed": None,
                                "np_cnp_sent": "N/A (no PMA)\n", "rx_errors": "-1\n",
                                "port_xmit_wait": "4294967295\n", "tx_errors": "0x10\n"}) == {
        "symbol_error": 12, "link_downed": None, "np_cnp_sent": None, "rx_errors": None,
        "port_xmit_wait": 4294967295, "tx_errors": None}
    # cut: a value without its newline is not read, whatever digits it shows
    assert parse_counter_value("58591") is None and parse_counter_value("58591\n") == 58591
    assert parse_counter_value(f"{1 << 64}\n") is None  # wider than any counter


@pytest.mark.parametrize("source, name, bits", [
    ("ib", "symbol_error", 16), ("ib", "link_downed", 8), ("ib", "port_xmit_wait", 32),
    ("ib", "local_link_integrity_errors", 4), ("ib", "port_xmit_data", 32),
    ("hw", "out_of_sequence", 32), ("hw", "np_cnp_sent", 64), ("netdev", "carrier_changes", 31),
    ("netdev", "rx_errors", 64), ("ethtool", "rx_discards_phy", 64), ("tcp", "RetransSegs", 64),
    ("ethtool", "rx_crc_errors.nic", 64), ("ethtool", "link_xoff_rx.nic", 64),
    ("cxi", "link_up", 1)])
def test_widths(source, name, bits):
    assert width_of(source, name) == bits
    if source == "ib":
        assert width_of(source, name, extended=True) == 64


def test_every_counter_recording_names_its_source():
    sources = (DATA / "real-outputs" / "SOURCES-project.md").read_text()
    names = [p.name for p in recordings("perfquery-*.txt", "real-outputs")
             + recordings("ethtool-S-*.txt", "real-outputs")
             + recordings("cxi_stat*.txt", "real-outputs")]
    assert len(names) >= 17
    assert [n for n in names if f"| {n} |" not in sources] == []

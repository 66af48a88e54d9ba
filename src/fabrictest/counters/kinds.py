"""Which counters are kept, what each one means (its *kind*) and how wide it is (pure).

Kinds (:func:`kind_of`): ``link`` (the link went down: fails a test when it grows), ``error``
(judged against a threshold), ``congestion`` (reported as a figure per node), or None (not
kept). Names are sysfs's; perfquery's and the drivers' spellings are mapped onto them by the
readers, and ``ethtool -S`` names are listed per driver family.

Widths (:func:`width_of`): how many bits the counter has where it was read. A counter at its
maximum, ``2**width - 1``, has stopped counting or is about to wrap: its increase is unknown
(``difference`` says so, never ``+0``). InfiniBand counters saturate at their maximum (the
IBTA PortCounters attribute), and the PortCounters widths are narrow (4 to 32 bits); the
64-bit PortCountersExtended values (``perfquery -x`` where the port's PMA has the additional
extended counters) are preferred where present (:mod:`.gather`).
"""

from __future__ import annotations

LINK, ERROR, CONGESTION = "link", "error", "congestion"

#: the places a counter is read from (``Counter.source``)
SOURCES = ("ib", "hw", "netdev", "ethtool", "tcp", "cxi")

#: counter name -> kind; names are sysfs's (perfquery's are mapped onto them)
KINDS: dict[str, str] = {
    # InfiniBand port counters (sysfs counters/, perfquery)
    "link_downed": LINK,
    "symbol_error": ERROR,
    "link_error_recovery": ERROR,
    "port_rcv_errors": ERROR,
    "port_rcv_remote_physical_errors": ERROR,
    "port_xmit_discards": ERROR,
    "local_link_integrity_errors": ERROR,
    "excessive_buffer_overrun_errors": ERROR,
    "VL15_dropped": ERROR,
    "port_xmit_wait": CONGESTION,
    # RDMA hw_counters (mlx5 names)
    "out_of_sequence": ERROR,
    "packet_seq_err": ERROR,
    "local_ack_timeout_err": ERROR,
    "rnr_nak_retry_err": ERROR,
    "req_transport_retries_exceeded": ERROR,
    "np_cnp_sent": CONGESTION,
    "rp_cnp_handled": CONGESTION,
    "np_ecn_marked_roce_packets": CONGESTION,
    # netdev
    "carrier_changes": LINK,
    "rx_errors": ERROR,
    "tx_errors": ERROR,
    "rx_crc_errors": ERROR,
    "rx_frame_errors": ERROR,
    "tx_carrier_errors": ERROR,
    # ethtool -S: mlx5 (*_phy), bnxt, igb/ixgbe and others
    "link_down_events_phy": LINK,
    "link_down_events": LINK,
    "rx_crc_errors_phy": ERROR,
    "rx_symbol_err_phy": ERROR,
    "rx_discards_phy": ERROR,
    "tx_discards_phy": ERROR,
    "rx_fcs_err_frames": ERROR,
    "rx_pause_ctrl_phy": CONGESTION,
    "tx_pause_ctrl_phy": CONGESTION,
    "rx_pause_frames": CONGESTION,
    "tx_pause_frames": CONGESTION,
    # ethtool -S: Intel ice and i40e (port counters end in .nic)
    "rx_crc_errors.nic": ERROR,
    "link_xoff_rx.nic": CONGESTION,
    "link_xoff_tx.nic": CONGESTION,
    # /proc/net/snmp
    "RetransSegs": CONGESTION,
    # cxi_stat's link state as 1 (up) or 0: a state, not a counter (STATES)
    "link_up": LINK,
}

#: readings that are states (they may go down), not counters
STATES = frozenset({"link_up"})

#: the InfiniBand PortCounters attribute's widths in bits (IBTA; sysfs ``counters/`` and
#: ``perfquery`` without ``-x`` read it); PortCountersExtended's are 64 bits. The kernel's sysfs
#: reads the extended attribute for the data and packet counters only (64 bits where the port
#: has it, the widths below otherwise), which the suite does not keep
IB_PORT_COUNTERS_BITS = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
    "port_xmit_data": 32,
    "port_rcv_data": 32,
    "port_xmit_packets": 32,
    "port_rcv_packets": 32,
    "port_xmit_wait": 32,
    "QP1_dropped": 16,
}

#: mlx5's RDMA hw_counters from the firmware's Q counters: 32 bits (the driver reads each as
#: a big-endian u32 of QUERY_Q_COUNTER); its congestion counters are 64-bit pairs
HW_32_BITS = frozenset({"out_of_sequence", "packet_seq_err", "local_ack_timeout_err",
                        "rnr_nak_retry_err", "out_of_buffer", "duplicate_request",
                        "implied_nak_seq_err"})

#: sources whose counters stop at their maximum instead of wrapping (IBTA PortCounters)
SATURATING = frozenset({"ib"})


def kind_of(name: str) -> str | None:
    """``link``, ``error``, ``congestion`` or None (a counter not judged nor reported)."""
    return KINDS.get(name)


def width_of(source: str, name: str, extended: bool = False) -> int:
    """How many bits ``name`` has as read from ``source``: InfiniBand PortCounters widths (64
    when read from PortCountersExtended: ``extended``), mlx5's 32-bit Q counters,
    ``carrier_changes`` 31 (a signed int in the kernel), a state 1; else 64 (netdev
    ``statistics/`` and ``ethtool -S`` are u64, ``/proc/net/snmp`` an unsigned long)."""
    if name in STATES:
        return 1
    if source == "ib":
        return 64 if extended else IB_PORT_COUNTERS_BITS.get(name, 64)
    if source == "hw" and name in HW_32_BITS:
        return 32
    if name == "carrier_changes":
        return 31
    return 64


def maximum(width: int) -> int:
    """The largest value a ``width``-bit counter holds."""
    return (1 << width) - 1


def widest(name: str) -> int:
    """The widest a counter can be read (64 for every counter some source reads extended)."""
    return max(width_of(source, name, extended=True) for source in SOURCES)

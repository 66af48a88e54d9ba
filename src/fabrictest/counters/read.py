"""Link, error and congestion counters of a node, from every place they are kept (pure).

=============================================  =====================================  ==========
where                                          function                               source
=============================================  =====================================  ==========
``/sys/class/infiniband/<d>/ports/<p>/counters``  :func:`parse_counter_files`          ``ib``
``.../ports/<p>/hw_counters``                  :func:`parse_counter_files`            ``hw``
``/sys/class/net/<if>/carrier_changes``,       :func:`parse_counter_files`            ``netdev``
``statistics/*``
``perfquery [-x]``                             :func:`parse_perfquery`                ``ib``
``ethtool -S <if>``                            :func:`parse_ethtool_stats`            ``ethtool``
``/proc/net/snmp``                             :func:`parse_snmp`                     ``tcp``
``cxi_stat [-r]`` (Slingshot)                  :func:`parse_cxi_stat`                 ``cxi``
=============================================  =====================================  ==========

Reading the files and running the commands is :mod:`fabrictest.health.gather`'s job; these
functions take the texts. A file or line that cannot be read gives ``None``, never 0: a
counter nobody could read must not pass as "no errors".

Each counter has a *kind* (:func:`kind_of`): ``link`` (the link went down: judged, fails a test
when it grows), ``error`` (judged against a threshold), ``congestion`` (reported as a figure per
node), or None (not kept). The tables below name them; drivers spell them differently, so
``ethtool -S`` names are listed per driver family (mlx5 ``*_phy``, bnxt, generic).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabrictest.parsers._util import require_text, to_int
from fabrictest.parsers.errors import ParseError

LINK, ERROR, CONGESTION = "link", "error", "congestion"

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
    # /proc/net/snmp
    "RetransSegs": CONGESTION,
    # cxi_stat's link state as 1 (up) or 0: a state, not a counter (STATES)
    "link_up": LINK,
}

#: readings that are states (they may go down), not counters
STATES = frozenset({"link_up"})

#: perfquery's names -> sysfs's
PERFQUERY_NAMES = {
    "SymbolErrorCounter": "symbol_error",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed",
    "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors",
    "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors",
    "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors",
    "VL15Dropped": "VL15_dropped",
    "PortXmitWait": "port_xmit_wait",
    "PortXmitData": "port_xmit_data",
    "PortRcvData": "port_rcv_data",
    "PortXmitPkts": "port_xmit_packets",
    "PortRcvPkts": "port_rcv_packets",
}

#: the largest value of the InfiniBand counters narrower than 64 bits (IBA PortCounters):
#: a counter at its maximum has stopped counting, so its increase is unknown
SATURATES_AT = {
    "symbol_error": 0xFFFF,
    "link_error_recovery": 0xFF,
    "link_downed": 0xFF,
    "port_rcv_errors": 0xFFFF,
    "port_rcv_remote_physical_errors": 0xFFFF,
    "port_xmit_discards": 0xFFFF,
    "local_link_integrity_errors": 0xF,
    "excessive_buffer_overrun_errors": 0xF,
    "VL15_dropped": 0xFFFF,
}


def kind_of(name: str) -> str | None:
    """``link``, ``error``, ``congestion`` or None (a counter not judged nor reported)."""
    return KINDS.get(name)


def parse_counter_value(text: str | None) -> int | None:
    """One sysfs counter file's text -> its value; None when it could not be read or is not a
    non-negative integer (some drivers answer ``N/A`` or EINVAL)."""
    if text is None:
        return None
    value = to_int(text.strip())
    return value if value is not None and value >= 0 else None


def parse_counter_files(files: dict[str, str | None]) -> dict[str, int | None]:
    """A directory of counter files as gathered (file name -> text, None when unreadable) ->
    name -> value (None: unreadable)."""
    return {name: parse_counter_value(text) for name, text in files.items()}


# -- perfquery ---------------------------------------------------------------------------------

_PQ_HEADER = re.compile(
    r"^# Port (?P<ext>extended )?counters: Lid (?P<lid>\d+) port (?P<port>\d+)", re.MULTILINE
)
_PQ_LINE = re.compile(r"^(?P<name>[A-Za-z0-9]+):\.*(?P<value>\S*)\s*$")


@dataclass
class PerfqueryPort:
    """One ``# Port counters`` block: the LID and port, its counters by sysfs name (None: the
    value was not a number)."""

    lid: int
    port: int
    extended: bool
    counters: dict[str, int | None] = field(default_factory=dict)


def parse_perfquery(text: str) -> list[PerfqueryPort]:
    """``perfquery [-x] [lid port]`` -> one record per port block; ParseError without one."""
    text = require_text(text, "perfquery")
    ports: list[PerfqueryPort] = []
    for line in text.split("\n"):
        head = _PQ_HEADER.match(line)
        if head:
            ports.append(PerfqueryPort(int(head["lid"]), int(head["port"]), bool(head["ext"])))
            continue
        m = _PQ_LINE.match(line.strip())
        if m and ports and m["name"] not in ("PortSelect", "CounterSelect", "CounterSelect2"):
            name = PERFQUERY_NAMES.get(m["name"], m["name"])
            ports[-1].counters[name] = parse_counter_value(m["value"]) if m["value"] else None
    if not ports:
        raise ParseError("not perfquery output: no '# Port counters: Lid N port P' line")
    return ports


#: what every PortCounters block has (the error counters the IBA makes mandatory)
PERFQUERY_REQUIRED = (
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
    "port_xmit_discards", "local_link_integrity_errors", "excessive_buffer_overrun_errors",
)


def perfquery_missing(ports: list[PerfqueryPort]) -> list[str]:
    """What keeps a perfquery output from being whole: a block without a mandatory error
    counter, or with a counter whose value is cut off."""
    out = []
    for p in ports:
        where = f"perfquery lid {p.lid} port {p.port}"
        absent = [n for n in PERFQUERY_REQUIRED if n not in p.counters]
        if absent:
            out.append(f"{where}: no {', '.join(absent)}")
        bad = [n for n, v in p.counters.items() if v is None]
        if bad:
            out.append(f"{where}: unreadable {', '.join(bad)}")
    return out


# -- ethtool -S --------------------------------------------------------------------------------

_ETHTOOL_LINE = re.compile(r"^\s*(?:\[(?P<queue>\d+)\]:\s*)?(?P<name>[^:]+?):\s*(?P<value>\S*)\s*$")


def parse_ethtool_stats(text: str) -> dict[str, int | None]:
    """``ethtool -S <if>`` -> name -> value. Per-queue lines (bnxt's ``[3]: rx_discards``) keep
    their queue as ``rx_discards[3]``; a value that is not a number is None."""
    text = require_text(text, "ethtool -S")
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == "NIC statistics:"), None)
    if start is None:
        raise ParseError("not ethtool -S output: no 'NIC statistics:' line")
    out: dict[str, int | None] = {}
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        m = _ETHTOOL_LINE.match(line)
        if m is None:
            raise ParseError(f"ethtool -S: unexpected line {line.strip()[:60]!r}")
        name = m["name"].strip() + (f"[{m['queue']}]" if m["queue"] else "")
        out[name] = parse_counter_value(m["value"]) if m["value"] else None
    return out


# -- /proc/net/snmp ----------------------------------------------------------------------------


def parse_snmp(text: str) -> dict[str, dict[str, int | None]]:
    """``/proc/net/snmp`` -> protocol -> field -> value (header line, then value line, per
    protocol). ParseError without a whole ``Tcp:`` pair."""
    text = require_text(text, "/proc/net/snmp")
    out: dict[str, dict[str, int | None]] = {}
    pending: dict[str, list[str]] = {}
    for line in text.split("\n"):
        proto, sep, rest = line.partition(":")
        if not sep or not proto.isalnum():
            continue
        words = rest.split()
        if proto not in pending:
            pending[proto] = words
            continue
        names = pending.pop(proto)
        if len(words) != len(names):
            continue  # a value line cut short: the protocol stays unread
        out[proto] = {n: to_int(v) for n, v in zip(names, words, strict=True)}
    if "Tcp" not in out:
        raise ParseError("/proc/net/snmp: no whole 'Tcp:' header and value lines")
    return out


# -- cxi_stat ----------------------------------------------------------------------------------


@dataclass
class CxiDevice:
    """One ``Device: cxiN`` block of ``cxi_stat``: its netdev, link state and the ``--rates``
    figures when present (codewords per second, pause percentages)."""

    device: str
    netdev: str | None = None
    link_state: str | None = None
    link_speed: str | None = None
    rates: dict[str, float] = field(default_factory=dict)


_CXI_FIELD = re.compile(r"^\s*(?P<key>[^:]+):\s*(?P<value>.*?)\s*$")
_RATE = re.compile(r"^<?(?P<num>[0-9.eE+-]+)(?:/s|%)?$")


def parse_cxi_stat(text: str) -> list[CxiDevice]:
    """``cxi_stat [-r]`` -> one record per device; ParseError without a ``Device:`` line."""
    text = require_text(text, "cxi_stat")
    devices: list[CxiDevice] = []
    in_rates = False
    for line in text.split("\n"):
        m = _CXI_FIELD.match(line)
        if m is None:
            continue
        key, value = m["key"].strip(), m["value"]
        if key == "Device" and not line.startswith(" "):
            devices.append(CxiDevice(device=value))
            in_rates = False
        elif key == "Rates":
            in_rates = True
        elif not devices:
            continue
        elif key == "Network device":
            devices[-1].netdev = value or None
        elif key == "Link state":
            devices[-1].link_state = value or None
        elif key == "Link speed":
            devices[-1].link_speed = value or None
        elif in_rates and (r := _RATE.match(value.replace("%", ""))):
            try:
                devices[-1].rates[key] = float(r["num"])
            except ValueError:
                pass
    if not devices:
        raise ParseError("not cxi_stat output: no 'Device: cxiN' line")
    return devices


def cxi_missing(devices: list[CxiDevice], rates: bool = False) -> list[str]:
    """A device without its link state (or, with ``rates``, without the ``-r`` figures)."""
    out = [f"cxi_stat {d.device}: no 'Link state' line" for d in devices if d.link_state is None]
    if rates:
        for d in devices:
            lacking = [k for k in ("Corrected CW", "Uncorrected CW") if k not in d.rates]
            if lacking:
                out.append(f"cxi_stat {d.device}: no {', '.join(lacking)} rate")
    return out

"""``perfquery [-x] [lid port]`` (infiniband-diags; pure): the InfiniBand port counters.

One block per port, ``# Port counters: Lid 5 port 1 (CapMask: 0x5A00)`` or ``# Port extended
counters: ... (CapMask: 0x5300 CapMask2: 0x0000002)``, then ``Name:....value`` lines. Names
are mapped onto sysfs's: rdma-core's (``SymbolErrorCounter``, ``PortXmitWait``) and the older
OFED libibmad's (``SymbolErrors``, ``LinkRecovers``, ``XmtData``, ``XmtWait``).

Widths (:mod:`.kinds`): a PortCounters block has the IBTA widths (``SymbolErrorCounter`` 16
bits, ``LinkDownedCounter`` 8, ``PortXmitWait`` 32 ...); an extended block (``-x``) holds the
64-bit PortCountersExtended values. Its error counters and ``PortXmitWait`` are there only when
the port's PMA has the additional extended counters (CapMask2 bit 1): libibmad's dump prints
those fields in every ``-x`` block (rdma-core before 2020 filled them with zeros), so without
that bit they are not counters and are dropped, never read as 0. Likewise ``PortXmitWait`` of a
PortCounters block whose CapMask lacks PortCountersXmitWaitSupported (bit 12).

A field printed twice in a block reads None, a port printed twice is refused, and a last line
cut before its newline is not read (its counter reads None). A value wider than its field
(``LinkDownedCounter:....255000`` in an 8-bit PortCounters field) reads None, and a line inside a
block that is not ``Name:....value`` (another writer's, or a splice) makes the output not whole:
perfquery prints nothing else there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabrictest.parsers.errors import ParseError

from .kinds import IB_PORT_COUNTERS_BITS
from .text import counter_value, whole_lines

#: rdma-core's perfquery names -> sysfs's
NAMES = {
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
    "QP1Dropped": "QP1_dropped",
    "PortUnicastXmitPkts": "unicast_xmit_packets",
    "PortUnicastRcvPkts": "unicast_rcv_packets",
    "PortMulticastXmitPkts": "multicast_xmit_packets",
    "PortMulticastRcvPkts": "multicast_rcv_packets",
}

#: the older OFED's libibmad names (OFED 1.x perfquery) -> sysfs's
OLD_OFED_NAMES = {
    "SymbolErrors": "symbol_error",
    "LinkRecovers": "link_error_recovery",
    "LinkDowned": "link_downed",
    "RcvErrors": "port_rcv_errors",
    "RcvRemotePhysErrors": "port_rcv_remote_physical_errors",
    "RcvSwRelayErrors": "port_rcv_switch_relay_errors",
    "XmtDiscards": "port_xmit_discards",
    "XmtConstraintErrors": "port_xmit_constraint_errors",
    "RcvConstraintErrors": "port_rcv_constraint_errors",
    "LinkIntegrityErrors": "local_link_integrity_errors",
    "ExcBufOverrunErrors": "excessive_buffer_overrun_errors",
    "XmtData": "port_xmit_data",
    "RcvData": "port_rcv_data",
    "XmtPkts": "port_xmit_packets",
    "RcvPkts": "port_rcv_packets",
    "XmtWait": "port_xmit_wait",
}

#: fields that select, not count
SELECTORS = frozenset({"PortSelect", "CounterSelect", "CounterSelect2"})

#: PerfMgt ClassPortInfo CapabilityMask bits (libibmad iba_types.h)
CAP_EXT_WIDTH = 0x0200 | 0x0400  # PortCountersExtended answers (IETF or not)
CAP_XMIT_WAIT = 0x1000  # PortCounters' PortXmitWait is kept
#: CapabilityMask2 bit 1: PortCountersExtended has the 64-bit error counters and PortXmitWait
CAP2_ADDITIONAL = 0x2

DATA = ("port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets")
#: the fields PortCountersExtended has only with CAP2_ADDITIONAL
ADDITIONAL = frozenset({
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
    "port_xmit_constraint_errors", "port_rcv_constraint_errors", "local_link_integrity_errors",
    "excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_wait", "QP1_dropped"})
#: what every PortCounters block has (the error counters the IBA makes mandatory, the data)
REQUIRED = ("symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
            "port_xmit_discards", "local_link_integrity_errors",
            "excessive_buffer_overrun_errors", *DATA)

_HEADER = re.compile(
    r"^#?\s*Port (?P<ext>extended )?counters: Lid (?P<lid>\d+) port (?P<port>\d+)"
    r"(?: \(CapMask: (?P<cap>0x[0-9A-Fa-f]+)(?: CapMask2: (?P<cap2>0x[0-9A-Fa-f]+))?\))?\s*$")
_LINE = re.compile(r"^(?P<name>[A-Za-z0-9]+):\.*(?P<value>\S*)\s*$")


@dataclass
class PerfqueryPort:
    """One port block: the LID and port, whether extended, the capability masks (None where
    the header has none: older perfquery), its counters by sysfs name (None: not a number,
    printed twice, or cut) and their widths in bits; ``dropped``: fields printed that the
    port's PMA does not provide; ``twice``: fields printed twice; ``cut``: the last line, when
    the output ends mid-line in this block."""

    lid: int
    port: int
    extended: bool
    cap_mask: int | None = None
    cap_mask2: int | None = None
    counters: dict[str, int | None] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)
    too_wide: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    cut: str | None = None

    @property
    def additional(self) -> bool:
        """An extended block with the 64-bit error counters (CapMask2 bit 1)."""
        return self.extended and bool((self.cap_mask2 or 0) & CAP2_ADDITIONAL)

    def width(self, name: str) -> int:
        """The bits of ``name`` as read in this block."""
        return 64 if self.extended else IB_PORT_COUNTERS_BITS.get(name, 64)

    def provides(self, name: str) -> bool:
        """Whether the port's PMA gives ``name`` in this block (else it is not a counter)."""
        if self.extended:
            return name not in ADDITIONAL or self.additional
        if name == "port_xmit_wait" and self.cap_mask is not None:
            return bool(self.cap_mask & CAP_XMIT_WAIT)
        return True

    def required(self) -> tuple[str, ...]:
        if not self.extended:
            return REQUIRED
        return DATA + tuple(sorted(ADDITIONAL)) if self.additional else DATA


def _int(text: str | None) -> int | None:
    return None if text is None else int(text, 16)


def _read_line(port: PerfqueryPort, line: str, cut: bool = False) -> None:
    m = _LINE.match(line.strip() + ("0" if cut else ""))
    if m is None:
        if line.strip() and not cut:
            port.foreign.append(line.strip())
        return
    if m["name"] in SELECTORS:
        return
    name = NAMES.get(m["name"]) or OLD_OFED_NAMES.get(m["name"]) or m["name"]
    if not port.provides(name):
        port.dropped.append(name)
        return
    value = None if cut or not m["value"] else counter_value(m["value"])
    if value is not None and value >> port.width(name):
        port.too_wide.append(name)
        value = None
    if name in port.counters:
        port.twice.append(name)
        value = None
    port.counters[name] = value


def parse_perfquery(text: str) -> list[PerfqueryPort]:
    """``perfquery [-x] [lid port]`` -> one record per port block; ParseError without a whole
    ``# Port counters`` line or with a port printed twice."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError("perfquery: empty")
    lines, cut = whole_lines(text)
    ports: list[PerfqueryPort] = []
    for line in lines:
        head = _HEADER.match(line)
        if head:
            port = PerfqueryPort(int(head["lid"]), int(head["port"]), bool(head["ext"]),
                                 _int(head["cap"]), _int(head["cap2"]))
            if any((p.lid, p.port, p.extended) == (port.lid, port.port, port.extended)
                   for p in ports):
                raise ParseError(f"perfquery: lid {port.lid} port {port.port} printed twice")
            ports.append(port)
        elif ports:
            _read_line(ports[-1], line)
    if not ports:
        raise ParseError("not perfquery output: no whole '# Port counters: Lid N port P' line")
    if cut is not None:
        ports[-1].cut = cut
        _read_line(ports[-1], cut, cut=True)
    return ports


def perfquery_missing(ports: list[PerfqueryPort]) -> list[str]:
    """What keeps a perfquery output from being whole: a block without a counter its kind of
    block always has, a counter whose value is not a number, does not fit its width or was
    printed twice, a line that is not perfquery's, a cut last line."""
    out = []
    for p in ports:
        where = f"perfquery lid {p.lid} port {p.port}"
        absent = [n for n in p.required() if n not in p.counters]
        if absent:
            out.append(f"{where}: no {', '.join(absent)}")
        if p.twice:
            out.append(f"{where}: {', '.join(p.twice)} printed twice")
        if p.too_wide:
            out.append(f"{where}: {', '.join(p.too_wide)} wider than "
                       f"{'its' if len(p.too_wide) == 1 else 'their'} field"
                       f" ({', '.join(str(p.width(n)) for n in p.too_wide)} bits)")
        if p.foreign:
            out.append(f"{where}: a line that is not perfquery's {p.foreign[0][:60]!r}")
        bad = [n for n, v in p.counters.items()
               if v is None and n not in p.twice and n not in p.too_wide]
        if bad:
            out.append(f"{where}: unreadable {', '.join(bad)}")
        if p.cut is not None:
            out.append(f"{where}: output ends mid-line ({p.cut.strip()[:40]!r})")
    return out

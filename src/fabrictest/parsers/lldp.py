"""LLDP neighbours as a node's agent reports them: ``lldpctl`` / ``lldpcli show neighbors``
(lldpd; plain or ``-f keyvalue``) and ``lldptool -t -n -i IF`` (open-lldp's ``lldpad``, what
HPE's Slingshot tools read).

A neighbour is the switch port at the other end of a NIC's cable: the switch's system name,
the port's ID (with its subtype: ``mac``, ``local``, ``ifname``, ...) and its description
(Slingshot's ``Interface 36 as ros0p31``). On Slingshot the port ID and the chassis ID are the
switch port's MAC, from which the node's algorithmic MAC (AMA) is derived (the Slingshot host
software's AMA pages: the second octet ``fe`` becomes ``00``).

Quirks these parsers take: lldptool prints its values indented by a tab or by eight spaces,
or (pasted into documents) not at all; lldpctl's plain output indents with spaces, ends its
header and every interface block with a row of dashes, and lists one block per neighbour, so
an interface can appear twice (two neighbours on one port, or the old and the new one while
the old one's TTL runs out); ``-f keyvalue`` repeats ``lldp.IF.via`` for a second neighbour,
continues a multi-line system description on lines without a key, and old versions write a
key that is also a prefix (``lldp.eth2.vlan=VLAN #1`` beside ``lldp.eth2.vlan.vlan-id=1``).

What makes an output not whole (:func:`missing`), never read first- or last-wins: a field read
(chassis ID, system name, port ID and description, TTL) given twice in one neighbour, or in lldptool a TLV read printed twice in one LLDPDU or with other than one value line, or two
different LLDPDUs (the same one printed again is one neighbour); one
neighbour (chassis ID and port ID, LLDP's MSAP identifier, which an agent keeps once) listed
twice on an interface; a TTL that is not LLDP's 16-bit count of seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, require_text
from .errors import ParseError

_MAC_RE = re.compile(r"^[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2}){4}$")


def normalise_mac(text: str | None) -> str | None:
    """``02-FE-00-00-00-1F`` / ``02:fe:00:00:00:1f`` -> ``02:fe:00:00:00:1f``; None when
    ``text`` is not a 6-octet MAC address."""
    if text is None:
        return None
    value = text.strip()
    if not _MAC_RE.match(value):
        return None
    return value.replace("-", ":").lower()


@dataclass(frozen=True)
class LldpNeighbor:
    """One neighbour heard on ``interface`` (None fields: the agent did not report them)."""

    interface: str
    chassis_id: str | None = None
    chassis_id_type: str | None = None  # mac, local, ifname, ip, ...
    sysname: str | None = None
    port_id: str | None = None
    port_id_type: str | None = None
    port_descr: str | None = None
    ttl: int | None = None

    def port_mac(self) -> str | None:
        """The switch port's MAC: its port ID when that is a MAC, else its chassis ID when
        that is one (Slingshot's switches report the port's MAC in both)."""
        for kind, value in ((self.port_id_type, self.port_id),
                            (self.chassis_id_type, self.chassis_id)):
            mac = normalise_mac(value)
            if mac and kind in (None, "mac"):
                return mac
        return None

    def port_names(self) -> list[str]:
        """Every name the port goes by: its ID, its description, and the description's last
        word (Slingshot's ``Interface 36 as ros0p31`` names the port ``ros0p31``)."""
        names = [self.port_id, self.port_descr]
        if self.port_descr and len(self.port_descr.split()) > 1:
            names.append(self.port_descr.split()[-1])
        return [n for n in dict.fromkeys(names) if n]

    def describe(self) -> str:
        """``x3000c0r24b0 port ros0p31`` (what a check line shows)."""
        switch = self.sysname or (f"chassis {self.chassis_id}" if self.chassis_id
                                  else "no system name")
        port = self.port_descr.split()[-1] if self.port_descr else None
        port = port or self.port_id or "no port ID"
        return f"{switch} port {port}"


@dataclass
class LldpReport:
    """Every interface's neighbours, in the order the agent printed them."""

    neighbors: dict[str, list[LldpNeighbor]] = field(default_factory=dict)
    tool: str = ""  # "lldpctl", "lldpctl -f keyvalue", "lldptool"
    cut_mid_line: bool = False
    unclosed: list[str] = field(default_factory=list)  # blocks with no closing line
    problems: list[str] = field(default_factory=list)  # fields twice, a TTL that is none

    def of(self, interface: str) -> list[LldpNeighbor]:
        return list(self.neighbors.get(interface, []))


def missing(report: LldpReport) -> list[str]:
    """What keeps the agent's output from being whole: a block without its closing line (the
    output was cut), a text cut in a line. Empty when whole."""
    problems = [f"{report.tool}: {what} has no closing line (output cut short)"
                for what in report.unclosed]
    problems += [f"{report.tool}: {p}" for p in report.problems]
    if report.cut_mid_line:
        problems.append(f"{report.tool}: output ends mid-line (cut short)")
    return problems


# ------------------------------------------------------------------------------- lldpctl
_IFACE_RE = re.compile(r"^Interface:\s+(?P<name>[^,\s]+),\s*via:\s*(?P<via>\S+)")
_FIELD_RE = re.compile(r"^\s+(?P<key>[A-Za-z][A-Za-z ]*?):\s*(?P<value>.*?)\s*$")
_DASHES_RE = re.compile(r"^-{20,}\s*$")
_KV_RE = re.compile(r"^lldp\.(?P<iface>[^.=\s]+)\.(?P<key>[^=\s]+)=(?P<value>.*)$")
_TYPED_RE = re.compile(r"^(?P<kind>mac|local|ifname|ip|ifalias|unhandled|all)\s+(?P<value>.+)$")


def _typed(value: str) -> tuple[str | None, str]:
    """lldpctl's ``mac 02:fe:...`` / ``local 34`` -> (subtype, value)."""
    m = _TYPED_RE.match(value.strip())
    return (m.group("kind"), m.group("value").strip()) if m else (None, value.strip())


#: LLDP's TTL TLV: a 16-bit count of seconds
MAX_TTL = 0xFFFF


def _ttl(value: str | None, where: str, problems: list[str]) -> int | None:
    if value is None:
        return None
    if not value.strip().isdigit() or int(value) > MAX_TTL:
        problems.append(f"{where}: TTL {value.strip()[:20]!r} is not a count of seconds "
                        f"(0-{MAX_TTL})")
        return None
    return int(value)


def _set(fields: dict[str, str], key: str, value: str, read: bool, where: str,
         problems: list[str]) -> None:
    """The first value of a key counts (a key of several values: ``Capability``, ``mgmt-ip``);
    a key read (one value per neighbour) given again is a problem."""
    if read and key in fields:
        problems.append(f"{where}: {key} given twice ({fields[key][:40]!r}, {value[:40]!r})")
    fields.setdefault(key, value)


def _add(report: LldpReport, neighbor: LldpNeighbor) -> None:
    """One neighbour more on its interface; the same one again (chassis and port ID) is a
    problem: an agent keeps one entry per neighbour."""
    same = [n for n in report.neighbors.get(neighbor.interface, [])
            if (n.chassis_id, n.port_id) == (neighbor.chassis_id, neighbor.port_id)]
    if same:
        report.problems.append(f"the neighbour {neighbor.chassis_id} port {neighbor.port_id} "
                               f"listed twice on {neighbor.interface}")
    report.neighbors.setdefault(neighbor.interface, []).append(neighbor)


def parse_lldpctl(text: str) -> LldpReport:
    """``lldpctl`` / ``lldpcli show neighbors [details]`` in plain or keyvalue format."""
    text = require_text(text, "lldpctl")
    if any(_KV_RE.match(line.strip()) for line in text.splitlines()):
        report = _parse_keyvalue(text)
    else:
        report = _parse_plain(text)
    report.cut_mid_line = ends_mid_line(text)
    return report


_PLAIN_READ = frozenset({"ChassisID", "SysName", "PortID", "PortDescr", "TTL"})


def _parse_plain(text: str) -> LldpReport:
    report = LldpReport(tool="lldpctl")
    blocks: list[tuple[str, dict[str, str]]] = []
    current: dict[str, str] | None = None
    closed = True
    seen_dashes = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if _DASHES_RE.match(line):
            seen_dashes = True
            closed = True
            current = None
            continue
        m = _IFACE_RE.match(line)
        if m:
            current = {}
            blocks.append((m.group("name"), current))
            closed = False
            continue
        if current is None:
            continue
        f = _FIELD_RE.match(raw)
        if f and f.group("value"):
            key = f.group("key").strip()
            _set(current, key, f.group("value"), key in _PLAIN_READ,
                 f"the neighbour on {blocks[-1][0]}", report.problems)
    if not blocks:
        raise ParseError("not lldpctl output: no 'Interface: IF, via: ...' line")
    if seen_dashes and not closed:
        report.unclosed.append(f"the neighbour on {blocks[-1][0]}")
    for name, fields in blocks:
        ctype, cid = _typed(fields["ChassisID"]) if "ChassisID" in fields else (None, None)
        ptype, pid = _typed(fields["PortID"]) if "PortID" in fields else (None, None)
        _add(report, LldpNeighbor(
            interface=name, chassis_id=cid, chassis_id_type=ctype,
            sysname=fields.get("SysName"), port_id=pid, port_id_type=ptype,
            port_descr=fields.get("PortDescr"),
            ttl=_ttl(fields.get("TTL"), f"the neighbour on {name}", report.problems)))
    return report


# keyvalue keys of a neighbour: chassis.<subtype>=ID, chassis.name, port.<subtype>=ID, ...
_ID_SUBTYPES = ("mac", "local", "ifname", "ip", "ifalias")
_KV_READ = frozenset({*(f"{side}.{k}" for side in ("chassis", "port") for k in _ID_SUBTYPES),
                      "chassis.name", "port.descr", "port.ttl", "ttl"})


def _parse_keyvalue(text: str) -> LldpReport:
    report = LldpReport(tool="lldpctl -f keyvalue")
    blocks: list[tuple[str, dict[str, str]]] = []
    open_blocks: dict[str, dict[str, str]] = {}
    for raw in text.splitlines():
        m = _KV_RE.match(raw.strip())
        if not m:
            continue  # a multi-line value's continuation, a shell prompt, noise
        iface, key, value = m.group("iface"), m.group("key"), m.group("value").strip()
        fields = open_blocks.get(iface)
        if fields is None or (key in ("via", "rid") and key in fields):
            fields = {}  # a second neighbour on the same interface starts again at `via`
            open_blocks[iface] = fields
            blocks.append((iface, fields))
        _set(fields, key, value, key in _KV_READ, f"the neighbour on {iface}", report.problems)
    if not blocks:
        raise ParseError("not lldpctl -f keyvalue output: no 'lldp.IF.KEY=VALUE' line")
    for name, f in blocks:
        ctype, cid = next(((k, f[f"chassis.{k}"]) for k in _ID_SUBTYPES
                           if f"chassis.{k}" in f), (None, None))
        ptype, pid = next(((k, f[f"port.{k}"]) for k in _ID_SUBTYPES
                           if f"port.{k}" in f), (None, None))
        _add(report, LldpNeighbor(
            interface=name, chassis_id=cid, chassis_id_type=ctype,
            sysname=f.get("chassis.name"), port_id=pid, port_id_type=ptype,
            port_descr=f.get("port.descr"),
            ttl=_ttl(f.get("port.ttl") or f.get("ttl"), f"the neighbour on {name}",
                     report.problems)))
    return report


# ------------------------------------------------------------------------------- lldptool
_TLV_TITLE_RE = re.compile(r"^(?P<title>[A-Z][A-Za-z0-9 /.\-]*? TLV)\s*$")
_LLDPTOOL_ID_RE = re.compile(r"^(?P<kind>MAC|IPv4|IPv6|Local|IfName|Ifname|ifName|"
                             r"Interface Name|Interface Alias|Chassis component|"
                             r"Port component|Agent circuit ID|Network Address):\s*(?P<value>.*)$")
_LLDPTOOL_KIND = {"MAC": "mac", "IPv4": "ip", "IPv6": "ip", "Local": "local",
                  "IfName": "ifname", "Ifname": "ifname", "ifName": "ifname",
                  "Interface Name": "ifname", "Interface Alias": "ifalias"}
_END = "End of LLDPDU TLV"
#: the TLVs read: each has one value line (LLDP sends each of them once)
_TOOL_READ = frozenset({"Chassis ID TLV", "Port ID TLV", "Time to Live TLV",
                        "Port Description TLV", "System Name TLV"})


def parse_lldptool(text: str, interface: str) -> LldpReport:
    """``lldptool -t -n -i IF`` (``get-tlv -n``): the neighbour's TLVs on one interface, which
    the output does not name (``interface`` says which)."""
    text = require_text(text, "lldptool")
    pdus: list[dict[str, list[str]]] = []  # one per 'End of LLDPDU TLV' (and an unclosed one)
    tlvs: dict[str, list[str]] = {}
    current: list[str] | None = None
    ended = False
    problems: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == _END:
            ended = True
            pdus.append(tlvs)
            tlvs, current = {}, None
            continue
        m = _TLV_TITLE_RE.match(line)
        if m and raw[:1] not in (" ", "\t"):
            if m.group("title") in _TOOL_READ and m.group("title") in tlvs:
                problems.append(f"the {m.group('title')} printed twice")
            current = tlvs.setdefault(m.group("title"), [])
            ended = False
            continue
        if current is not None:
            current.append(line)
    if tlvs or not pdus:
        pdus.append(tlvs)
    # the same LLDPDU printed again is one neighbour; another one is a second neighbour
    distinct = [pdu for i, pdu in enumerate(pdus) if pdu not in pdus[:i]]
    if len(distinct) > 1:
        problems.append(f"{len(distinct)} different neighbours printed for {interface}: which "
                        "one is on the port?")
    tlvs = distinct[0]
    if "Chassis ID TLV" not in tlvs and "Port ID TLV" not in tlvs:
        raise ParseError("not lldptool -t -n output: no 'Chassis ID TLV' or 'Port ID TLV'")
    report = LldpReport(tool="lldptool", problems=problems)
    problems += [f"the {title} has {len(values)} value lines, not one"
                 for title, values in tlvs.items() if title in _TOOL_READ and len(values) != 1]
    if not ended:
        report.unclosed.append(f"the neighbour on {interface} ('{_END}')")

    def ident(title: str) -> tuple[str | None, str | None]:
        values = tlvs.get(title) or []
        if not values:
            return None, None
        m = _LLDPTOOL_ID_RE.match(values[0])
        if not m:
            return None, values[0]
        return _LLDPTOOL_KIND.get(m.group("kind"), m.group("kind").lower()), m.group("value")

    ctype, cid = ident("Chassis ID TLV")
    ptype, pid = ident("Port ID TLV")
    first = {title: (values[0] if values else None) for title, values in tlvs.items()}
    report.neighbors[interface] = [LldpNeighbor(
        interface=interface, chassis_id=cid, chassis_id_type=ctype,
        sysname=first.get("System Name TLV"), port_id=pid, port_id_type=ptype,
        port_descr=first.get("Port Description TLV"),
        ttl=_ttl(first.get("Time to Live TLV"), f"the neighbour on {interface}", problems))]
    report.cut_mid_line = ends_mid_line(text)
    return report


__all__ = ["LldpNeighbor", "LldpReport", "missing", "normalise_mac", "parse_lldpctl",
           "parse_lldptool"]

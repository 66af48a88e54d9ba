"""``ip addr`` (iproute2) -> each interface's MAC, state and addresses: plain text or ``-j``.

Quirks: a NIC whose MAC was set by software shows its factory address as ``permaddr`` after
the broadcast address (Slingshot's AMA on a ConnectX: ``link/ether 02:00:00:00:03:7c brd
ff:ff:ff:ff:ff:ff permaddr 5c:bc:3d:af:be:b7``); ``altname`` lines; documents that lost the
indentation of the continuation lines; ``-j`` prints one JSON list, an interface without an
address has ``addr_info: []``.

Refused (ParseError), never read first- or last-wins: an interface listed twice, an address
listed twice on one interface (an IPv4 address may be there twice with two prefix lengths, as
Linux allows, an IPv6 one once), a prefix length longer than its family's address (32, 128
bits), and a text whose last line has no newline (ip ends every line: it was cut there, and
``inet 10.253.0.2/2`` is not a /24).
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, require_text
from .errors import ParseError
from .lldp import normalise_mac


@dataclass(frozen=True)
class Address:
    address: str
    prefixlen: int
    family: str  # inet | inet6
    scope: str = "global"

    @property
    def cidr(self) -> str:
        return f"{self.address}/{self.prefixlen}"


@dataclass
class Interface:
    name: str
    mac: str | None = None
    permaddr: str | None = None
    state: str | None = None  # operstate: UP, DOWN, UNKNOWN
    mtu: int | None = None
    addresses: list[Address] = field(default_factory=list)

    def global_addresses(self) -> list[Address]:
        """The addresses other hosts can reach it at (no link-local or host scope)."""
        return [a for a in self.addresses if a.scope == "global"]


_HEAD_RE = re.compile(r"^\d+:\s+(?P<name>[^:@\s]+)(?:@\S+)?:\s+<(?P<flags>[^>]*)>(?P<rest>.*)$")
_LINK_RE = re.compile(r"^link/\S+\s+(?P<mac>\S+)(?:\s+brd\s+\S+)?(?:\s+permaddr\s+(?P<perm>\S+))?")
_INET_RE = re.compile(r"^(?P<family>inet6?)\s+(?P<addr>[^\s/]+)/(?P<len>\d+)"
                      r"(?:.*?\bscope\s+(?P<scope>\S+))?")


def parse_ip_addr(text: str) -> dict[str, Interface]:
    """``ip addr [show [dev IF]]`` or ``ip -j addr ...``: name -> Interface."""
    text = require_text(text, "ip addr")
    stripped = text.strip()
    if stripped.startswith("["):
        return _parse_json(stripped)
    if ends_mid_line(text):
        raise ParseError(f"ip addr: output ends mid-line ({text.rsplit(chr(10), 1)[-1][:60]!r} "
                         "has no newline): cut short?")
    out: dict[str, Interface] = {}
    current: Interface | None = None
    for raw in text.splitlines():
        line = raw.strip()
        m = _HEAD_RE.match(line)
        if m:
            current = Interface(m.group("name"))
            rest = m.group("rest")
            mtu = re.search(r"\bmtu\s+(\d+)", rest)
            state = re.search(r"\bstate\s+(\S+)", rest)
            current.mtu = int(mtu.group(1)) if mtu else None
            current.state = state.group(1) if state else None
            if current.name in out:
                raise ParseError(f"ip addr: interface {current.name} listed twice")
            out[current.name] = current
            continue
        if current is None:
            continue
        m = _LINK_RE.match(line)
        if m:
            current.mac = normalise_mac(m.group("mac"))
            current.permaddr = normalise_mac(m.group("perm")) if m.group("perm") else None
            continue
        m = _INET_RE.match(line)
        if m:
            _add(current, Address(m.group("addr"), int(m.group("len")), m.group("family"),
                                  m.group("scope") or "global"))
    if not out:
        raise ParseError("not ip addr output: no 'N: IF: <FLAGS>' line")
    return out


def _parse_json(text: str) -> dict[str, Interface]:
    try:
        items = json.loads(text)
    except ValueError as err:
        raise ParseError(f"ip -j addr: not JSON ({err.msg})") from None
    if not isinstance(items, list):
        raise ParseError("ip -j addr: not a list of interfaces")
    out: dict[str, Interface] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("ifname"), str):
            raise ParseError("ip -j addr: an interface without 'ifname'")
        iface = Interface(item["ifname"], normalise_mac(item.get("address")),
                          normalise_mac(item.get("permaddr")), item.get("operstate"),
                          item.get("mtu") if isinstance(item.get("mtu"), int) else None)
        for a in item.get("addr_info") or []:
            try:
                addr = str(ipaddress.ip_address(a["local"]))
                found = Address(addr, int(a["prefixlen"]), str(a["family"]),
                                str(a.get("scope", "global")))
            except (KeyError, TypeError, ValueError):
                raise ParseError(f"ip -j addr: {iface.name}: an address without 'local' and "
                                 "'prefixlen'") from None
            _add(iface, found)
        if iface.name in out:
            raise ParseError(f"ip -j addr: interface {iface.name} listed twice")
        out[iface.name] = iface
    return out


#: the bits of each family's address: the longest prefix
_BITS = {"inet": 32, "inet6": 128}


def _add(iface: Interface, address: Address) -> None:
    bits = _BITS.get(address.family)
    if bits is not None and address.prefixlen > bits:
        raise ParseError(f"ip addr: {iface.name}: {address.cidr}: a prefix longer than "
                         f"{bits} bits")
    if any(a.address == address.address and (a.prefixlen == address.prefixlen or
                                              address.family != "inet")
           for a in iface.addresses):
        raise ParseError(f"ip addr: {iface.name}: address {address.address} listed twice")
    iface.addresses.append(address)


__all__ = ["Address", "Interface", "parse_ip_addr"]

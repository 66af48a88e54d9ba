"""A site's cabling inventory: which switch port each fabric NIC is cabled to, and optionally
the MAC and the IP address the NIC must have.

One line per NIC, whitespace-separated, ``#`` starts a comment, ``-`` stands for "not
listed"::

    # node    nic   switch        port      mac                ip
    nid001    hsn0  x1000c0r0b0   ros0p31   02:00:00:00:00:1f  10.253.0.31
    nid002    hsn0  x1000c0r0b0   ros0p30   -                  -
    node01    eth0  sw1           p1

The first four columns are required. A NIC listed twice, a MAC or an address that cannot be,
a missing column: a ParseError naming the line, never a guess.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from ._util import require_text
from .errors import ParseError
from .lldp import normalise_mac

COLUMNS = ("node", "nic", "switch", "port", "mac", "ip")
REQUIRED = 4


@dataclass(frozen=True)
class InventoryEntry:
    node: str
    nic: str
    switch: str
    port: str
    mac: str | None = None
    ip: str | None = None
    line: int = 0  # where it was written (for messages)


@dataclass
class Inventory:
    entries: dict[tuple[str, str], InventoryEntry] = field(default_factory=dict)

    def get(self, node: str, nic: str) -> InventoryEntry | None:
        return self.entries.get((node, nic))

    def nodes(self) -> list[str]:
        return list(dict.fromkeys(node for node, _ in self.entries))


def _value(token: str) -> str | None:
    return None if token == "-" else token


def parse_inventory(text: str) -> Inventory:
    """The inventory file's text; ParseError (naming the line) for anything it cannot be."""
    text = require_text(text, "inventory")
    inv = Inventory()
    cabled: dict[tuple[str, str], InventoryEntry] = {}  # (switch, port) -> its NIC's line
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        cols = line.split()
        if cols[:2] == ["node", "nic"]:
            continue  # a header line naming the columns
        if not REQUIRED <= len(cols) <= len(COLUMNS):
            raise ParseError(f"inventory line {lineno}: {len(cols)} columns, expected "
                             f"'node nic switch port [mac [ip]]': {line}")
        node, nic, switch, port = cols[:REQUIRED]
        if "-" in (node, nic, switch, port):
            raise ParseError(f"inventory line {lineno}: node, nic, switch and port are "
                             f"required ('-' only for mac and ip): {line}")
        mac = _value(cols[4]) if len(cols) > 4 else None
        if mac is not None:
            norm = normalise_mac(mac)
            if norm is None:
                raise ParseError(f"inventory line {lineno}: {mac!r} is not a MAC address")
            mac = norm
        ip = _value(cols[5]) if len(cols) > 5 else None
        if ip is not None:
            try:
                ip = str(ipaddress.ip_address(ip))
            except ValueError:
                raise ParseError(f"inventory line {lineno}: {ip!r} is not an IP address") \
                    from None
        key = (node, nic)
        if key in inv.entries:
            raise ParseError(f"inventory line {lineno}: {node} {nic} is already listed on "
                             f"line {inv.entries[key].line}")
        # one cable per switch port: two NICs there would each pass LLDP against the line
        # that names the other's cable
        if (other := cabled.get((switch, port))) is not None:
            raise ParseError(f"inventory line {lineno}: {node} {nic} on {switch} port {port}, "
                             f"where line {other.line} cables {other.node} {other.nic}: one "
                             f"switch port holds one cable")
        inv.entries[key] = cabled[(switch, port)] = InventoryEntry(node, nic, switch, port,
                                                                   mac, ip, lineno)
    if not inv.entries:
        raise ParseError("inventory: no 'node nic switch port' line")
    return inv


def inventory_text(entries) -> str:
    """Lines for ``entries`` (the format :func:`parse_inventory` reads), with a header."""
    lines = ["# " + "  ".join(COLUMNS)]
    for e in entries:
        lines.append(" ".join([e.node, e.nic, e.switch, e.port, e.mac or "-", e.ip or "-"]))
    return "\n".join(lines) + "\n"


__all__ = ["Inventory", "InventoryEntry", "inventory_text", "parse_inventory"]

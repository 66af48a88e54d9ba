"""``getent ahosts NAME`` and ``getent hosts ADDRESS``: a name's addresses and an address's
names, as the node's resolver answers (``/etc/nsswitch.conf``: the hosts file, DNS, ...).

``ahosts`` prints each address once per socket type (``10.0.0.1 STREAM node01`` then
``DGRAM`` and ``RAW``); ``hosts`` prints ``ADDRESS NAME [ALIAS ...]``. Nothing found is an
exit status of 2 and no output, which the caller tells apart from an empty text.
"""

from __future__ import annotations

import ipaddress

from ._util import require_text
from .errors import ParseError


def _address(token: str) -> str | None:
    try:
        return str(ipaddress.ip_address(token))
    except ValueError:
        return None


def parse_ahosts(text: str) -> list[str]:
    """The addresses, each once, in the resolver's order."""
    text = require_text(text, "getent ahosts")
    out: list[str] = []
    for line in text.splitlines():
        cols = line.split()
        if not cols:
            continue
        addr = _address(cols[0])
        if addr is None:
            raise ParseError(f"not getent ahosts output: {line.strip()!r}")
        if addr not in out:
            out.append(addr)
    return out


def parse_hosts(text: str) -> list[str]:
    """The names (canonical first, then aliases) of every line."""
    text = require_text(text, "getent hosts")
    out: list[str] = []
    for line in text.splitlines():
        cols = line.split()
        if not cols:
            continue
        if _address(cols[0]) is None or len(cols) < 2:
            raise ParseError(f"not getent hosts output: {line.strip()!r}")
        out += [n for n in cols[1:] if n not in out]
    return out


__all__ = ["parse_ahosts", "parse_hosts"]

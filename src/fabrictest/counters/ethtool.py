"""``ethtool -S <if>`` (pure): the NIC's own statistics, named by its driver.

Every name is kept as printed (a per-queue line of bnxt, ``[3]: rx_discards``, as
``rx_discards[3]``); the counters kept in a snapshot are those :func:`~.kinds.kind_of` knows.
A value that is not a number reads None, a name printed twice with two values reads None (which
one is the counter cannot be told), and a last line cut before its newline is not read: its
counter, when its name is whole, reads None (``rx_discards_phy: 58591`` is not 58591).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabrictest.parsers.errors import ParseError

from .text import counter_value, whole_lines

_LINE = re.compile(r"^\s*(?:\[(?P<queue>\d+)\]:\s*)?(?P<name>[^:]+?):\s*(?P<value>\S*)\s*$")
HEADER = "NIC statistics:"


@dataclass
class EthtoolStats:
    """name -> value (None: not a number, cut, or printed twice with two values); ``cut``: the
    last line when the output ends mid-line; ``twice``: the names printed twice."""

    values: dict[str, int | None] = field(default_factory=dict)
    cut: str | None = None
    twice: list[str] = field(default_factory=list)


def _name(m: re.Match) -> str:
    return m["name"].strip() + (f"[{m['queue']}]" if m["queue"] else "")


def parse_ethtool_stats(text: str) -> EthtoolStats:
    """``ethtool -S <if>``'s text -> :class:`EthtoolStats`; ParseError without its
    ``NIC statistics:`` line, with two of them, or with a line that is not ``name: value``."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError("ethtool -S: empty")
    lines, cut = whole_lines(text)
    start = next((i for i, line in enumerate(lines) if line.strip() == HEADER), None)
    if start is None:
        raise ParseError(f"not ethtool -S output: no whole '{HEADER}' line")
    out = EthtoolStats(cut=cut)
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        if line.strip() == HEADER:
            raise ParseError(f"ethtool -S: '{HEADER}' twice: two listings in one output")
        m = _LINE.match(line)
        if m is None:
            raise ParseError(f"ethtool -S: unexpected line {line.strip()[:60]!r}")
        name, value = _name(m), counter_value(m["value"]) if m["value"] else None
        if name in out.values and out.values[name] != value:
            out.twice.append(name)
            value = None
        out.values[name] = value
    if cut is not None and (m := _LINE.match(cut + "0")) is not None:
        out.values[_name(m)] = None  # the name is whole (its colon was printed), the value not
    return out

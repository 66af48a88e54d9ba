"""What every counter reader does first with a text (pure).

Every text the counters are read from ends its last line: sysfs files (``"%llu\\n"``),
``ethtool -S``, ``perfquery``, ``cxi_stat``, ``/proc/net/snmp`` and our own snapshots. A text
whose last line has no newline was cut while that line was written (a killed command, a
truncated copy, a full disk), so that line is never read as a value: a cut
``rx_discards_phy: 58591428329`` would read 58591, a cut ``Link state: u`` another state.
"""

from __future__ import annotations

import re

#: the largest value a counter can hold (64 bits): a longer number is not a counter's value
MAX_VALUE = (1 << 64) - 1
_DIGITS = re.compile(r"[0-9]{1,20}", re.ASCII)


def whole_lines(text: str) -> tuple[list[str], str | None]:
    """The lines whose newline was seen, and the last line when it was cut (no newline after
    it; None when the text ends with its newline or is empty)."""
    body, newline, tail = text.rpartition("\n")
    return (body.split("\n") if newline else []), (tail or None)


def counter_value(word: str) -> int | None:
    """A counter's value: decimal digits only, at most 64 bits; None for anything else (``N/A``,
    ``-1``, ``0x10``, ``1e3``, a number wider than any counter)."""
    word = word.strip()
    if not _DIGITS.fullmatch(word):
        return None
    value = int(word)
    return value if value <= MAX_VALUE else None


def cut_line_note(what: str, cut: str) -> str:
    """``<what>: output ends mid-line ('rx_discards_phy: 58591')``: the reason a reader gives
    for the line it did not read."""
    return f"{what}: output ends mid-line ({cut.strip()[:60]!r}): that line is not read"

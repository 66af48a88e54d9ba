"""Counter files and ``/proc/net/snmp`` (pure: the texts as read, in).

* ``/sys/class/infiniband/<d>/ports/<p>/counters/*`` (source ``ib``) and ``hw_counters/*``
  (``hw``), ``/sys/class/net/<if>/carrier_changes`` and ``statistics/*`` (``netdev``): one
  value per file, :func:`parse_counter_files`;
* ``/proc/net/snmp`` (``tcp``, this network namespace's TCP retransmissions):
  :func:`parse_snmp`.

A file that could not be read, or does not hold one whole counter value ending with its
newline (the kernel prints ``"%llu\\n"``; some drivers print ``N/A (no PMA)``), reads None:
never 0, never a shorter number.
"""

from __future__ import annotations

from fabrictest.parsers.errors import ParseError

from .text import counter_value, cut_line_note, whole_lines


def parse_counter_value(text: str | None) -> int | None:
    """One counter file's text -> its value; None when it could not be read, was cut (no
    newline after the value), or is not a non-negative integer."""
    if text is None:
        return None
    lines, cut = whole_lines(text)
    if cut is not None or len(lines) != 1:
        return None
    return counter_value(lines[0])


def parse_counter_files(files: dict[str, str | None]) -> dict[str, int | None]:
    """A directory of counter files as gathered (file name -> text, None when unreadable) ->
    name -> value (None: unreadable)."""
    return {name: parse_counter_value(text) for name, text in files.items()}


def parse_snmp(text: str) -> dict[str, dict[str, int | None]]:
    """``/proc/net/snmp`` -> protocol -> field -> value (a header line, then a value line, per
    protocol). ParseError without a whole ``Tcp:`` pair, with a protocol's lines printed again
    (which values are the namespace's cannot be told), or with a last line cut before its
    newline (a truncated read, said rather than read past)."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError("/proc/net/snmp: empty")
    lines, cut = whole_lines(text)
    if cut is not None:  # the kernel ends every line: this read was cut short
        raise ParseError(cut_line_note("/proc/net/snmp", cut))
    out: dict[str, dict[str, int | None]] = {}
    pending: dict[str, list[str]] = {}
    for line in lines:
        proto, sep, rest = line.partition(":")
        if not sep or not proto.isalnum():
            continue
        words = rest.split()
        if proto in out:
            raise ParseError(f"/proc/net/snmp: a third '{proto}:' line (its header and values "
                             "are printed once)")
        if proto not in pending:
            pending[proto] = words
            continue
        names = pending.pop(proto)
        if len(words) != len(names):
            continue  # a value line that does not match its header: the protocol stays unread
        # counters only: a signed field (Tcp MaxConn is -1) reads None
        out[proto] = {n: counter_value(v) for n, v in zip(names, words, strict=True)}
    if "Tcp" not in out:
        raise ParseError("/proc/net/snmp: no whole 'Tcp:' header and value lines")
    return out

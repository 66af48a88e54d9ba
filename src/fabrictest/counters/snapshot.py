"""One node's counters at one moment: the snapshot format (``fabric-health counters --json``,
``--out-dir``; pure).

A snapshot is one JSON object, ending with a newline::

    {"node": "node03", "format": "fabrictest-counters/1",
     "counters": [{"source": "netdev", "device": "eth0", "port": "-",
                   "name": "carrier_changes", "value": 14, "width": 31}, ...],
     "unreadable": ["netdev eth0 statistics/rx_errors: Permission denied", ...],
     "taken": 1764161234.5}

``value`` is null for a counter that could not be read (never 0), and ``unreadable`` says what
could not be read and why; ``width`` is the counter's bits where it was read (older snapshots
lack it: :func:`~.kinds.width_of` then); ``taken`` (optional) is when it was read, in seconds
since the epoch, which orders a node's snapshots over a whole run. Each counter (source,
device, port, name) appears once: a snapshot naming one twice is refused, since either value
could hide the other (a ``carrier_changes`` that moved).

A test keeps its snapshots in ``counters/{before,after}/<node>.json`` (:data:`SNAPSHOT_DIR`) of
its stage and output directories.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from fabrictest.parsers.errors import ParseError

from .kinds import kind_of, maximum, width_of
from .text import whole_lines

FORMAT = "fabrictest-counters/1"

#: where a test keeps its snapshots, in its stage and output directories:
#: ``counters/{before,after}/<node>.json``
SNAPSHOT_DIR = "counters"


@dataclass(frozen=True)
class Counter:
    """One counter: ``source`` says where it was read (``ib``, ``hw``, ``netdev``, ``ethtool``,
    ``tcp``, ``cxi``); ``port`` is ``-`` where there is none (a netdev, the TCP stack);
    ``width`` its bits as read there (None: :func:`~.kinds.width_of` of source and name)."""

    source: str
    device: str
    port: str
    name: str
    value: int | None
    width: int | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.source, self.device, self.port, self.name)

    @property
    def kind(self) -> str | None:
        return kind_of(self.name)

    @property
    def bits(self) -> int:
        return self.width or width_of(self.source, self.name)

    @property
    def place(self) -> str:
        """``mlx5_0/1``, ``eth0``, ``tcp``: where the counter is, in messages."""
        return self.device if self.port == "-" else f"{self.device}/{self.port}"

    def as_dict(self) -> dict:
        return {"source": self.source, "device": self.device, "port": self.port,
                "name": self.name, "value": self.value, "width": self.bits}


@dataclass
class Snapshot:
    node: str
    counters: list[Counter] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    taken: float | None = None

    @property
    def read_nothing(self) -> bool:
        """No counter has a value: the snapshot tells nothing (an empty list included)."""
        return all(c.value is None for c in self.counters)

    def as_dict(self) -> dict:
        doc = {"node": self.node, "format": FORMAT,
               "counters": [c.as_dict() for c in self.counters], "unreadable": self.unreadable}
        if self.taken is not None:
            doc["taken"] = self.taken
        return doc

    def to_json(self, indent: int | None = None) -> str:
        """The JSON text, with its final newline (a text without it reads as cut)."""
        return json.dumps(self.as_dict(), indent=indent) + "\n"

    def lines(self) -> list[str]:
        """``COUNTER <node> <place> <source> <name> <value|unreadable>``, then the reasons."""
        out = [f"COUNTER {self.node} {c.place} {c.source} {c.name} "
               f"{'unreadable' if c.value is None else c.value}" for c in self.counters]
        out += [f"UNREADABLE {self.node} {why}" for why in self.unreadable]
        return out


def _word(doc: dict, key: str) -> str:
    value = doc[key]
    if not isinstance(value, str) or value.split() != [value]:  # empty, or with a space
        raise TypeError(f"{key} {value!r} is not a name")
    return value


def _counter(c) -> Counter:
    if not isinstance(c, dict):
        raise TypeError(f"counter {c!r} is not an object")
    source, name = _word(c, "source"), _word(c, "name")
    width = c.get("width")
    if width is not None and (isinstance(width, bool) or not isinstance(width, int)
                              or not 1 <= width <= 64):
        raise TypeError(f"{name}: width {width!r} is not 1 to 64 bits")
    value = c["value"]
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 0 or value > maximum(64)):
        raise TypeError(f"{name}: value {value!r} is not a counter value (0 to 2^64 - 1)")
    return Counter(source, _word(c, "device"), _word(c, "port"), name, value, width)


def _taken(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value >= 0):
        raise TypeError(f"taken {value!r} is not a time in seconds since the epoch")
    return float(value)


def snapshot_from_dict(doc) -> Snapshot:
    """A snapshot from its JSON object; ParseError naming what is wrong with it."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ParseError(f"not a counters snapshot: no \"format\": \"{FORMAT}\"")
    try:
        if not isinstance(doc["counters"], list):
            raise TypeError("counters is not a list")
        unreadable = doc.get("unreadable", [])
        if not isinstance(unreadable, list) or not all(isinstance(u, str) for u in unreadable):
            raise TypeError("unreadable is not a list of reasons")
        snap = Snapshot(_word(doc, "node"), [_counter(c) for c in doc["counters"]],
                        list(unreadable), _taken(doc.get("taken")))
    except (KeyError, TypeError) as err:
        raise ParseError(f"counters snapshot: malformed ({err})") from None
    seen: dict[tuple, Counter] = {}
    for c in snap.counters:
        if c.key in seen:
            raise ParseError(f"counters snapshot of {snap.node}: {c.source} {c.place} {c.name} "
                             f"twice ({seen[c.key].value} and {c.value}): which one is the "
                             "counter cannot be told")
        seen[c.key] = c
    return snap


def parse_snapshot(text: str) -> Snapshot:
    """One snapshot's JSON text -> :class:`Snapshot`; ParseError for anything else (a text
    cut short, even by its last newline only; another JSON document)."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError("counters snapshot: empty")
    _lines, cut = whole_lines(text)
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise ParseError(f"counters snapshot: not JSON ({str(err)[:60]})"
                         + (": cut short" if cut is not None else "")) from None
    snap = snapshot_from_dict(doc)
    if cut is not None:
        raise ParseError(f"counters snapshot of {snap.node}: ends without the newline after its "
                         "last line: cut short")
    return snap

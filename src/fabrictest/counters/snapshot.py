"""One node's counters at one moment (``fabric-health counters --json``), and the difference of
two such snapshots (pure).

A snapshot is a JSON object::

    {"node": "node03", "format": "fabrictest-counters/1",
     "counters": [{"source": "netdev", "device": "eth0", "port": "-",
                   "name": "carrier_changes", "value": 14}, ...],
     "unreadable": ["netdev eth0 statistics/rx_errors: Permission denied", ...],
     "taken": 1764161234.5}

``value`` is null for a counter that could not be read (never 0), and ``unreadable`` says what
could not be read and why; ``taken`` (optional: older snapshots lack it) is when it was read,
in seconds since the epoch, which orders a node's snapshots over a whole run.
:func:`difference` pairs two snapshots of one node and returns one :class:`Change` per counter
kept in both, plus what cannot be compared (read before but not after, or unreadable in
either).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from fabrictest.parsers._util import require_text
from fabrictest.parsers.errors import ParseError

from .read import SATURATES_AT, STATES, kind_of

FORMAT = "fabrictest-counters/1"


@dataclass(frozen=True)
class Counter:
    """One counter: ``source`` says where it was read (``ib``, ``hw``, ``netdev``, ``ethtool``,
    ``tcp``, ``cxi``); ``port`` is ``-`` where there is none (a netdev, the TCP stack)."""

    source: str
    device: str
    port: str
    name: str
    value: int | None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.source, self.device, self.port, self.name)

    @property
    def kind(self) -> str | None:
        return kind_of(self.name)

    @property
    def place(self) -> str:
        """``mlx5_0/1``, ``eth0``, ``tcp``: where the counter is, in messages."""
        return self.device if self.port == "-" else f"{self.device}/{self.port}"


@dataclass
class Snapshot:
    node: str
    counters: list[Counter] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    taken: float | None = None

    def as_dict(self) -> dict:
        doc = {"node": self.node, "format": FORMAT,
               "counters": [asdict(c) for c in self.counters], "unreadable": self.unreadable}
        if self.taken is not None:
            doc["taken"] = self.taken
        return doc

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.as_dict(), indent=indent)

    def lines(self) -> list[str]:
        """``COUNTER <node> <place> <source> <name> <value|unreadable>``, then the reasons."""
        out = [f"COUNTER {self.node} {c.place} {c.source} {c.name} "
               f"{'unreadable' if c.value is None else c.value}" for c in self.counters]
        out += [f"UNREADABLE {self.node} {why}" for why in self.unreadable]
        return out


def snapshot_from_dict(doc) -> Snapshot:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ParseError(f"not a counters snapshot: no \"format\": \"{FORMAT}\"")
    try:
        counters = [Counter(str(c["source"]), str(c["device"]), str(c["port"]), str(c["name"]),
                            _value(c["value"])) for c in doc["counters"]]
        return Snapshot(str(doc["node"]), counters, [str(u) for u in doc.get("unreadable", [])],
                        _taken(doc.get("taken")))
    except (KeyError, TypeError) as err:
        raise ParseError(f"counters snapshot: malformed ({err})") from None


def _value(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"value {value!r} is not a non-negative integer")
    return value


def _taken(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value >= 0):
        raise TypeError(f"taken {value!r} is not a time in seconds since the epoch")
    return float(value)


def parse_snapshot(text: str) -> Snapshot:
    """One snapshot's JSON text -> :class:`Snapshot`; ParseError for anything else (a cut
    text, another JSON document)."""
    text = require_text(text, "fabric-health counters --json")
    try:
        return snapshot_from_dict(json.loads(text))
    except ValueError as err:
        if isinstance(err, ParseError):
            raise
        raise ParseError(f"counters snapshot: not JSON ({err.args[0][:60]})") from None


@dataclass(frozen=True)
class Change:
    """One counter of one node across a test: ``before`` and ``after`` are read values."""

    node: str
    counter: Counter
    before: int
    after: int

    @property
    def increase(self) -> int:
        return self.after - self.before

    def line(self) -> str:
        c = self.counter
        return (f"{self.node} {c.place} {c.name}: {self.before} -> {self.after} "
                f"(+{self.increase})")


@dataclass
class Difference:
    """The changes of one node's counters and what could not be compared."""

    node: str
    changes: list[Change] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def difference(before: Snapshot, after: Snapshot) -> Difference:
    """``after`` minus ``before`` for every counter in both. A counter unreadable in either, or
    kept before and gone after, or that went backwards (reset) or sits at its saturation
    value, is listed in ``unknown`` with the reason instead."""
    if before.node != after.node:
        raise ValueError(f"snapshots of two nodes: {before.node} and {after.node}")
    node = before.node
    out = Difference(node)
    later = {c.key: c for c in after.counters}
    for c in before.counters:
        a = later.pop(c.key, None)
        where = f"{node} {c.place} {c.name}"
        if a is None:
            out.unknown.append(f"{where}: read before the test, not after")
        elif c.value is None or a.value is None:
            which = "before" if c.value is None else "after"
            out.unknown.append(f"{where}: unreadable {which} the test")
        elif a.value < c.value and c.name not in STATES:
            out.unknown.append(f"{where}: went backwards ({c.value} -> {a.value}): reset?")
        elif SATURATES_AT.get(c.name) is not None and a.value >= SATURATES_AT[c.name]:
            out.unknown.append(f"{where}: saturated at {a.value}, its increase is unknown "
                               "(reset the port's counters)")
        else:
            out.changes.append(Change(node, c, c.value, a.value))
    for a in later.values():
        out.unknown.append(f"{node} {a.place} {a.name}: read after the test, not before")
    return out

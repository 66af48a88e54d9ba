"""The difference of two snapshots of one node (pure): what each counter did between them.

A counter read in both, at one width, within it, and that did not go backwards is a
:class:`Change` (its increase). Everything else is an :class:`Unknown`, with the reason:

* ``unreadable``: no value before or after; ``missing``: read on one side only;
* ``nothing``: a snapshot that holds no counter value at all (it tells nothing);
* ``saturated``: at its maximum ``2**width - 1`` after (an InfiniBand counter stops there, a
  wider one is about to wrap): its increase is unknown, at least ``after - before`` (never
  ``+0``: ``port_xmit_wait 4294967295 -> 4294967295`` is not "no congestion");
* ``reset``: it went backwards (the port's counters were cleared, the driver reloaded, the
  node rebooted): its increase is unknown;
* ``widths``: read at two widths (a 64-bit extended source on one side only), or ``impossible``:
  a value its width cannot hold: not comparable.

How an unknown increase is judged is the thresholds' rule (:mod:`.judge`, :mod:`.thresholds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .kinds import SATURATING, STATES, maximum
from .snapshot import Counter, Snapshot

UNREADABLE, MISSING, NOTHING = "unreadable", "missing", "nothing"
SATURATED, RESET, WIDTHS, IMPOSSIBLE = "saturated", "reset", "widths", "impossible"
#: the reasons whose counter was read on both sides but whose increase cannot be known
INCREASE_UNKNOWN = frozenset({SATURATED, RESET, WIDTHS, IMPOSSIBLE})


@dataclass(frozen=True)
class Change:
    """One counter of one node across a span: ``before`` and ``after`` are read values."""

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


@dataclass(frozen=True)
class Unknown:
    """A counter (None: the whole snapshot) whose change cannot be told, and why; ``text`` is
    the line said; ``at_least`` the increase a saturated counter showed before it stopped."""

    node: str
    counter: Counter | None
    why: str
    text: str
    at_least: int = 0

    @property
    def name(self) -> str | None:
        return None if self.counter is None else self.counter.name


@dataclass
class Difference:
    """The changes of one node's counters and what could not be compared."""

    node: str
    changes: list[Change] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)


def _compare(node: str, b: Counter, a: Counter, during: str) -> Change | Unknown:
    where = f"{node} {b.place} {b.name}"
    if b.value is None or a.value is None:
        which = "before" if b.value is None else "after"
        return Unknown(node, b, UNREADABLE, f"{where}: unreadable {which} {during}")
    if b.bits != a.bits:
        return Unknown(node, b, WIDTHS, f"{where}: read as a {b.bits}-bit counter before and "
                                        f"a {a.bits}-bit one after {during} (another source): "
                                        "not comparable")
    top = maximum(b.bits)
    if b.value > top or a.value > top:
        value = max(b.value, a.value)
        return Unknown(node, b, IMPOSSIBLE, f"{where}: reads {value}, more than its {b.bits}-bit "
                                            f"counter holds ({top}): not this counter's value")
    if b.name in STATES:
        return Change(node, b, b.value, a.value)
    if a.value < b.value:
        return Unknown(node, b, RESET, f"{where}: went backwards ({b.value} -> {a.value}): "
                                       f"reset during {during}, its increase is unknown")
    if a.value == top:
        # an InfiniBand counter stops at its maximum; a wider one wraps after it
        at = (f"saturated at {top} ({b.bits}-bit maximum)" if b.source in SATURATING
              else f"at its {b.bits}-bit maximum {top} (it wraps next)")
        if b.value == top:
            text = (f"{where}: {at} before and after {during}: its increase is unknown "
                    "(reset the port's counters)")
        else:
            text = (f"{where}: {at} during {during} ({b.value} -> {a.value}): it rose by at "
                    f"least {a.value - b.value}, how much more is unknown")
        return Unknown(node, b, SATURATED, text, a.value - b.value)
    return Change(node, b, b.value, a.value)


def difference(before: Snapshot, after: Snapshot, during: str = "the test") -> Difference:
    """``after`` minus ``before`` for every counter in both; the rest as :class:`Unknown`."""
    if before.node != after.node:
        raise ValueError(f"snapshots of two nodes: {before.node} and {after.node}")
    node = before.node
    out = Difference(node)
    for snap, which in ((before, "before"), (after, "after")):
        if snap.read_nothing:
            out.unknown.append(Unknown(node, None, NOTHING, (
                f"{node}: its snapshot {which} {during} holds no counter value "
                f"({len(snap.counters)} counters, none read)")))
    later = {c.key: c for c in after.counters}
    for c in before.counters:
        a = later.pop(c.key, None)
        if a is None:
            out.unknown.append(Unknown(node, c, MISSING, f"{node} {c.place} {c.name}: read "
                                                          f"before {during}, not after"))
            continue
        result = _compare(node, c, a, during)
        (out.changes if isinstance(result, Change) else out.unknown).append(result)
    for a in later.values():
        out.unknown.append(Unknown(node, a, MISSING, f"{node} {a.place} {a.name}: read after "
                                                      f"{during}, not before"))
    return out

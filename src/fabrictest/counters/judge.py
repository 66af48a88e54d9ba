"""Judge the counters of a test's nodes across the test (pure: records in, verdicts out).

* a link that went down fails: ``link_downed``, ``link_down_events[_phy]`` count downs;
  ``carrier_changes`` counts 2 per down and up, so it is halved (rounded up);
  ``cxi_stat``'s state going from up to down is one;
* an error counter that rose above its threshold fails, naming node, port, counter and the
  increase (threshold 0 unless the system's counters file says otherwise);
* congestion counters are figures: their increase per node, summed over the node's ports;
* a node whose counters could not be read, or compared, makes the verdict say so: a check that
  could not look is not a pass.

The thresholds are data: ``reference/counters/<system>.yaml`` (:class:`Thresholds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabrictest.counters.read import CONGESTION, ERROR, KINDS, LINK, STATES
from fabrictest.counters.snapshot import Difference


@dataclass
class Thresholds:
    """The largest increase of each error counter a test may see (default ``errors_default``);
    ``ignore``: counters a site does not judge at all (a driver known to count spuriously)."""

    errors_default: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    ignore: frozenset[str] = frozenset()
    provenance: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, doc) -> Thresholds:
        """From the YAML document; ValueError naming what is wrong."""
        if doc is None:
            return cls()
        if not isinstance(doc, dict):
            raise ValueError("a counters file is a mapping")
        unknown = set(doc) - {"$provenance", "errors", "ignore"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)} (use $provenance, errors, ignore)")
        if "$provenance" not in doc:
            raise ValueError("no $provenance: say where the thresholds come from")
        errors = dict(doc.get("errors") or {})
        default = errors.pop("default", 0)
        for name, value in [("default", default), *errors.items()]:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"errors.{name}: {value!r} is not a count >= 0")
            if name != "default" and KINDS.get(name) != ERROR:
                raise ValueError(f"errors.{name}: not an error counter "
                                 f"(known: {', '.join(sorted(k for k, v in KINDS.items() if v == ERROR))})")
        ignore = doc.get("ignore") or []
        bad = [n for n in ignore if n not in KINDS]
        if bad:
            raise ValueError(f"ignore: unknown counters {bad}")
        return cls(default, errors, frozenset(ignore), dict(doc["$provenance"]))

    def limit(self, name: str) -> int:
        return self.errors.get(name, self.errors_default)

    def times(self, spans: int) -> Thresholds:
        """The allowance of ``spans`` tests together (a whole run): each limit times ``spans``."""
        return Thresholds(self.errors_default * spans,
                          {k: v * spans for k, v in self.errors.items()}, self.ignore,
                          self.provenance)


@dataclass
class Verdict:
    """What the counters of a test's nodes say: failures (the test fails with them), the
    congestion figures per node ``{node: {counter: increase}}``, and what could not be read."""

    failures: list[str] = field(default_factory=list)
    figures: dict[str, dict[str, int]] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)


def downs(name: str, before: int, after: int) -> int:
    """How many times a link went down from a link counter's two readings."""
    if name in STATES:  # a state read twice: down at the end counts once
        return int(after == 0)
    if name == "carrier_changes":
        return (after - before + 1) // 2
    return after - before


def judge(diffs: list[Difference], thresholds: Thresholds | None = None,
          expected_nodes: list[str] | None = None, during: str = "the test") -> Verdict:
    """The verdict on every node's :class:`Difference`; a node of ``expected_nodes`` without
    one is unread. ``during`` names the span in the messages (``the test``, ``the run``)."""
    thresholds = thresholds or Thresholds()
    out = Verdict()
    seen = {d.node for d in diffs}
    for node in expected_nodes or []:
        if node not in seen:
            out.unread.append(f"{node}: no counters before and after {during}")
    for d in diffs:
        out.unread += d.unknown
        figures = out.figures.setdefault(d.node, {})
        for ch in d.changes:
            name, kind = ch.counter.name, ch.counter.kind
            if name in thresholds.ignore:
                continue
            where = f"{d.node} {ch.counter.place}"
            if kind == LINK:
                n = downs(name, ch.before, ch.after)
                if n > 0:
                    out.failures.append(f"{where}: link went down {n} time{'s' * (n != 1)} "
                                        f"during {during} ({name} {ch.before} -> {ch.after})")
            elif kind == ERROR and ch.increase > thresholds.limit(name):
                out.failures.append(f"{where}: {name} rose by {ch.increase} during {during} "
                                    f"({ch.before} -> {ch.after}; threshold "
                                    f"{thresholds.limit(name)})")
            elif kind == CONGESTION:
                figures[name] = figures.get(name, 0) + ch.increase
    return out

"""Judge the counters of a test's nodes across the test (pure: records in, verdicts out).

* a link that went down fails: ``link_downed``, ``link_down_events[_phy]`` count downs;
  ``carrier_changes`` counts 2 per down and up, so it is halved (rounded up);
  ``cxi_stat``'s state going from up to down is one;
* an error counter that rose above its threshold fails, naming node, port, counter and the
  increase (threshold 0 unless the system's counters file says otherwise);
* congestion counters are figures: their increase per node, summed over the node's ports;
* a counter whose increase is unknown (saturated, reset, two widths) is judged by the
  thresholds' ``unknown`` rule (unread, or a failure), except that what it did show is judged
  too: an error counter that saturated having risen by more than its threshold, or a link
  counter that saturated having moved, fails;
* a node whose counters could not be read, or compared, makes the verdict say so: a check that
  could not look is not a pass.

The thresholds are data: ``reference/counters/<system>.yaml`` (:class:`~.thresholds.Thresholds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .difference import INCREASE_UNKNOWN, SATURATED, Difference, Unknown
from .kinds import CONGESTION, ERROR, LINK, STATES, kind_of
from .thresholds import Thresholds


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


def _unknown(u: Unknown, thresholds: Thresholds, where: str, during: str,
             out: Verdict) -> None:
    kind = kind_of(u.name or "")
    if u.why == SATURATED and u.at_least > 0:
        shown = downs(u.name, 0, u.at_least) if kind == LINK else u.at_least
        if kind == LINK:
            out.failures.append(f"{where}: link went down at least {shown} time"
                                f"{'s' * (shown != 1)} during {during} ({u.text})")
            return
        if kind == ERROR and shown > thresholds.limit(u.name):
            out.failures.append(f"{where}: {u.name} rose by at least {shown} during {during} "
                                f"(threshold {thresholds.limit(u.name)}; {u.text})")
            return
    if u.why in INCREASE_UNKNOWN and thresholds.unknown == "fail":
        out.failures.append(f"{u.text} (counted a failure: thresholds' unknown: fail)")
    else:
        out.unread.append(u.text)


def judge(diffs: list[Difference], thresholds: Thresholds | None = None,
          expected_nodes: list[str] | None = None, during: str = "the test") -> Verdict:
    """The verdict on every node's :class:`~.difference.Difference`; a node of
    ``expected_nodes`` without one is unread. ``during`` names the span in the messages
    (``the test``, ``the run``)."""
    thresholds = thresholds or Thresholds()
    out = Verdict()
    seen = {d.node for d in diffs}
    for node in expected_nodes or []:
        if node not in seen:
            out.unread.append(f"{node}: no counters before and after {during}")
    for d in diffs:
        for u in d.unknown:
            if u.name in thresholds.ignore:
                continue
            where = d.node if u.counter is None else f"{d.node} {u.counter.place}"
            _unknown(u, thresholds, where, during, out)
        figures = out.figures.setdefault(d.node, {})
        partial = {u.name for u in d.unknown}  # a figure with an unknown part is no figure
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
            elif kind == CONGESTION and name not in partial:
                figures[name] = figures.get(name, 0) + ch.increase
    return out

"""The counters of a whole suite run, node by node (pure: snapshots in, verdicts out).

Every multi-node test snapshots the counters of each of its nodes before and after its launch
(``reframe_tests/fabric_counters.py``). Over a run, a node's first snapshot is taken before any
test touched it and its last after the last test that did, so together they are the node's
snapshot before and after the whole run; the snapshots in between show what happened while
*no* test ran on it (the gap from one test's ``after`` to the next test's ``before``): a link
that went down then fails no test, and only this view shows it.

Per node :func:`whole_run` gives:

* the whole run's difference (first ``before`` to last ``after``): every counter that changed,
  judged with the system's thresholds allowed once per span (each test and each gap);
* the gaps' verdicts: a link that went down, or an error over its threshold, between two tests,
  naming both;
* what could not be compared (a test with a node's ``before`` but not its ``after``, snapshots
  without a time and two tests on the node).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .difference import Change, Difference, difference
from .judge import Verdict, downs, judge
from .kinds import LINK, kind_of
from .snapshot import Snapshot
from .thresholds import Thresholds


@dataclass(frozen=True)
class CaseSnapshots:
    """One test's snapshots: node -> snapshot, before and after its launch; ``when`` orders
    tests whose snapshots carry no time (the job's completion time)."""

    test: str
    before: dict[str, Snapshot]
    after: dict[str, Snapshot]
    when: float = 0.0


@dataclass
class NodeRun:
    """One node over the run: the tests that snapshotted it (in order), the whole run's changes
    and verdict, and the failures between tests."""

    node: str
    tests: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    verdict: Verdict = field(default_factory=Verdict)
    between: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[str]:
        return self.verdict.failures + self.between

    @property
    def unread(self) -> list[str]:
        return self.verdict.unread


def _start(t: CaseSnapshots, node: str) -> float:
    taken = t.before[node].taken
    return t.when if taken is None else taken


def _fold_children(diff: Difference) -> tuple[Difference, dict[str, list[Change]]]:
    """One physical link's downs once: of a node's network interfaces whose link went down
    the same number of times over the same span (a macvlan or VLAN on its parent, e.g. the
    vcluster's hsn0 on eth0; the snapshots do not say which interface sits on which), the
    first by name stands for the others, and they are said with it. Two links that went
    down equally often in one span are then one count, still named both: the verdict and
    the elements named do not change, only the count.

    Returns the difference without the folded changes, and place -> the changes folded
    into it."""
    by_downs: dict[tuple[str, int], list[Change]] = {}
    for ch in diff.changes:
        c = ch.counter
        if c.source == "netdev" and kind_of(c.name) == LINK:
            n = downs(c.name, ch.before, ch.after)
            if n > 0:
                by_downs.setdefault((c.name, n), []).append(ch)
    folded: dict[str, list[Change]] = {}
    drop: set[int] = set()
    for same in by_downs.values():
        if len(same) > 1:
            same = sorted(same, key=lambda ch: ch.counter.place)
            folded[same[0].counter.place] = same[1:]
            drop |= {id(ch) for ch in same[1:]}
    if not drop:
        return diff, {}
    return Difference(diff.node, [ch for ch in diff.changes if id(ch) not in drop],
                      diff.unknown), folded


def _judged(diff: Difference, thresholds: Thresholds, during: str) -> Verdict:
    """The span's verdict with child interfaces folded into the link they went down with."""
    kept, folded = _fold_children(diff)
    verdict = judge([kept], thresholds, during=during)
    for place, children in folded.items():
        head = f"{diff.node} {place}: link went down"
        names = ", ".join(ch.counter.place for ch in children)
        said = "; ".join(f"{ch.counter.place} {ch.counter.name} {ch.before} -> {ch.after}"
                         for ch in children)
        verdict.failures = [
            f"{diff.node} {place}, {names}: link went down{f[len(head):]} ({said}: down as "
            "often with it, one link counted once)" if f.startswith(head) else f
            for f in verdict.failures]
    return verdict


def _gap_downs(node: str, seq: list[CaseSnapshots]) -> dict[tuple, int]:
    """counter key -> how many times its link went down between two tests."""
    out: dict[tuple, int] = {}
    for prev, nxt in zip(seq, seq[1:], strict=False):
        for ch in difference(prev.after[node], nxt.before[node]).changes:
            if kind_of(ch.counter.name) == LINK:
                n = downs(ch.counter.name, ch.before, ch.after)
                if n > 0:
                    out[ch.counter.key] = out.get(ch.counter.key, 0) + n
    return out


def whole_run(tests: list[CaseSnapshots], thresholds: Thresholds | None = None) -> list[NodeRun]:
    """Every node that a test snapshotted before and after, sorted by name.

    A link that went down between two tests is said once, as between those tests: the whole
    run's difference holds the same downs and does not say them again (it says the downs no
    gap explains: those during a test)."""
    thresholds = thresholds or Thresholds()
    spans: dict[str, list[CaseSnapshots]] = {}
    half: dict[str, list[str]] = {}
    for t in tests:
        for node in sorted(set(t.before) | set(t.after)):
            if node in t.before and node in t.after:
                spans.setdefault(node, []).append(t)
            else:
                which = "after" if node in t.before else "before"
                half.setdefault(node, []).append(f"{node}: {t.test} has no snapshot {which} "
                                                 "its launch")
    out = []
    for node in sorted(set(spans) | set(half)):
        seq = sorted(spans.get(node, []), key=lambda t: _start(t, node))
        run = NodeRun(node, [t.test for t in seq])
        run.verdict.unread += half.get(node, [])
        untimed = [t.test for t in seq if t.before[node].taken is None]
        if untimed and len(seq) > 1:
            run.verdict.unread.append(f"{node}: snapshots without a time ({', '.join(untimed)}): "
                                      "the order of its tests is their completion time")
        if seq:
            diff = difference(seq[0].before[node], seq[-1].after[node], during="the run")
            in_gaps = _gap_downs(node, seq)
            told = Difference(node, [ch for ch in diff.changes if not (
                kind_of(ch.counter.name) == LINK and in_gaps.get(ch.counter.key, 0)
                >= downs(ch.counter.name, ch.before, ch.after))], diff.unknown)
            allowance = thresholds.times(2 * len(seq) - 1)
            verdict = _judged(told, allowance, "the run")
            verdict.unread = run.verdict.unread + verdict.unread
            run.verdict, run.changes = verdict, [c for c in diff.changes if c.increase]
        for prev, nxt in zip(seq, seq[1:], strict=False):
            during = f"no test (between {prev.test} and {nxt.test})"
            gap = difference(prev.after[node], nxt.before[node], during=during)
            between = _judged(gap, thresholds, during)
            run.between += between.failures
            run.verdict.unread += between.unread
        out.append(run)
    return out

"""What a run's failures share: a node, a switch or an uplink, with the evidence.

A failed pair test says "node03 or node01", a failed bisection names no node; together they
often do. Each test case implicates the nodes its job ran on (ReFrame's ``job_nodelist``) or,
where its figures name links (txrx's ``stream_<tx>_to_<rx>_gbps``) and some of those failed,
the ends of the failing links only. With a topology, a case also implicates the leaf switch of
each of its nodes and every uplink (switch to parent) a run between them crosses. Each element
is counted over the failed and the passing cases; the suspect is the element every failure
shares and the fewest passing cases involve (a node before an uplink before a switch when
they tie: the narrowest explanation). When no element is in every failure, the smallest set
that covers them is named (greedy, elements in no passing case), and when no such element is
in two failures, they share nothing.

Pure: takes test-case dicts (a run report's ``testcases``) or figures, returns lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations

from ..parsers.topology import Topology

_LINK = re.compile(r"^stream_(\w+?)_to_(\w+)_gbps$")
_RANK_SUFFIX = re.compile(r"_[tr]x\d+$")  # txrx adds _tx<t> where ranks share a host
_KIND_ORDER = {"node": 0, "uplink": 1, "switch": 2}


@dataclass
class Case:
    """One test case of the run: its name, whether it failed, what it implicates."""

    name: str
    failed: bool
    nodes: list[str] = field(default_factory=list)
    #: links (tx, rx) its figures name; failing: those whose own figure failed
    links: list[tuple[str, str]] = field(default_factory=list)
    failing_links: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Element:
    kind: str  # node | switch | uplink
    name: str
    failed: list[str]  # names of the failed cases involving it
    passed: list[str]

    @property
    def label(self) -> str:
        return self.name if self.kind == "node" else f"{self.kind} {self.name}"

    def evidence(self, n_failed: int, n_passed: int) -> str:
        return (f"{self.label}: in {len(self.failed)} of {n_failed} failed cases "
                f"({', '.join(self.failed)}), in {len(self.passed)} of {n_passed} passing")


@dataclass
class Attribution:
    status: int  # 0 nothing failed, 1 failures (attributed or not)
    lines: list[str]
    suspects: list[Element] = field(default_factory=list)
    failed: int = 0
    passed: int = 0

    def to_dict(self) -> dict:
        return {"status": self.status, "failed": self.failed, "passed": self.passed,
                "verdict": self.lines[0] if self.lines else "",
                "lines": self.lines,
                "suspects": [{"kind": e.kind, "name": e.name, "failed": e.failed,
                              "passed": e.passed} for e in self.suspects]}


def link_of(pvar: str) -> tuple[str, str] | None:
    """(tx host, rx host) of a per-link figure name, else None."""
    m = _LINK.match(pvar)
    if not m:
        return None
    return _RANK_SUFFIX.sub("", m.group(1)), _RANK_SUFFIX.sub("", m.group(2))


def case_name(tc: dict) -> str:
    name = tc.get("display_name") or tc.get("name") or "?"
    where = ":".join(x for x in (tc.get("system"), tc.get("partition")) if x)
    return f"{name} on {where}" if where else name


def cases_from_testcases(testcases: Iterable[dict]) -> list[Case]:
    """Cases of a run report's test cases: the last run of each (retries), pass or fail only
    (a skipped or aborted case ran nothing to implicate)."""
    last: dict[tuple, dict] = {}
    for tc in testcases:
        if isinstance(tc, dict):
            last[(tc.get("name"), tc.get("display_name"), tc.get("system"), tc.get("partition"),
                  tc.get("environ"))] = tc
    out = []
    for tc in last.values():
        result = tc.get("result")
        if result not in ("pass", "fail"):
            continue
        case = Case(case_name(tc), result == "fail",
                    nodes=[str(n) for n in tc.get("job_nodelist") or tc.get("nodelist") or []])
        perfvalues = tc.get("perfvalues") if isinstance(tc.get("perfvalues"), dict) else {}
        for key, pv in perfvalues.items():
            link = link_of(str(key).split(":")[-1])
            if link is None:
                continue
            case.links.append(link)
            if isinstance(pv, list) and len(pv) > 5 and pv[5] == "fail":
                case.failing_links.append(link)
        out.append(case)
    return out


def cases_from_records(records) -> list[Case]:
    """Cases of perflog figures (no test-case list): one per test and job, failed when any
    of its figures failed; its nodes are those its figures name."""
    groups: dict[tuple, list] = {}
    for r in records:
        groups.setdefault((r.test, r.system, r.partition, r.environ, r.session), []).append(r)
    out = []
    for (test, system, partition, _env, _job), recs in groups.items():
        where = ":".join(x for x in (system, partition) if x)
        case = Case(f"{test} on {where}" if where else test,
                    any(r.result == "fail" for r in recs),
                    nodes=sorted({n for r in recs for n in r.nodes}))
        for r in recs:
            link = link_of(r.pvar)
            if link:
                case.links.append(link)
                if r.result == "fail":
                    case.failing_links.append(link)
        case.nodes = case.nodes or sorted({n for link in case.links for n in link})
        out.append(case)
    return out


def _uplink_name(child: str, parent: str) -> str:
    return f"{child}<->{parent}"


def implicated(case: Case, topo: Topology | None) -> set[tuple[str, str]]:
    """(kind, name) of every element the case involves."""
    if case.failed and case.failing_links:
        links = case.failing_links
        nodes = sorted({n for link in links for n in link})
    else:
        nodes = sorted(set(case.nodes) | {n for link in case.links for n in link})
        links = case.links or list(combinations(nodes, 2))
    out = {("node", n) for n in nodes}
    if topo is None:
        return out
    where = topo.switch_of()
    out |= {("switch", where[n]) for n in nodes if n in where}
    for a, b in links:
        if a in where and b in where:
            out |= {("uplink", _uplink_name(c, p)) for c, p in topo.route(a, b)}
    return out


def _elements(cases: list[Case], topo: Topology | None) -> list[Element]:
    by: dict[tuple[str, str], Element] = {}
    for case in cases:
        for kind, name in sorted(implicated(case, topo)):
            el = by.setdefault((kind, name), Element(kind, name, [], []))
            (el.failed if case.failed else el.passed).append(case.name)
    return list(by.values())


def _merge_twins(elements: list[Element]) -> list[Element]:
    """Uplinks crossed by exactly the same cases (the two uplinks between two leaves under one
    top switch) cannot be told apart: one element naming both."""
    out: list[Element] = []
    twins: dict[tuple, Element] = {}
    for el in elements:
        if el.kind != "uplink":
            out.append(el)
            continue
        key = (tuple(el.failed), tuple(el.passed))
        if key in twins:
            twins[key].name += f" or {el.name}"
        else:
            twins[key] = el
            out.append(el)
    return out


def _rank(el: Element):
    return (len(el.passed), _KIND_ORDER[el.kind], el.name)


def attribute(cases: list[Case], topo: Topology | None = None) -> Attribution:
    failed = [c for c in cases if c.failed]
    n_f, n_p = len(failed), len(cases) - len(failed)
    if not failed:
        return Attribution(0, [f"nothing failed ({n_p} passing cases)"], failed=0, passed=n_p)
    elements = _merge_twins(_elements(cases, topo))
    blind = [c.name for c in failed if not implicated(c, topo)]
    shared = sorted((e for e in elements if len(e.failed) == n_f), key=_rank)
    if shared:
        best = [e for e in shared if _rank(e)[:2] == _rank(shared[0])[:2]]
        weak = " (also in passing cases: a weak suspect)" if best[0].passed else ""
        lines = [f"suspect: {' and '.join(e.label for e in best)}: shared by all {n_f} "
                 f"failed cases{weak}"]
        lines += ["  " + e.evidence(n_f, n_p) for e in best]
        others = [e for e in shared if e not in best]
        if others:
            lines.append("  also shared, but less specific or in more passing cases: "
                         + "; ".join(f"{e.label} ({len(e.passed)} passing)" for e in others))
        return Attribution(1, lines, best, n_f, n_p)
    # no element in every failure: the fewest elements that cover them, each in 2 or more
    # failures and in no passing case (one a healthy case involved explains nothing here)
    uncovered = {c.name for c in failed} - set(blind)
    cover: list[Element] = []
    while uncovered:
        cands = [e for e in elements
                 if not e.passed and len(uncovered & set(e.failed)) >= 2]
        if not cands:
            break
        el = min(cands, key=lambda e: (-len(uncovered & set(e.failed)), *_rank(e)))
        cover.append(el)
        uncovered -= set(el.failed)
    if not cover:
        lines = [f"the failures share nothing: no node, switch or uplink is in two of the "
                 f"{n_f} failed cases and in no passing one"]
        lines += [f"  {c.name}: {', '.join(sorted(n for _k, n in implicated(c, topo))) or '?'}"
                  for c in failed]
    else:
        covered = n_f - len(uncovered) - len(blind)
        lines = [f"suspects: {' and '.join(e.label for e in cover)}: no one element is in all "
                 f"{n_f} failed cases; these cover {covered} of them"]
        lines += ["  " + e.evidence(n_f, n_p) for e in cover]
        if uncovered:
            lines.append(f"  not explained: {', '.join(sorted(uncovered))}")
    if blind:
        lines.append(f"  no node known for: {', '.join(blind)}")
    return Attribution(1, lines, cover, n_f, n_p)

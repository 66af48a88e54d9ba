"""What a run's failures share: a node, a switch or an uplink, with the evidence.

A failed pair test says "node03 or node01", a failed bisection names no node; together they
often do. Each test case implicates the nodes its job ran on (ReFrame's ``job_nodelist``) or,
where its figures name links (txrx's ``stream_<tx>_to_<rx>_gbps``) and some of those failed,
the ends of the failing links only. With a topology, a case also implicates the leaf switch of
each of its nodes (a dragonfly's group too) and every link a run between them crosses
(parsers/topology_model.py: a tree's uplinks, a fat tree's leaf-spine links, or the bundle of a
leaf's uplinks when the routing is not known, a dragonfly's local and global links or a group
pair's global links, the links between two blocks). Each element is counted over the failed
and the passing cases; the suspect is the element every failure shares and the fewest passing
cases involve (a node before a link before a bundle before a switch when they tie: the
narrowest explanation). When no element is in every failure, the smallest set that covers them
is named (greedy, elements in no passing case), and when no such element is in two failures,
they share nothing.

Memory and time are linear in nodes x cases: a case of many nodes without per-link figures
implicates the links some pair of its nodes crosses, found by route class and cached across
the cases (attribute_hops.py), never per node pair (20,000 nodes in well under 1 GiB).

Pure: takes test-case dicts (a run report's ``testcases``) or figures, returns lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.hostlists import expand
from fabrictest.parsers.topology import Hop, Topology
from fabrictest.report.attribute.hops import HopFinder

_LINK = re.compile(r"^stream_(\w+?)_to_(\w+)_gbps$")
_RANK_SUFFIX = re.compile(r"_[tr]x\d+$")  # txrx adds _tx<t> where ranks share a host
_KIND_ORDER = {"node": 0, "uplink": 1, "local": 1, "global": 1, "uplinks": 2, "globals": 2,
               "blocks": 2, "switch": 3, "block": 3, "group": 4}
_LINKS = ("uplink", "local", "global")
SHOWN = 12  # names listed per case in "the failures share nothing"


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
    kind: str  # node | switch | block | group | a Hop's kind (uplink, local, global, bundles)
    name: str
    failed: list[str]  # names of the failed cases involving it
    passed: list[str]
    text: str = ""  # how a bundle is said ("the uplinks of leaf s0 (4 links; ...)")

    @property
    def label(self) -> str:
        if self.text:
            return self.text
        if self.kind in ("local", "global"):
            return f"{self.kind} link {self.name}"
        return self.name if self.kind == "node" else f"{self.kind} {self.name}"

    def evidence(self, n_failed: int, n_passed: int) -> str:
        return (f"{self.label}: in {len(self.failed)} of {n_failed} failed cases "
                f"({_listed(self.failed)}), in {len(self.passed)} of {n_passed} passing")


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


class CaseError(ValueError):
    """A test case of the wrong shape (one line)."""


def case_name(tc: dict) -> str:
    name = tc.get("display_name") or tc.get("name") or "?"
    where = ":".join(x for x in (tc.get("system"), tc.get("partition")) if x)
    return f"{name} on {where}" if where else name


def _check_case(i: int, tc) -> None:
    """A run report's test case as ReFrame writes it, or CaseError naming what is not."""
    if not isinstance(tc, dict):
        raise CaseError(f"test case {i} is a {type(tc).__name__}, not a mapping")
    for key in ("name", "display_name", "system", "partition", "environ", "result"):
        if tc.get(key) is not None and not isinstance(tc[key], str):
            raise CaseError(f"test case {i}: {key} is a {type(tc[key]).__name__}, not a string")
    nodes = tc.get("job_nodelist") or tc.get("nodelist")
    if nodes is not None and not isinstance(nodes, (list, str)):
        raise CaseError(f"test case {i}: its node list is a {type(nodes).__name__}, not a list")
    if isinstance(nodes, list) and not all(isinstance(n, str) for n in nodes):
        raise CaseError(f"test case {i}: its node list holds a name that is not a string")
    if tc.get("perfvalues") is not None and not isinstance(tc["perfvalues"], dict):
        raise CaseError(f"test case {i}: perfvalues is a {type(tc['perfvalues']).__name__}, "
                        "not a mapping")


def _nodes_of(i: int, tc: dict) -> list[str]:
    nodes = tc.get("job_nodelist") or tc.get("nodelist") or []
    if isinstance(nodes, str):  # a Slurm hostlist
        try:
            return expand(nodes, f"test case {i}: node list")
        except ParseError as err:
            raise CaseError(str(err)) from None
    return list(nodes)


def cases_from_testcases(testcases: Iterable[dict]) -> list[Case]:
    """Cases of a run report's test cases: the last run of each (retries), pass or fail only
    (a skipped or aborted case ran nothing to implicate); CaseError for a test case of the
    wrong shape (never silently left out)."""
    last: dict[tuple, tuple[int, dict]] = {}
    for i, tc in enumerate(testcases):
        _check_case(i, tc)
        last[(tc.get("name"), tc.get("display_name"), tc.get("system"), tc.get("partition"),
              tc.get("environ"))] = (i, tc)
    out = []
    for i, tc in last.values():
        result = tc.get("result")
        if result not in ("pass", "fail"):
            continue
        case = Case(case_name(tc), result == "fail", nodes=_nodes_of(i, tc))
        perfvalues = tc.get("perfvalues") or {}
        for key, pv in perfvalues.items():
            link = link_of(str(key).split(":")[-1])
            if link is None:
                continue
            case.links.append(link)
            if isinstance(pv, list) and len(pv) > 5 and pv[5] == "fail":
                case.failing_links.append(link)
        out.append(case)
    return out


def cases_from_sweep(data) -> list[Case]:
    """Cases of a `fabric-sweep --json` file: each measured run (a sends to b) is a case of
    its one link, failed when it gave no figure or a figure below the sweep's own cut (the
    level it names nodes against); CaseError for a file of another shape."""
    if not isinstance(data, dict) or data.get("kind") != "fabrictest-sweep":
        raise CaseError("not a fabric-sweep JSON file (no \"kind\": \"fabrictest-sweep\")")
    level = data.get("level")
    runs = data.get("pairs")
    if not isinstance(level, dict) or not isinstance(runs, list):
        raise CaseError("a fabric-sweep file without its level or its runs")
    cut = level.get("cut_limit")
    if not isinstance(cut, (int, float)) or isinstance(cut, bool) or not cut > 0:
        raise CaseError(f"the sweep's cut ({cut!r}) is not a positive figure")
    out = []
    for i, run in enumerate(runs):
        if not isinstance(run, dict) or not all(isinstance(run.get(k), str)
                                                for k in ("src", "dst", "status")):
            raise CaseError(f"run {i} is not a mapping of src, dst and status")
        value = run.get("value")
        good = (run["status"] == "ok" and isinstance(value, (int, float))
                and not isinstance(value, bool) and value >= cut)
        link = (run["src"], run["dst"])
        out.append(Case(f"run {run['src']}->{run['dst']} (round {run.get('round', '?')})",
                        not good, nodes=list(link), links=[link],
                        failing_links=[] if good else [link]))
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


def _hops(case: Case, hops: HopFinder, nodes: list[str]) -> set[Hop]:
    """The links the case's runs cross: those of its (failing) links when its figures name
    them, else those some pair of its nodes crosses (linear in its nodes)."""
    where = hops.where
    links = case.failing_links if case.failed and case.failing_links else case.links
    if links:
        return {h for a, b in links if a in where and b in where for h in hops.route(a, b)}
    return hops.elements(nodes)


def implicated(case: Case, topo: Topology | None,
               hops: HopFinder | None = None) -> set[tuple[str, str, str]]:
    """(kind, name, how it is said) of every element the case involves (`hops`: the routes
    found for earlier cases of the same topology)."""
    if case.failed and case.failing_links:
        nodes = sorted({n for link in case.failing_links for n in link})
    else:
        nodes = sorted(set(case.nodes) | {n for link in case.links for n in link})
    out = {("node", n, "") for n in nodes}
    if topo is None:
        return out
    where = topo.switch_of()
    leaf_kind = "block" if topo.shape == "blocks" else "switch"
    leaves = {where[n] for n in nodes if n in where}
    out |= {(leaf_kind, s, "") for s in leaves}
    if topo.shape == "dragonfly":
        out |= {("group", topo.group_of(s), "") for s in leaves}
    hops = hops if hops is not None else HopFinder(topo)
    out |= {(h.kind, h.name, "" if h.kind in _LINKS else h.label)
            for h in _hops(case, hops, nodes)}
    return out


def _elements(cases: list[Case], topo: Topology | None,
              hops: HopFinder | None) -> list[Element]:
    by: dict[tuple[str, str], Element] = {}
    for case in cases:
        for kind, name, text in sorted(implicated(case, topo, hops)):
            el = by.setdefault((kind, name), Element(kind, name, [], [], text))
            (el.failed if case.failed else el.passed).append(case.name)
    return list(by.values())


def _merge_twins(elements: list[Element]) -> list[Element]:
    """Links of one kind crossed by exactly the same cases (the two uplinks between two
    leaves under one top switch, a leaf-spine link and the spine's link down to the other
    leaf) cannot be told apart: one element naming both."""
    out: list[Element] = []
    twins: dict[tuple, Element] = {}
    for el in elements:
        if el.kind not in _LINKS:
            out.append(el)
            continue
        key = (el.kind, tuple(el.failed), tuple(el.passed))
        if key in twins:
            twins[key].name += f" or {el.name}"
        else:
            twins[key] = el
            out.append(el)
    return out


def _returning_over(cases: list[Case], el: Element, hops: HopFinder | None) -> list[str]:
    """The failed one-way runs (a sweep's cases: one link each) whose reverse route crosses
    the link `el` (or one of its twins): a TCP stream's acknowledgements come back that way,
    and behind another run's stream over a slow link they slow it (vcluster, 2026-12-03:
    node05->node02 at 0.73x, its forward route clear of leaf1<->spine1). The sweep credits
    the same reverse route (sweep/link_runs.py `reverse_crossing`)."""
    if hops is None or el.kind not in _LINKS:
        return []
    names = set(el.name.split(" or "))
    out = []
    for case in cases:
        links = case.failing_links or case.links
        if len(links) != 1:
            continue
        a, b = links[0]
        if a in hops.where and b in hops.where and any(
                h.kind == el.kind and h.name in names for h in hops.route(b, a)):
            out.append(case.name)
    return sorted(out)


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN]) or "?"
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _rank(el: Element):
    return (len(el.passed), _KIND_ORDER[el.kind], el.name)


def _clean_instead(elements: list[Element], shared: list[Element], n_f: int):
    """When every element all failures share is also in passing cases (a weak suspect), the
    element in no passing case that is in the most failures, if that is at least half of them
    (and 2): a slow link whose runs all failed, beside runs that failed for another reason (on
    the vcluster: runs whose acknowledgements queue behind the slow link's traffic)."""
    if not shared or not shared[0].passed or n_f < 3:
        return None
    need = max(2, (n_f + 1) // 2)
    cands = [e for e in elements if not e.passed and len(e.failed) >= need]
    return min(cands, key=lambda e: (-len(e.failed), *_rank(e))) if cands else None


def attribute(cases: list[Case], topo: Topology | None = None) -> Attribution:
    failed = [c for c in cases if c.failed]
    n_f, n_p = len(failed), len(cases) - len(failed)
    if not failed:
        return Attribution(0, [f"nothing failed ({n_p} passing cases)"], failed=0, passed=n_p)
    hops = None if topo is None else HopFinder(topo)  # routes by class, across the cases
    elements = _merge_twins(_elements(cases, topo, hops))
    blind = [c.name for c in failed if not (c.nodes or c.links)]
    shared = sorted((e for e in elements if len(e.failed) == n_f), key=_rank)
    clean = _clean_instead(elements, shared, n_f)
    if clean is not None:  # a weak shared suspect, a clean one that explains nearly all
        left = [c for c in failed if c.name not in set(clean.failed)]
        back = _returning_over(left, clean, hops)
        lines = [f"suspect: {clean.label}: in {len(clean.failed)} of {n_f} failed cases and "
                 "in no passing one", "  " + clean.evidence(n_f, n_p)]
        if back:
            lines.append(f"  its return route crosses it: {_listed(back)} (a stream's "
                         "acknowledgements queue behind the slow link's traffic)")
        rest = sorted(c.name for c in left if c.name not in set(back))
        if rest:
            lines.append(f"  not explained: {_listed(rest)}")
        lines.append("  shared by all, but in passing cases: "
                     + "; ".join(f"{e.label} ({len(e.passed)} passing)" for e in shared[:SHOWN]))
        return Attribution(1, lines, [clean], n_f, n_p)
    if shared and shared[0].passed and n_f == 1:  # one failure, all it touched passed too
        lines = [f"one failed case ({failed[0].name}), and every node, switch and link it "
                 f"involves passed in other cases: nothing to name from one failure"]
        lines.append("  in passing cases too: " + "; ".join(
            f"{e.label} ({len(e.passed)} passing)" for e in shared[:SHOWN]))
        return Attribution(1, lines, [], n_f, n_p)
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
        lines += [f"  {c.name}: {_listed(sorted(n for _k, n, _t in implicated(c, topo)))}"
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

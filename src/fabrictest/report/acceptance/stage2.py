"""Stage 2 of the acceptance: performance per edge, local and global node set and bisection,
as ratios to the references; congestion impact; the node-pair sweep's suspects.

Every figure with a reference is its ratio to that reference (:mod:`fabrictest.report.compare.ratios`: 1 is the
reference, the band ReFrame judged it with is [1 + lower, 1 + upper]), grouped by the node set
of its test case, as the Slingshot acceptance notes scope their tests:

* ``edge``: nodes on one switch; ``local``: nodes in one group (a dragonfly group, the switch
  below the top); ``global``: nodes in different groups: from the test's own scope
  (``OsuMbwMrTest %scope=switch|group|global``) or, with a topology (``--topology``), from
  where its nodes hang;
* ``bisection`` (``BisectionTest``), ``congestion`` (``CongestionTest``, GPCNeT's load test);
* ``within a node`` (a test on one node) and ``between nodes`` (no topology to place them).

The evidence rule of ``compare``: nothing is called failed without evidence. A figure fails
only outside its reference band (or when ReFrame failed it against its reference); a test case
fails only when ReFrame failed it. What failed is named by what the failures share
(:mod:`fabrictest.report.attribute.failures`: the node, switch or uplink every failed case involves and the fewest
passing ones do), a global failure that names no node by its group pair, and the sweep by its
own suspects. A figure without a reference is not judged (the stage is then incomplete unless
the test declares it informational).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fabrictest.parsers.topology import Topology
from fabrictest.report.acceptance.cases import label
from fabrictest.report.acceptance.evidence import case_gaps
from fabrictest.report.acceptance.figures import disagreements, judges, refuse_bands
from fabrictest.report.acceptance.verdict import Finding, Stage, status_of
from fabrictest.report.attribute.failures import CaseError, attribute, cases_from_testcases
from fabrictest.report.attribute.impact import impact_rows
from fabrictest.report.compare.ratios import RatioRow, ratio_rows
from fabrictest.report.records.results import PerfRecord, ResultsError, params_of
from fabrictest.report.records.units import fmt
from fabrictest.report.records.words import counted

SETS = ("edge", "local", "global", "bisection", "congestion", "within a node",
        "between nodes")
_SCOPES = {"switch": "edge", "group": "local", "global": "global"}
_CONGESTION = ("CongestionTest", "GpcnetLoadTest", "GpcnetTest")


def is_counter_figure(pvar: str) -> bool:
    """The congestion counters of each node (``counters_<node>_<counter>``): stage 3's."""
    return pvar.startswith("counters_")


def group_of(topo: Topology, leaf: str) -> str:
    """A leaf switch's group: the switch just below the top (a leaf under the top is its own
    group), as the node sets are derived (:mod:`fabrictest.parsers.node_sets`)."""
    path = topo.path(leaf)
    return path[-2] if len(path) >= 2 else path[-1]


def set_of(base: str, params: dict, nodes: Sequence[str], topo: Topology | None) -> str:
    if base == "BisectionTest":
        return "bisection"
    if base in _CONGESTION:
        return "congestion"
    if params.get("scope") in _SCOPES:
        return _SCOPES[params["scope"]]
    distinct = sorted(set(nodes))
    if len(distinct) <= 1:
        return "within a node"
    where = topo.switch_of() if topo else {}
    if not topo or any(n not in where for n in distinct):
        return "between nodes"
    leaves = {where[n] for n in distinct}
    if len(leaves) == 1:
        return "edge"
    return "local" if len({group_of(topo, s) for s in leaves}) == 1 else "global"


def planned_sets(topo: Topology, nodes: set[str]) -> dict[str, str]:
    """The node sets the topology makes of the run's nodes, each with why: ``edge`` where a
    switch holds two of them, ``local`` where a group holds two switches with them,
    ``global`` where two groups hold them."""
    where = topo.switch_of()
    leaves: dict[str, set[str]] = {}
    for n in nodes:
        if n in where:
            leaves.setdefault(where[n], set()).add(n)
    groups: dict[str, set[str]] = {}
    for leaf in leaves:
        groups.setdefault(group_of(topo, leaf), set()).add(leaf)
    out = {}
    edge = [s for s, ns in sorted(leaves.items()) if len(ns) >= 2]
    if edge:
        out["edge"] = f"switch {edge[0]} holds {len(leaves[edge[0]])} of the run's nodes"
    local = [g for g, ls in sorted(groups.items()) if len(ls) >= 2]
    if local:
        out["local"] = f"group {local[0]} holds {len(groups[local[0]])} switches with them"
    if len(groups) >= 2:
        out["global"] = f"{len(groups)} groups hold them"
    return out


def _ratio_dict(r: RatioRow, set_name: str) -> dict:
    lo, hi = r.band
    return {"set": set_name, "test": r.test, "system": r.sysenv, "nodes": r.nodes,
            "figure": r.pvar, "unit": r.unit, "value": r.value, "reference": r.ref,
            "band": [lo, hi], "ratio": r.ratio, "failing": r.failing,
            "judges": judges(r.lower, r.upper)}


def set_summary(rows: list[dict]) -> list[dict]:
    """Per node set: figures judged, failing, and the worst ratio (farthest from 1)."""
    out = []
    for s in SETS:
        mine = [r for r in rows if r["set"] == s]
        if not mine:
            continue
        worst = max(mine, key=lambda r: abs(math.log(r["ratio"])) if r["ratio"] > 0
                    else math.inf)
        out.append({"set": s, "figures": len(mine),
                    "failing": sum(r["failing"] for r in mine),
                    "loose": sum(not r["judges"] for r in mine),
                    "worst": f"{worst['test']} {worst['figure']}", "worst_ratio": worst["ratio"],
                    "min_ratio": min(r["ratio"] for r in mine),
                    "max_ratio": max(r["ratio"] for r in mine)})
    return out


def _reason(tc: dict) -> str:
    why = " ".join(str(tc.get("fail_reason") or "no reason recorded").split())
    return why if len(why) <= 300 else why[:297] + "..."


def _group_pair(tcs: list[dict], topo: Topology) -> str | None:
    """The one pair of groups every failed global case spans, or None."""
    where = topo.switch_of()
    pairs = set()
    for tc in tcs:
        groups = sorted({group_of(topo, where[n]) for n in tc.get("job_nodelist") or []
                         if n in where})
        if len(groups) != 2:
            return None
        pairs.add(f"{groups[0]}<->{groups[1]}")
    return pairs.pop() if len(pairs) == 1 else None


#: the kind of a sweep suspect that is a link between switches (its `node` is the link's
#: label, `uplink sw2<->top`): named from the sweep's `uplinks`, never as a node
LINK_SUSPECT = "uplink"


def node_suspects(data: dict) -> list[dict]:
    """The sweep's suspects that are nodes (not the links between switches it named)."""
    return [s for s in data.get("suspects") or []
            if isinstance(s, dict) and s.get("kind") != LINK_SUSPECT]


def sweep_measured(sweeps: list[tuple[str, dict]]) -> tuple[dict[str, str], set[str]]:
    """What the sweeps measured of each node: (node -> the line naming it, for the nodes a
    sweep named; the nodes a sweep measured healthy both ways)."""
    named, healthy = {}, set()
    for _label, data in sweeps:
        for s in node_suspects(data):
            if s.get("node"):
                named[str(s["node"])] = str(s.get("line") or s.get("kind") or "suspect")
        for row in data.get("nodes_table") or []:
            if isinstance(row, dict) and row.get("status") == "ok" and row.get("node"):
                healthy.add(str(row["node"]))
    return named, healthy - set(named)


def _attributed(testcases: list[dict], topo: Topology | None, sets: dict[str, str],
                sweeps: list[tuple[str, dict]]) -> tuple[list[Finding], list[str], list[dict]]:
    """Findings from the failed test cases: what they share, then each failure nothing
    explains; the attribution's lines; the failed cases.

    A node that a sweep measured directly beats a node inferred from which cases failed
    together: an attribution suspect the sweep measured healthy both ways is not named (the
    lines say so), and a failure that involves a node the sweep named is explained by it."""
    try:
        cases = cases_from_testcases(testcases)
    except CaseError as err:
        raise ResultsError(f"the run's test cases: {err}") from None
    by_name = {label(tc): tc for tc in testcases}
    failed = [c for c in cases if c.failed]
    failed_rows = [{"test": c.name, "set": sets.get(c.name, ""), "nodes": c.nodes,
                    "failing_links": [f"{a}->{b}" for a, b in c.failing_links],
                    "reason": _reason(by_name.get(c.name, {}))} for c in failed]
    if not failed:
        return [], [], []
    result = attribute(cases, topo)
    lines = list(result.lines)
    sweep_named, sweep_healthy = sweep_measured(sweeps)
    findings, explained = [], set()
    for el in result.suspects:
        if el.kind == "node" and el.name in sweep_healthy:
            lines.append(f"  not named: {el.name} (in {len(el.failed)} of {result.failed} "
                         "failed cases) was measured healthy both ways by the sweep")
            continue
        findings.append(Finding(2, el.kind, el.name, el.evidence(result.failed, result.passed),
                                weak=bool(el.passed)))
        explained |= set(el.failed)
    by_sweep: dict[str, list[str]] = {}
    for c in failed:
        if c.name in explained:
            continue
        involved = sorted(set(c.nodes) & set(sweep_named)) or sorted(
            {n for link in c.failing_links for n in link} & set(sweep_named))
        for n in involved:
            by_sweep.setdefault(n, []).append(c.name)
        if not involved:
            findings.append(Finding(2, "test", c.name, f"{c.name} failed: "
                                    f"{_reason(by_name.get(c.name, {}))}"))
    for n, names in sorted(by_sweep.items()):
        findings.append(Finding(2, "node", n, f"in {len(names)} of {len(failed)} failed test "
                                f"cases ({'; '.join(names)}), which the sweep's suspect "
                                "explains"))
    if topo is not None and not any(f.kind == "node" for f in findings):
        glob = [by_name[c.name] for c in failed if sets.get(c.name) == "global"
                and c.name in by_name]
        pair = _group_pair(glob, topo) if glob else None
        if pair:  # no node explains them: the links between the two groups are left
            findings.append(Finding(2, "group pair", pair, f"every failed global case "
                                    f"({len(glob)}) runs between {pair}; no node is shared"))
    return findings, lines, failed_rows


def _sweep(label_: str, data: dict) -> tuple[list[Finding], list[str], dict]:
    findings, gaps = [], []
    suspects = node_suspects(data)
    for s in suspects:
        node = str(s.get("node") or "?")
        findings.append(Finding(2, "node", node, f"the sweep: "
                                f"{s.get('line') or s.get('kind') or 'suspect'}"))
    link_lines = {str(s.get("node")): str(s.get("line") or "") for s in data.get("suspects") or []
                  if isinstance(s, dict) and s.get("kind") == LINK_SUSPECT}
    for u in data.get("uplinks") or []:
        if isinstance(u, dict) and u.get("suspect"):
            said = link_lines.get(str(u.get("label") or ""))
            findings.append(Finding(2, "uplink", str(u.get("name")), "the sweep: " + (
                said or f"{u.get('slow')}/{u.get('crossing')} crossing runs slow")))
    verdict = [str(x) for x in data.get("verdict") or []]
    if data.get("healthy") is False and not findings:
        findings.append(Finding(2, "test", f"sweep {label_}",
                                f"sweep {label_}: {verdict[0] if verdict else 'not healthy'}"))
    if data.get("interrupted"):
        gaps.append(f"sweep {label_}: interrupted before its verdict was whole")
    if data.get("level_unjudged"):
        gaps.append(f"sweep {label_}: level unjudged: {data['level_unjudged']}")
    drained = [str(s.get("node")) for s in suspects if s.get("node")]
    return findings, gaps, {"label": label_, "healthy": data.get("healthy"),
                            "nodes": len(data.get("nodes") or []), "verdict": verdict,
                            "suspects": [str(s.get("line") or s.get("node")) for s in
                                         data.get("suspects") or [] if isinstance(s, dict)],
                            "drain": drained}


def stage2(records: Sequence[PerfRecord], testcases: list[dict], topo: Topology | None,
           sweeps: list[tuple[str, dict]], left_out: dict[str, str] | None = None,
           missing: Sequence[str] = ()) -> Stage:
    """``records``/``testcases``: the performance stage's (no health, sweep or build case);
    ``sweeps``: (label, fabric-sweep JSON); ``left_out``: nodes stage 1 kept out of it;
    ``missing``: what the history says the run lacks (:mod:`.absent`), gaps of the stage."""
    refuse_bands(records)
    perf = [r for r in records if not is_counter_figure(r.pvar)]
    sets: dict[tuple, str] = {}
    for r in perf:  # once per test case, not per figure: a case's nodes are its figures'
        key = (r.test, r.sysenv, r.nodes_expr)
        if key not in sets:
            sets[key] = set_of(r.base, r.params, r.nodes, topo)
    case_sets = {}
    for tc in testcases:
        name = str(tc.get("display_name") or tc.get("name") or "")
        nodes = tc.get("job_nodelist") if isinstance(tc.get("job_nodelist"), list) else []
        case_sets[label(tc)] = set_of(name.split(" ")[0], params_of(name), nodes, topo)
    rows = [_ratio_dict(r, sets.get((r.test, r.sysenv, r.nodes), "between nodes"))
            for r in ratio_rows(perf)]
    rows.sort(key=lambda d: (SETS.index(d["set"]), not d["failing"], d["test"], d["figure"]))
    gaps, unjudged = case_gaps(testcases, perf)
    gaps += missing
    unreferenced = sorted({f"{r.test} {r.pvar}" for r in perf if r.ref is None
                           and r.value is not None and not r.informational})
    if unreferenced:
        gaps.append(f"{len(unreferenced)} figures have no reference (not judged): "
                    + ", ".join(unreferenced[:5]) + (" ..." if len(unreferenced) > 5 else ""))
    informational = sorted({f"{r.test} {r.pvar}" for r in perf if r.ref is None
                            and r.informational})
    # a case that was not judged (skipped, aborted, no reference) is no evidence either way
    judged_cases = [tc for tc in testcases if label(tc) not in unjudged]
    findings, attribution, failed = _attributed(judged_cases, topo, case_sets, sweeps)
    impact = [{"test": x.test, "system": x.system, "probe": x.probe,
               "isolated": x.isolated.value if x.isolated else None,
               "loaded": x.loaded.value if x.loaded else None,
               "impact": x.impact.value, "band": list(x.band()), "status": x.status()}
              for x in impact_rows(perf)]
    sweep_views, measured = [], []
    for lab, data in sweeps:  # a node measured directly comes before what is inferred
        f, g, view = _sweep(lab, data)
        measured += f
        gaps += g
        sweep_views.append(view)
    findings = measured + disagreements(perf) + findings
    if topo is not None:  # every node set the topology makes of the run's nodes is measured
        measured_sets = {r["set"] for r in rows} | {c["set"] for c in failed}
        used = {n for tc in judged_cases for n in tc.get("job_nodelist") or []}
        gaps += [f"no figures for the {s} node set ({why})"
                 for s, why in planned_sets(topo, used).items() if s not in measured_sets]
    judging = [r for r in rows if r["judges"]]
    loose = len(rows) - len(judging)
    judged = len(judging) + len(failed) + len(sweeps)
    n_fail = sum(r["failing"] for r in rows)
    loose_text = (f"; {counted(loose, 'figure')} with bands that judge nothing (not judged)" if loose
                  else "")
    if judged:
        summary = (f"{counted(len(judging), 'figure')} against "
                   f"{'its reference' if len(judging) == 1 else 'their references'} in "
                   f"{counted(len({r['set'] for r in judging}), 'node set')}: "
                   + (f"{n_fail} outside their band" if n_fail else "all within their band")
                   + loose_text
                   + (f"; {counted(len(failed), 'test case')} failed" if failed else "")
                   + (f"; {counted(len(sweeps), 'sweep')}" if sweeps else ""))
    elif rows or informational:  # a stage whose only figures judge nothing cannot pass
        parts = ([f"{len(informational)} informational (no reference by design)"]
                 if informational else []) + (
            [f"{loose} with bands that judge nothing"] if loose else [])
        summary = "not judged: its only figures are " + " and ".join(parts)
    else:
        summary = "no performance test case and no sweep in these runs"
    return Stage(2, status_of(judged, findings, gaps), summary, findings, gaps, {
        "sets": set_summary(rows), "figures": rows, "failed_cases": failed,
        "attribution": attribution, "informational": informational, "impact": impact,
        "sweeps": sweep_views,
        "left_out": [{"node": n, "why": w} for n, w in sorted((left_out or {}).items())],
        "topology": _topology_view(topo)})


def _topology_view(topo: Topology | None) -> list[dict]:
    if topo is None:
        return []
    return [{"switch": s.name, "parent": s.parent, "nodes": list(s.nodes)}
            for s in topo.switches.values()]


def describe_row(r: dict) -> str:
    """A figure row in one line (the JSON twin and the plain-text output)."""
    return (f"{r['test']} {r['figure']} {fmt(r['value'])} {r['unit']} / reference "
            f"{fmt(r['reference'])} = {r['ratio']:.3f}")


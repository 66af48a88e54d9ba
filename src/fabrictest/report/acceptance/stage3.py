"""Stage 3 of the acceptance: the diagnostics during the benchmarks (the Slingshot acceptance
notes' link flaps, cable errors and congestion), over the whole run.

The counters of every node from its first snapshot (before any test touched it) to its last
(after the last test), and what happened between two tests, when no test's own check was
looking: ``fabric-report counters``' whole-run view (:mod:`fabrictest.report.counters.runs`,
:mod:`fabrictest.counters.whole_run`), judged with the system's thresholds. A link that went
down, or an error counter over its threshold, names the node's link; a counter that could not
be read or compared leaves the stage incomplete. The congestion counters per node and test
(``counters_<node>_<counter>`` figures, e.g. TCP retransmissions) are shown beside it, and one
outside its reference band names its node.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabrictest.report.acceptance.evidence import missing_snapshots
from fabrictest.report.acceptance.verdict import Finding, Stage, status_of
from fabrictest.report.counters.figures import counter_figure
from fabrictest.report.counters.runs import changes_text, node_runs
from fabrictest.report.records.results import PerfRecord, ResultSet


def _findings(node: str, failures: list[str]) -> list[Finding]:
    """A node's failures as one element, its link, named with the places that failed
    (``node01 eth0, hsn0``: a fabric NIC on the same cable fails with it)."""
    places = []
    for text in failures:
        head = text.split(":", 1)[0].strip()
        place = head[len(node):].strip() if head.startswith(node + " ") else "?"
        if place not in places:
            places.append(place)
    name = f"{node} {', '.join(places)}"
    # what only this view sees first: a link that went down while no test was looking
    ordered = sorted(failures, key=lambda t: "during no test" not in t)
    return [Finding(3, "link", name, text) for text in ordered]


def _counter_figures(records: Sequence[PerfRecord]) -> tuple[list[dict], list[Finding]]:
    rows, findings = [], []
    for r in records:
        where = counter_figure(r.pvar)
        if where is None or r.value is None:
            continue
        lo, hi = r.band()
        failing = r.result == "fail" or (hi is not None and r.value > hi)
        rows.append({"node": where[0], "counter": where[1], "test": r.test,
                     "value": r.value, "unit": r.unit, "limit": hi, "failing": failing})
        if failing:
            findings.append(Finding(3, "node", where[0], f"{where[0]} {where[1]} rose by "
                                    f"{r.value:g} during {r.test} (at most {hi:g})"
                                    if hi is not None else f"{where[0]} {where[1]} "
                                    f"{r.value:g} failed in {r.test}"))
    return rows, findings


def stage3(res: ResultSet, records: Sequence[PerfRecord], ref_option: str | None) -> Stage:
    """``res``: the run's test cases (their snapshot directories); ``records``: the
    performance stage's figures (the congestion counters among them)."""
    runs, problems = node_runs(res, ref_option)
    findings: list[Finding] = []
    gaps = list(problems) + missing_snapshots(res.testcases)
    nodes = []
    for system, run in runs:
        findings += _findings(run.node, run.failures)
        gaps += [f"{system}:{u}" for u in run.unread]
        nodes.append({"system": system, "node": run.node, "tests": len(run.tests),
                      "changed": changes_text(run) or "", "failures": run.failures,
                      "unread": run.unread})
    figures, fig_findings = _counter_figures(records)
    findings += fig_findings
    down = sorted({f.name for f in findings if f.kind == "link"})
    if runs:
        summary = (f"{len(runs)} nodes' counters over the whole run: "
                   + (f"{len(findings)} failure{'s' * (len(findings) != 1)} "
                      f"({', '.join(down) or 'congestion'})"
                      if findings else "no link went down, no error over its threshold"))
    elif figures:
        summary = f"no counter snapshots; {len(figures)} congestion figures"
    else:
        summary = ("no counter snapshots in these runs (multi-node tests take them; their "
                   "output or stage directories must still exist)")
    if figures and not runs:
        gaps.append("no counter snapshots: links that went down and error counters over "
                    "the whole run cannot be judged")
    return Stage(3, status_of(len(runs) + len(figures), findings, gaps), summary, findings,
                 gaps, {"nodes": nodes, "congestion": figures})

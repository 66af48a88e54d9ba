"""Every node's counters over a whole suite run, from the snapshots its multi-node tests took
(kept in their output directories): read, judged per node (:mod:`fabrictest.counters.whole_run`),
as lines (``fabric-report counters``) and as a section of the html page."""

from __future__ import annotations

import sys
from pathlib import Path

from fabrictest.counters.files import read_phase, system_thresholds
from fabrictest.counters.snapshot import SNAPSHOT_DIR
from fabrictest.counters.thresholds import Thresholds
from fabrictest.counters.whole_run import CaseSnapshots, NodeRun, whole_run
from fabrictest.report.page.markup import escape
from fabrictest.report.records.results import ResultSet


def _read_phase(d, unread: list[str], label: str) -> dict:
    snaps, problems = read_phase(d)
    unread += [f"{label}: {why}" for why in problems]
    return snaps


def snapshots_of(testcases: list[dict]) -> tuple[dict[str, list[CaseSnapshots]], list[str]]:
    """system -> its tests' snapshots, and what could not be read. A test's snapshots are in
    its output directory (kept for a passing test) or its stage directory (a failed one)."""
    by_system: dict[str, list[CaseSnapshots]] = {}
    unread: list[str] = []
    seen = set()
    for tc in testcases:
        key = (tc.get("display_name"), tc.get("system"), tc.get("partition"),
               tc.get("job_completion_time_unix"))
        if key in seen:
            continue
        seen.add(key)
        label = str(tc.get("display_name") or tc.get("name") or "?")
        if tc.get("jobid"):  # two runs of one test are told apart by their jobs
            label += f" (job {tc['jobid']})"
        for d in (tc.get("outputdir"), tc.get("stagedir")):
            root = Path(d) / SNAPSHOT_DIR if d else None
            if root is None or not root.is_dir():
                continue
            before = _read_phase(root / "before", unread, label)
            after = _read_phase(root / "after", unread, label)
            when = tc.get("job_completion_time_unix")
            when = float(when) if isinstance(when, (int, float)) else 0.0
            by_system.setdefault(str(tc.get("system")), []).append(
                CaseSnapshots(label, before, after, when))
            break
    return by_system, unread


def node_runs(res: ResultSet, ref_option: str | None) -> tuple[list[tuple[str, NodeRun]], list[str]]:
    """(system, node's run) for every node of every system in the results, and the problems
    that are not a node's (unreadable files, a bad thresholds file)."""
    by_system, problems = snapshots_of(res.testcases)
    out = []
    for system, tests in sorted(by_system.items()):
        thresholds, problem, path = system_thresholds(system, ref_option)
        if problem:
            problems.append(problem)
            thresholds = Thresholds()
        elif not path.is_file():
            print(f"note: no {path}: every error counter increase fails", file=sys.stderr)
        out += [(system, run) for run in whole_run(tests, thresholds)]
    return out, problems


def changes_text(run: NodeRun) -> str:
    """``eth0 carrier_changes +2, tcp RetransSegs +4``: what changed on a node over the run."""
    return ", ".join(f"{c.counter.place} {c.counter.name} +{c.increase}" for c in run.changes)


def lines(runs: list[tuple[str, NodeRun]], problems: list[str]) -> list[str]:
    out = []
    for system, run in runs:
        changed = changes_text(run) or "no counter changed"
        n = len(run.tests)
        out.append(f"NODE {system}:{run.node}: {n} test{'s' * (n != 1)}; {changed}")
        out += [f"FAIL {system}:{f}" for f in run.failures]
        out += [f"UNREAD {system}:{u}" for u in run.unread]
    out += [f"UNREAD {p}" for p in problems]
    return out


def html_section(res: ResultSet, ref_option: str | None = None) -> str:
    """The whole run's counters per node for the html page; empty without snapshots."""
    runs, problems = node_runs(res, ref_option)
    if not runs:
        return ""
    e = escape
    rows = "".join(
        f"<tr><td>{e(s)}:{e(r.node)}</td><td class=num>{len(r.tests)}</td><td>"
        + (e(changes_text(r)) or "none")
        + "</td><td>" + e("; ".join(r.failures + r.unread) or "ok") + "</td></tr>"
        for s, r in runs)
    note = "".join(f"<p class=note>{e(p)}</p>" for p in problems)
    return ("<h2>Counters over the whole run</h2><p class=note>Each node from its first "
            "counter snapshot (before any test) to its last (after the last test): what "
            "changed, links that went down and errors over the system's thresholds, during "
            "the run or while no test ran (docs/counters.md).</p>" + note
            + "<table><tr><th>node</th><th>tests</th><th>changed</th><th>verdict</th></tr>"
            + rows + "</table>")

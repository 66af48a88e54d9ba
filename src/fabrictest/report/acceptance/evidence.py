"""Whether each stage's evidence is whole (pure but for listing the snapshot directories).

What a stage should have and has not makes it INCOMPLETE, naming what is missing, never
ACCEPTED:

* stage 1: every node has every check the other nodes ran (:func:`missing_checks`);
* stage 2: every performance test case ran (not skipped or aborted), gave figures, each with a
  value, and was judged: a case ReFrame failed only because the references hold no figure for
  it (``no reference for num_nodes=8``) was not judged, and is neither failed nor evidence
  against a node (:func:`case_gaps`);
* stage 3: every node of every multi-node test case has its counter snapshots before and after
  that test (:func:`missing_snapshots`; ``counters/{before,after}/<node>.json``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from fabrictest.counters.snapshot import SNAPSHOT_DIR
from fabrictest.report.acceptance.cases import label
from fabrictest.report.records.results import PerfRecord
from fabrictest.report.records.words import counted

#: how fabric_references words a figure the references file holds nothing for; a test case
#: whose failure says only this was not judged
NO_REFERENCE = "no reference for "
#: the hint that ends that failure (``-S missing_reference=warn``)
NO_REFERENCE_HINT = "missing_reference=warn"
#: how many names a gap lists before "..."
SHOWN = 8


def names(items: Sequence[str]) -> str:
    return ", ".join(items[:SHOWN]) + (f" ... ({len(items)} in all)" if len(items) > SHOWN
                                       else "")


def failed_for_no_reference(tc: dict) -> bool:
    """ReFrame failed the case only because the references hold no figure for it: its
    performance failure is fabric_references' missing-reference error and nothing else."""
    if tc.get("result") != "fail" or tc.get("fail_phase") not in (None, "performance"):
        return False
    why = " ".join(str(tc.get("fail_reason") or "").split())
    if NO_REFERENCE_HINT not in why:
        return False
    why = why.split(": ", 1)[1] if why.startswith("performance error: ") else why
    why = why.rsplit(" (use -S", 1)[0]
    return all(part.startswith(NO_REFERENCE) for part in why.split("; "))


def case_gaps(testcases: Sequence[dict], records: Sequence[PerfRecord]
              ) -> tuple[list[str], set[str]]:
    """(what keeps stage 2 from being whole, one line each; the labels of the test cases that
    were not judged: skipped, aborted or failed for a missing reference only)."""
    by_case: dict[tuple, list[PerfRecord]] = {}
    for r in records:
        by_case.setdefault((r.test, r.system, r.partition), []).append(r)
    gaps, unjudged = [], set()
    ran_nothing, no_figures, no_reference, null = [], [], [], []
    for tc in testcases:
        name = label(tc)
        result = tc.get("result")
        if result not in ("pass", "fail"):
            ran_nothing.append(f"{name} ({result or 'no result'})")
            unjudged.add(name)
            continue
        if failed_for_no_reference(tc):
            no_reference.append(f"{name} ({_short(tc.get('fail_reason'))})")
            unjudged.add(name)
        mine = by_case.get((str(tc.get("display_name") or tc.get("name") or ""),
                            tc.get("system") or "", tc.get("partition") or ""), [])
        if not tc.get("perfvalues"):
            no_figures.append(name)
        null += [f"{r.test} {r.pvar}" for r in mine if r.value is None]
    if ran_nothing:
        gaps.append(f"{len(ran_nothing)} test cases ran nothing to judge: {names(ran_nothing)}")
    if no_reference:
        gaps.append(f"{len(no_reference)} test cases not judged (failed only for a missing "
                    f"reference): {names(no_reference)}")
    if no_figures:
        gaps.append(f"{counted(len(no_figures), 'test case')} gave no figure: {names(no_figures)}")
    if null:
        gaps.append(f"{counted(len(null), 'figure')} {'has' if len(null) == 1 else 'have'} no value (null): {names(null)}")
    return gaps, unjudged


def _short(text, width: int = 160) -> str:
    why = " ".join(str(text or "").split())
    why = why.split(": ", 1)[1] if why.startswith("performance error: ") else why
    why = why.rsplit(" (use -S", 1)[0]
    return why if len(why) <= width else why[:width - 3] + "..."


def missing_checks(rows: Iterable[dict]) -> list[str]:
    """A node that lacks checks the other nodes ran (one line per node)."""
    by_node: dict[str, set[str]] = {}
    for r in rows:
        by_node.setdefault(r["node"], set()).add(r["check"])
    every = set().union(*by_node.values()) if by_node else set()
    out = []
    for node, checks in sorted(by_node.items()):
        lack = sorted(every - checks)
        if lack:
            out.append(f"{node}: {len(checks)} pre-flight checks where the nodes ran "
                       f"{len(every)}; no {names(lack)}")
    return out


def _stems(d: Path) -> set[str]:
    try:
        return {n[:-5] for n in os.listdir(d) if n.endswith(".json")}
    except OSError:
        return set()


def missing_snapshots(testcases: Sequence[dict]) -> list[str]:
    """Each multi-node test case that ran, and its nodes without counter snapshots before or
    after it (one line per case)."""
    out = []
    for tc in testcases:
        nodes = sorted(set(tc.get("job_nodelist") or []))
        if len(nodes) < 2 or tc.get("result") not in ("pass", "fail"):
            continue
        roots = [Path(d) / SNAPSHOT_DIR for d in (tc.get("outputdir"), tc.get("stagedir")) if d]
        root = next((r for r in roots if r.is_dir()), None)
        if root is None:
            out.append(f"{label(tc)}: no counter snapshots of its {len(nodes)} nodes")
            continue
        have = _stems(root / "before") & _stems(root / "after")
        lack = [n for n in nodes if n not in have]
        if lack:
            out.append(f"{label(tc)}: no counter snapshots before and after it of "
                       f"{names(lack)}")
    return out

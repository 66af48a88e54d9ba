"""The JSON twin of the acceptance page (``acceptance.json``, ``--json``), proportionate to the
run: every failure and everything missing in full, passing rows as counts.

A twin that held every row was 47 MB at 10,000 nodes (tests/report/acceptance_scale.py:
80,000 passing stage-1 rows, 31,679 figures within their band, 40,000 congestion counters
under their limit, the 10,000 names of each failed case's nodes, all indented). Here:

* stage 1: ``rows`` are the failing checks; ``passed``: the passing rows per check;
* stage 2: ``figures`` are the rows outside their band or whose band judges nothing;
  ``passed``: the figures within their band per test (``sets`` keeps each node set's count,
  worst and range); a failed case's ``nodes`` and a switch's (``topology``) are one Slurm
  hostlist expression;
* stage 3: ``nodes`` are the nodes with a failure or a counter not read; ``passed``: how many
  nodes had neither; ``congestion`` holds the failing counters, ``passed_congestion`` the rest
  per counter;
* ``rows_total`` per stage: how many rows each table had, listed or counted.

A stage's ``findings`` and ``gaps`` are never cut. Written indented while small, without
indentation above :data:`INDENT_BELOW` bytes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from fabrictest.parsers.hostlists import compress

#: a twin smaller than this (compact) is written indented, for a person to read
INDENT_BELOW = 1 << 20


def _split(rows: list[dict], listed: Callable[[dict], bool], key: str,
           ) -> tuple[list[dict], dict[str, int]]:
    """(the rows ``listed`` keeps, the others counted by ``key``)."""
    kept, passed = [], Counter()
    for r in rows:
        if listed(r):
            kept.append(r)
        else:
            passed[str(r.get(key))] += 1
    return kept, dict(sorted(passed.items()))


def _stage1(st: dict) -> dict:
    rows, passed = _split(st["rows"], lambda r: not r["ok"], "check")
    return {**st, "rows": rows, "passed": passed, "rows_total": {"rows": len(st["rows"])}}


def _stage2(st: dict) -> dict:
    figures, passed = _split(st["figures"], lambda r: r["failing"] or not r["judges"], "test")
    cases = [{**c, "nodes": compress(c["nodes"])} if isinstance(c.get("nodes"), list) else c
             for c in st["failed_cases"]]
    topology = [{**sw, "nodes": compress(sw["nodes"])} for sw in st["topology"]]
    return {**st, "figures": figures, "passed": passed, "failed_cases": cases,
            "topology": topology, "rows_total": {"figures": len(st["figures"])}}


def _stage3(st: dict) -> dict:
    nodes = [n for n in st["nodes"] if n["failures"] or n["unread"]]
    congestion, passed = _split(st["congestion"], lambda c: c["failing"], "counter")
    return {**st, "nodes": nodes, "passed": len(st["nodes"]) - len(nodes),
            "congestion": congestion, "passed_congestion": passed,
            "rows_total": {"nodes": len(st["nodes"]), "congestion": len(st["congestion"])}}


_BY_STAGE = {1: _stage1, 2: _stage2, 3: _stage3}


def proportionate(twin: dict) -> dict:
    """``twin`` with each stage's passing rows counted instead of listed."""
    return {**twin, "stages": [_BY_STAGE[st["stage"]](st) for st in twin["stages"]]}


def dumps(twin: dict) -> str:
    """The twin's text: indented while small, compact above INDENT_BELOW bytes."""
    text = json.dumps(twin, separators=(",", ":"), default=str)
    return (json.dumps(twin, indent=1, default=str) if len(text) < INDENT_BELOW else text) + "\n"

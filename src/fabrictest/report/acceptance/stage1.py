"""Stage 1 of the acceptance: the pre-flight health of every node, one row per node and check.

The checks are ``fabric-health``'s (the health family ``NicHealthTest`` runs it once on every
node; ``docs/health.md``): each prints ``HEALTH <node> <nic>/<port> <check>: PASS|FAIL
<detail>``, the detail saying what was found and what was expected (``found 02:00:..., expected
02:00:...``, ``4096 >= 1024``, ``Ethernet (expected InfiniBand)``). They are read from the
health test's output (its output directory when it passed, its stage directory when it
failed) with the same parser its sanity check uses (:mod:`fabrictest.parsers.health`), or
from files a site gathered itself (``--health FILE``: the lines, or ``fabric-health --json``
documents, one per node).

A failed check names its node. What keeps the stage from being judged whole is said: a node
that reported nothing or stopped before its summary, an output that cannot be read, and a node
the performance stage used that has no pre-flight result at all.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from fabrictest.counters.files import read_text
from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.health import CheckResult, HealthReport, missing, parse_health
from fabrictest.report.acceptance.cases import label, read_output
from fabrictest.report.acceptance.evidence import missing_checks
from fabrictest.report.acceptance.verdict import Finding, Stage, status_of
from fabrictest.report.records.words import counted

_FOUND_EXPECTED = re.compile(r"^(?:found )?(?P<found>.*?),? expected (?P<expected>.+)$")
_PAREN = re.compile(r"^(?P<found>.*?) \(expected (?P<expected>[^)]*)\)$")
_COMPARED = re.compile(r"^(?P<found>.+?) (?P<op>>=|<) (?P<limit>.+)$")
MAX_HEALTH_FILE = 64 << 20


@dataclass(frozen=True)
class CheckRow:
    node: str
    nic: str  # device/port, ``-/-`` for a node-wide check
    check: str
    ok: bool
    found: str
    expected: str
    detail: str
    source: str  # the test case or file it came from


def found_expected(detail: str) -> tuple[str, str]:
    """What a check found and what it expected, from its detail; (detail, "") where the
    detail does not say."""
    d = detail.strip()
    for rx in (_PAREN, _FOUND_EXPECTED):
        m = rx.match(d)
        if m:
            return m.group("found").strip(), m.group("expected").strip()
    m = _COMPARED.match(d)
    if m:
        return m.group("found").strip(), f">= {m.group('limit').strip()}"
    return d, ""


def rows_of(report: HealthReport, source: str) -> list[CheckRow]:
    out = []
    for r in report.results:
        found, expected = found_expected(r.detail)
        out.append(CheckRow(r.node, f"{r.device}/{r.port}", r.check, r.ok, found, expected,
                            r.detail, source))
    return out


def _json_reports(text: str, where: str) -> HealthReport:
    """``fabric-health --json`` documents (one per node, as several nodes print them one
    after the other) as one report."""
    rep, dec, i = HealthReport(), json.JSONDecoder(), 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        try:
            doc, i = dec.raw_decode(text, i)
        except ValueError as err:
            raise ParseError(f"{where}: not fabric-health --json output ({err})") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("node"), str):
            raise ParseError(f"{where}: a JSON document without a node: not fabric-health "
                             "--json output")
        if doc.get("no_device"):
            rep.no_device[doc["node"]] = str(doc.get("reason") or "")
            continue
        results = doc.get("results")
        if not isinstance(results, list) or not isinstance(doc.get("checks"), int):
            raise ParseError(f"{where}: {doc['node']}: no results list and checks count")
        for r in results:
            if not isinstance(r, dict) or r.get("status") not in ("PASS", "FAIL") \
                    or not all(isinstance(r.get(k), str) for k in ("device", "port", "check")):
                raise ParseError(f"{where}: {doc['node']}: a result that is not a check")
            rep.results.append(CheckResult(doc["node"], r["device"], r["port"], r["check"],
                                           r["status"] == "PASS", str(r.get("detail") or "")))
        rep.checks = (rep.checks or 0) + doc["checks"]
        rep.failed = (rep.failed or 0) + int(doc.get("failed") or 0)
        rep.summaries += 1
    if not rep.results and not rep.no_device:
        raise ParseError(f"{where}: no fabric-health result in it")
    return rep


def read_health_file(path: str) -> HealthReport:
    """``--health FILE``: fabric-health's lines or its --json documents; ParseError (one line)
    for anything else."""
    text = read_text(path, "fabric-health output", MAX_HEALTH_FILE)
    if text.lstrip().startswith("{"):
        return _json_reports(text, f"--health {path}")
    try:
        return parse_health(text)
    except ParseError as err:
        raise ParseError(f"--health {path}: {err}") from None


def _nodes_expected(tc: dict) -> int:
    """The nodes a health case checked: its task count (the health family runs one task per
    node), else the job's node list. ReFrame's node list is the scheduler's answer to its last
    poll and can be short (a vcluster acceptance run recorded ``['node01']`` for a 4-node
    job that ended between two polls): it would count 4 reports as too many."""
    n = tc.get("num_tasks")
    if isinstance(n, int) and not isinstance(n, bool) and n > 0:
        return n
    return len(tc.get("job_nodelist") or [])


def stage1(cases: list[dict], files: list[tuple[str, HealthReport]],
           used_nodes: set[str], recorded: dict[str, str] | None = None) -> Stage:
    """Stage 1 from the health test cases of the run and the ``--health`` files;
    ``used_nodes``: the nodes the performance stage ran on (each needs a pre-flight result);
    ``recorded``: the nodes stage 1's own record (``stage1.json``) says did not pass, and what
    it says (each is a failure, whatever the lines read here say)."""
    rows: list[CheckRow] = []
    gaps: list[str] = []
    findings: list[Finding] = []
    reported: set[str] = set()
    sources = []
    for tc in cases:
        text, why = read_output(tc)
        rep = None
        if text is None:
            gaps.append(why)
        else:
            try:
                rep = parse_health(text)
            except ParseError as err:
                gaps.append(f"{label(tc)}: {err}")
        if tc.get("result") == "fail" and (rep is None or not rep.failures()):
            # ReFrame failed it for a reason no check line gives (a crash, a node that said
            # nothing): the test itself is named, with ReFrame's reason
            findings.append(Finding(1, "test", label(tc), f"{label(tc)} failed: "
                                    f"{_reason(tc)}"))
        if rep is None:
            continue
        sources.append(label(tc))
        want = _nodes_expected(tc)
        gaps += [f"{label(tc)}: {p}" for p in missing(rep, want)] if want else []
        rows += rows_of(rep, label(tc))
        findings += _no_device(rep, label(tc))
        reported |= set(rep.nodes())
    for path, rep in files:
        sources.append(f"--health {path}")
        gaps += [f"--health {path}: {p}" for p in missing(rep, len(rep.nodes()))]
        rows += rows_of(rep, f"--health {path}")
        findings += _no_device(rep, f"--health {path}")
        reported |= set(rep.nodes())
    rows = _latest(rows)
    gaps += missing_checks(asdict(r) for r in rows)
    for r in rows:
        if not r.ok:
            findings.append(Finding(1, "node", r.node, f"{r.node} {r.nic} {r.check}: "
                                    f"{r.detail or 'failed'} ({r.source})"))
    failing = {f.name for f in findings}
    findings += [Finding(1, "node", node, f"{node}: stage 1's record says {why}")
                 for node, why in sorted((recorded or {}).items()) if node not in failing]
    unchecked = sorted(used_nodes - reported)
    if unchecked and (rows or findings):
        gaps.append(f"no pre-flight result for {', '.join(unchecked)} (the performance "
                    "stage ran on them)")
    nodes = sorted({r.node for r in rows} | reported)
    failed_nodes = sorted({f.name for f in findings})
    if not rows and not findings:
        summary = ("no pre-flight result: no health test (NicHealthTest, -t preflight) in "
                   "these runs and no --health file")
        if gaps:
            summary = "no pre-flight result could be read"
    else:
        summary = (f"{counted(len(nodes), 'node')}, {counted(len(rows), 'check')}: "
                   + (f"{counted(len(failed_nodes), 'node')} failed ({', '.join(failed_nodes)})"
                      if failed_nodes else "every check passed"))
    st = Stage(1, status_of(len(rows) + len(findings), findings, gaps), summary, findings,
               gaps, {"sources": sources, "rows": [asdict(r) for r in rows]})
    return st


def _reason(tc: dict) -> str:
    why = " ".join(str(tc.get("fail_reason") or "no reason recorded").split())
    return why if len(why) <= 300 else why[:297] + "..."


def _no_device(rep: HealthReport, source: str) -> list[Finding]:
    return [Finding(1, "node", node, f"{node}: no RDMA device: {why} ({source})")
            for node, why in rep.no_device.items()]


def _latest(rows: list[CheckRow]) -> list[CheckRow]:
    """One row per node, NIC and check: the last read (a rerun of stage 1 replaces the
    first), in node order."""
    last: dict[tuple[str, str, str], CheckRow] = {}
    for r in rows:
        last[(r.node, r.nic, r.check)] = r
    return sorted(last.values(), key=lambda r: (r.node, r.nic))

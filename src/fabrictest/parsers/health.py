"""The output lines of ``fabric-health`` (:mod:`fabrictest.health`): format and parser.

One line per check, then a summary::

    HEALTH <node> <device>/<port> <check>: PASS|FAIL <detail>
    HEALTH <node> -/- gc_thresh1: PASS 1024 >= 10
    HEALTH summary: <N> checks, <M> failed

or, on a node without an RDMA device, the single line::

    HEALTH <node> no RDMA device: <reason>
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, require_text
from .errors import ParseError

LINE_RE = re.compile(
    r"^HEALTH (?P<node>\S+) (?P<device>[^\s/]+)/(?P<port>\S+) (?P<check>\S+): (?P<status>PASS|FAIL)(?: (?P<detail>.*))?$"
)
SUMMARY_RE = re.compile(r"^HEALTH summary: (?P<checks>\d+) checks, (?P<failed>\d+) failed$")
NO_DEVICE_RE = re.compile(r"^HEALTH (?P<node>\S+) no RDMA device: (?P<reason>.*)$")


@dataclass(frozen=True)
class CheckResult:
    """One check on one node: ``device``/``port`` are ``-`` for node-wide checks."""

    node: str
    device: str
    port: str
    check: str
    ok: bool
    detail: str = ""

    def line(self) -> str:
        status = "PASS" if self.ok else "FAIL"
        return f"HEALTH {self.node} {self.device}/{self.port} {self.check}: {status} {self.detail}".rstrip()

    def as_dict(self) -> dict[str, object]:
        return {
            "node": self.node,
            "device": self.device,
            "port": self.port,
            "check": self.check,
            "status": "PASS" if self.ok else "FAIL",
            "detail": self.detail,
        }


@dataclass
class HealthReport:
    results: list[CheckResult] = field(default_factory=list)
    checks: int | None = None  # from the summary line(s), summed
    failed: int | None = None
    no_device: dict[str, str] = field(default_factory=dict)  # node -> reason
    summaries: int = 0  # "HEALTH summary" lines (one per node that checked its ports)
    cut_mid_line: bool = False  # the text ends inside a line

    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if not r.ok]

    def nodes(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.results:
            seen.setdefault(r.node, None)
        for n in self.no_device:
            seen.setdefault(n, None)
        return list(seen)

    def ping_matrix(self) -> dict[tuple[str, str], bool]:
        """(node, peer) -> reachable, from the ``ping:<peer>`` checks."""
        return {
            (r.node, r.check.split(":", 1)[1]): r.ok
            for r in self.results
            if r.check.startswith("ping:")
        }


def parse_health(text: str) -> HealthReport:
    """Read ``fabric-health`` lines (several nodes' outputs may be concatenated)."""
    text = require_text(text, "fabric-health")
    report = HealthReport()
    seen = False
    for raw in text.splitlines():
        line = raw.strip()
        if (m := SUMMARY_RE.match(line)) is not None:
            report.checks = (report.checks or 0) + int(m.group("checks"))
            report.failed = (report.failed or 0) + int(m.group("failed"))
            report.summaries += 1
            seen = True
        elif (m := NO_DEVICE_RE.match(line)) is not None:
            report.no_device[m.group("node")] = m.group("reason")
            seen = True
        elif (m := LINE_RE.match(line)) is not None:
            report.results.append(
                CheckResult(
                    m.group("node"),
                    m.group("device"),
                    m.group("port"),
                    m.group("check"),
                    m.group("status") == "PASS",
                    m.group("detail") or "",
                )
            )
            seen = True
    if not seen:
        raise ParseError("not fabric-health output: no 'HEALTH ...' line")
    report.cut_mid_line = ends_mid_line(text)
    return report


def missing(report: HealthReport, nodes: int) -> list[str]:
    """What keeps the lines of ``nodes`` nodes' ``fabric-health`` runs from being whole: every
    node reports (its checks and a summary, or its 'no RDMA device' line), and the summaries
    count the check lines printed. Empty when whole."""
    problems = []
    reported = report.nodes()
    if len(reported) != nodes:
        problems.append(f"fabric-health: {len(reported)} of {nodes} nodes reported")
    checking = len({r.node for r in report.results} - set(report.no_device))
    if report.summaries != checking:
        problems.append(
            f"fabric-health: {report.summaries} 'HEALTH summary' lines for {checking} nodes "
            "(a node stopped before its summary)"
        )
    elif (report.checks or 0) != len(report.results):
        problems.append(
            f"fabric-health: the summaries count {report.checks or 0} checks, "
            f"{len(report.results)} check lines printed"
        )
    if report.cut_mid_line:
        problems.append("fabric-health: output ends mid-line (cut short)")
    return problems

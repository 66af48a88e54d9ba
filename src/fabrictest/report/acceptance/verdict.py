"""The acceptance verdict over the three stages of the Slingshot acceptance notes (pure).

The notes' procedure is three stages, in order: pre-flight health of every node (stage 1),
performance per switch, group and across groups (stage 2), diagnostics during the benchmarks:
link flaps, cable errors, congestion (stage 3). Each stage is judged on its own
(:mod:`.acceptance_stage1`, :mod:`.acceptance_stage2`, :mod:`.acceptance_stage3`) into a
:class:`Stage`: ``pass``, ``fail`` (with the elements it names: node, link, switch, uplink,
group pair), ``incomplete`` (something it should judge could not be, and nothing failed) or
``unjudged`` (nothing to judge).

The run is ACCEPTED only when every stage passed: a stage with nothing to judge is never a
pass, and a gate fed nothing at all is refused (:class:`NothingToJudge`, exit 2). Otherwise it
is NOT ACCEPTED, and the headline names the elements that failed, with their stage, before
the stages that could not be judged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

PASS, FAIL, INCOMPLETE, UNJUDGED = "pass", "fail", "incomplete", "unjudged"
TITLES = {1: "pre-flight health", 2: "performance", 3: "counters and flaps"}
#: exit statuses, as every fabric-report command: 0 accepted, 1 not accepted, 2 nothing to
#: judge or bad input
EXIT_ACCEPTED, EXIT_NOT_ACCEPTED, EXIT_NOTHING = 0, 1, 2
#: the order elements are named in: the narrowest first
KIND_ORDER = ("node", "link", "switch", "uplink", "group pair", "test")


class NothingToJudge(ValueError):
    """No stage had anything to judge: the gate refuses (exit 2)."""


@dataclass(frozen=True)
class Finding:
    """An element a stage names as failed, with the evidence (one line)."""

    stage: int
    kind: str  # node | link | switch | uplink | group pair | test
    name: str
    evidence: str
    #: the element is also in passing cases (attribution's weak suspect)
    weak: bool = False

    @property
    def label(self) -> str:
        return self.name if self.kind in ("node", "test") else f"{self.kind} {self.name}"


@dataclass
class Stage:
    number: int
    status: str  # pass | fail | incomplete | unjudged
    summary: str  # one line: what was judged and how it came out
    findings: list[Finding] = field(default_factory=list)
    #: what could not be judged (one line each); makes a stage without findings incomplete
    gaps: list[str] = field(default_factory=list)
    #: the stage's own tables for the page and the JSON twin
    data: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        return TITLES[self.number]

    def to_dict(self) -> dict:
        return {"stage": self.number, "title": self.title, "status": self.status,
                "summary": self.summary, "findings": [asdict(f) for f in self.findings],
                "gaps": self.gaps, **self.data}


def status_of(judged: int, findings: list[Finding], gaps: list[str]) -> str:
    """A stage's status: failed when it names an element, unjudged when it judged nothing,
    incomplete when something could not be judged, else passed."""
    if findings:
        return FAIL
    if not judged:
        return UNJUDGED
    return INCOMPLETE if gaps else PASS


@dataclass
class Verdict:
    accepted: bool
    headline: str
    #: (kind, name) -> the stages that named it and their evidence, narrowest first
    elements: list[dict]
    stages: list[Stage]

    @property
    def status(self) -> int:
        return EXIT_ACCEPTED if self.accepted else EXIT_NOT_ACCEPTED

    def to_dict(self) -> dict:
        return {"verdict": "ACCEPTED" if self.accepted else "NOT ACCEPTED",
                "headline": self.headline, "elements": self.elements,
                "stages": [s.to_dict() for s in self.stages]}


def elements(stages: list[Stage]) -> list[dict]:
    """Every named element once, with the stages that named it: a node slow in stage 2 and
    flapping in stage 3 is one element with two reasons."""
    by: dict[tuple[str, str], dict] = {}
    for st in stages:
        for f in st.findings:
            el = by.setdefault((f.kind, f.name), {"kind": f.kind, "name": f.name,
                                                  "label": f.label, "stages": [],
                                                  "evidence": [], "weak": True})
            if st.number not in el["stages"]:
                el["stages"].append(st.number)
            el["evidence"].append(f"stage {st.number}: {f.evidence}")
            el["weak"] = el["weak"] and f.weak
    order = {k: i for i, k in enumerate(KIND_ORDER)}
    return sorted(by.values(), key=lambda e: (e["weak"], min(e["stages"]),
                                              order.get(e["kind"], 9), e["name"]))


def _named(el: dict) -> str:
    stages = ", ".join(f"stage {n} ({TITLES[n]})" for n in el["stages"])
    weak = ", a weak suspect" if el["weak"] else ""
    return f"{el['label']} ({stages}{weak})"


def judge(stages: list[Stage]) -> Verdict:
    """The verdict over the stages (1, 2, 3 in order); NothingToJudge when none judged
    anything."""
    stages = sorted(stages, key=lambda s: s.number)
    if all(s.status == UNJUDGED for s in stages):
        raise NothingToJudge("nothing to judge: " + "; ".join(
            f"stage {s.number} ({s.title}): {s.summary}" for s in stages))
    if all(s.status == PASS for s in stages):
        head = "ACCEPTED: " + "; ".join(f"stage {s.number} {s.summary}" for s in stages)
        return Verdict(True, head, [], stages)
    named = elements(stages)
    parts = []
    if named:
        parts.append("failed: " + "; ".join(_named(e) for e in named))
    for s in stages:
        if s.status in (INCOMPLETE, UNJUDGED):
            why = s.gaps[0] if s.gaps else s.summary
            more = f" (and {len(s.gaps) - 1} more)" if len(s.gaps) > 1 else ""
            parts.append(f"stage {s.number} ({s.title}) {s.status}: {why}{more}")
    return Verdict(False, "NOT ACCEPTED: " + "; ".join(parts), named, stages)

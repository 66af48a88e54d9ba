"""One cell of the matrix: what a check said when fed one fault."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass

PASS, FAIL, NA, UNTESTED = "PASS", "FAIL", "n/a", "UNTESTED"
#: the first lines the cells quote are cut here: the table stays readable
QUOTE = 240


@dataclass(frozen=True)
class Cell:
    """``outcome``: PASS (the check accepted the input), FAIL (it refused or failed it),
    ``n/a`` (the fault cannot reach this check; ``text`` says why) or UNTESTED (no evidence
    either way: never counted as a FAIL). ``text``: the check's own words (or the reason);
    ``names``: the faulty element the words must name; ``cites``: pytest node ids whose test
    shows the outcome (a fault that needs a process: a stopped rank, a missing tool)."""

    outcome: str
    text: str
    names: tuple[str, ...] = ()
    cites: tuple[str, ...] = ()

    def __post_init__(self):
        if self.outcome not in (PASS, FAIL, NA, UNTESTED):
            raise ValueError(f"outcome {self.outcome!r}")
        if not self.text.strip():
            raise ValueError("a cell says what happened (or why it does not apply)")


def quote(text: str) -> str:
    """The first non-empty line of a check's answer, temporary paths masked, cut at QUOTE."""
    line = next((x.strip() for x in str(text).splitlines() if x.strip()), "")
    for tmp in {tempfile.gettempdir(), "/tmp"}:
        line = re.sub(re.escape(tmp) + r"/[^\s:'\",)]+", "<tmp>", line)
    return line if len(line) <= QUOTE else line[:QUOTE - 3] + "..."


def failed(text: str, *names: str) -> Cell:
    return Cell(FAIL, quote(text), tuple(names))


def passed(text: str) -> Cell:
    return Cell(PASS, quote(text))


def na(reason: str) -> Cell:
    return Cell(NA, reason)


def cited(outcome: str, text: str, *nodeids: str, names: tuple[str, ...] = ()) -> Cell:
    return Cell(outcome, text, names, tuple(nodeids))

"""The summary block of seed 004's all-to-many program (``isendrecv``) and of ours::

    -----------------------------------------------------------
    Total number of MPI processes        = 512
    Total number of sender   processes   = 512
    Total number of receiver processes   = 8
    Total number of iterations           = 2
    Message block unit size              = 32 bytes
    Max message size                     = 256 bytes
    Min message size                     = 32 bytes
    Max time of posting irecv            = 0.0117 sec
    Max time of posting isend            = 0.0041 sec
    Max time of MPI_Waitall()            = 0.0791 sec
    Max end-to-end time                  = 0.0829 sec
    (Max means the maximum among all 512 processes)
    -----------------------------------------------------------

Any other ``Label = value`` line inside a block goes to ``extra`` (label with its runs of
spaces collapsed, value stripped), e.g. ``Payload check = passed (N messages)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, require_text
from .errors import ParseError

_LINE = re.compile(r"^\s*(?P<label>[A-Za-z(][^=]*?)\s*=\s*(?P<value>.*?)\s*$")
_RULE = re.compile(r"^\s*-{10,}\s*$")
_FOOTER = re.compile(r"\(Max means the maximum among all \d+ processes\)")
_NUMBER = re.compile(r"^([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")

_FIELDS = {
    "total number of mpi processes": ("nprocs", int),
    "total number of sender processes": ("senders", int),
    "total number of receiver processes": ("receivers", int),
    "total number of iterations": ("iterations", int),
    "message block unit size": ("unit_size", int),
    "max message size": ("max_msg_size", int),
    "min message size": ("min_msg_size", int),
    "max time of posting irecv": ("t_irecv", float),
    "max time of posting isend": ("t_isend", float),
    "max time of mpi_waitall()": ("t_waitall", float),
    "max end-to-end time": ("t_end_to_end", float),
}


@dataclass
class AllToManySummary:
    """Sizes in bytes, times in seconds (the maximum over all processes)."""

    nprocs: int | None = None
    senders: int | None = None
    receivers: int | None = None
    iterations: int | None = None
    unit_size: int | None = None
    max_msg_size: int | None = None
    min_msg_size: int | None = None
    t_irecv: float | None = None
    t_isend: float | None = None
    t_waitall: float | None = None
    t_end_to_end: float | None = None
    extra: dict[str, str] = field(default_factory=dict)
    footer: bool = False  # "(Max means the maximum among all N processes)" was printed
    closed: bool = False  # the closing rule after the block was printed
    cut_mid_line: bool = False  # the text ends inside this block's last line


def parse_alltomany_all(text: str) -> list[AllToManySummary]:
    """Every summary block in ``text`` (one per run)."""
    text = require_text(text, "all-to-many")
    blocks: list[AllToManySummary] = []
    current: AllToManySummary | None = None
    for line in text.splitlines():
        if _RULE.match(line):
            if current is not None:
                current.closed = True
            current = None
            continue
        if _FOOTER.search(line) and current is not None:
            current.footer = True
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        label = re.sub(r"\s+", " ", m.group("label")).strip()
        value = m.group("value")
        key = _FIELDS.get(label.lower())
        if current is None or (key is not None and getattr(current, key[0]) is not None):
            current = AllToManySummary()
            blocks.append(current)
        if key is None:
            current.extra[label] = value
            continue
        name, kind = key
        number = _NUMBER.match(value)
        if number is None:
            raise ParseError(f"all-to-many: {label!r} has no number: {value!r}")
        setattr(
            current, name, kind(float(number.group(1))) if kind is int else float(number.group(1))
        )
    blocks = [
        b for b in blocks if any(getattr(b, name) is not None for name, _ in _FIELDS.values())
    ]
    if not blocks:
        raise ParseError("not all-to-many output: no 'Total number of MPI processes = N' block")
    blocks[-1].cut_mid_line = ends_mid_line(text)
    return blocks


def parse_alltomany(text: str) -> AllToManySummary:
    """The first summary block in ``text``."""
    return parse_alltomany_all(text)[0]


#: the lines a whole summary block has (field name, label as printed)
REQUIRED = (
    ("nprocs", "Total number of MPI processes"),
    ("iterations", "Total number of iterations"),
    ("t_irecv", "Max time of posting irecv"),
    ("t_isend", "Max time of posting isend"),
    ("t_waitall", "Max time of MPI_Waitall()"),
    ("t_end_to_end", "Max end-to-end time"),
)


def missing(
    summary: AllToManySummary, iterations: int | None = None, nprocs: int | None = None
) -> list[str]:
    """What keeps a summary block from being whole: every count and timing line, the closing
    rule, and (when given) the requested iterations and process count. Empty when whole."""
    problems = []
    absent = [label for name, label in REQUIRED if getattr(summary, name) is None]
    if absent:
        problems.append(f"all-to-many: no {', '.join(repr(a) for a in absent)} line")
    if summary.cut_mid_line:
        problems.append("all-to-many: output ends mid-line (cut short)")
    if not (summary.footer and summary.closed):
        what = "closing rule" if summary.footer else "'(Max means ...)' line and closing rule"
        problems.append(f"all-to-many: the summary block has no {what} (cut short)")
    if iterations is not None and summary.iterations not in (None, iterations):
        problems.append(f"all-to-many: {summary.iterations} iterations, expected {iterations}")
    if nprocs is not None and summary.nprocs not in (None, nprocs):
        problems.append(f"all-to-many: {summary.nprocs} processes, expected {nprocs}")
    return problems

"""The summary block of the all-to-many program of the all-to-many (Cori) notes (``isendrecv``)
and of ours::

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
spaces collapsed, value stripped), e.g. ``Payload check = passed (N messages)``. A line printed
twice in one block is not whole (a count or time line twice starts another block: another run).

What the program's own arithmetic makes impossible (:func:`missing`): a sender or receiver
count above the processes, the footer's process count another, message sizes other than 1 to
R units (R receivers), a time above the end-to-end time it is part of; with the full-precision
lines, a cumulative time that decreases, posting irecv after an iteration longer than the
end-to-end time then, the last checkpoint's posting-irecv time not the repetition's, and the
block's times not those of the median repetition by end-to-end time (to their 4 decimals).

Ours adds, inside the block, ``Repetitions = R (...)`` and one full-precision line per
repetition of the timed loop (the block's ``%.4f sec`` figures read 0.0000 on a fast fabric)::

    alltomany-times rep=1 irecv=3.5e-06 isend=4.7e-06 waitall=7.3e-06 end_to_end=1.6e-05 at=1,2,4
      irecv_at=2.7e-06,3.0e-06,3.5e-06 end_to_end_at=4.1e-06,7.2e-06,1.6e-05

(one line), the last fields the cumulative times at iterations 1, 2, 4, ... and the last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, not_a_figure, require_text
from .errors import ParseError

_LINE = re.compile(r"^\s*(?P<label>[A-Za-z(][^=]*?)\s*=\s*(?P<value>.*?)\s*$")
_RULE = re.compile(r"^\s*-{10,}\s*$")
_FOOTER = re.compile(r"\(Max means the maximum among all (\d+) processes\)")
_NUMBER = re.compile(r"^([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")
_TIMES = re.compile(r"^\s*alltomany-times\s+rep=(?P<rep>\d+)\s+(?P<rest>.*?)\s*$")
_TIME_FIELDS = ("irecv", "isend", "waitall", "end_to_end")

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


@dataclass(frozen=True)
class RepetitionTimes:
    """One repetition of the timed loop at full precision (s, maximum over all processes)."""

    rep: int
    irecv: float
    isend: float
    waitall: float
    end_to_end: float
    #: checkpoints (iterations 1, 2, 4, ... and the last) and the cumulative posting-irecv and
    #: end-to-end times at each, from the start of the repetition
    at: tuple[int, ...] = ()
    irecv_at: tuple[float, ...] = ()
    end_to_end_at: tuple[float, ...] = ()

    def cumulative(self, name: str) -> dict[int, float]:
        """{iterations: time ``name`` (irecv, end_to_end) after that many iterations}."""
        return dict(zip(self.at, getattr(self, f"{name}_at"), strict=True))


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
    repetitions: int | None = None  # "Repetitions = R": how many timed loops ran
    times: list[RepetitionTimes] = field(default_factory=list)  # the alltomany-times lines
    extra: dict[str, str] = field(default_factory=dict)
    footer: bool = False  # "(Max means the maximum among all N processes)" was printed
    footer_nprocs: int | None = None  # its N
    closed: bool = False  # the closing rule after the block was printed
    cut_mid_line: bool = False  # the text ends inside this block's last line
    repeated: list[str] = field(default_factory=list)  # lines printed twice in the block


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
        if (footer := _FOOTER.search(line)) and current is not None:
            if current.footer:
                current.repeated.append("(Max means ...)")
            current.footer, current.footer_nprocs = True, int(footer.group(1))
            continue
        timed = _TIMES.match(line)
        if timed is not None:
            if current is None:
                raise ParseError(f"all-to-many: a timing line outside a summary block: {line!r}")
            current.times.append(_repetition(timed))
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
        if key is None and (label in current.extra or
                            label == "Repetitions" and current.repetitions is not None):
            current.repeated.append(label)
            continue
        if key is None and label == "Repetitions":
            number = _NUMBER.match(value)
            if number is None or not number.group(1).isdigit():
                raise ParseError(f"all-to-many: 'Repetitions' has no count: {value!r}")
            current.repetitions = int(number.group(1))
            continue
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


def _repetition(m: re.Match) -> RepetitionTimes:
    pairs = dict(kv.split("=", 1) for kv in m.group("rest").split() if "=" in kv)
    where = f"all-to-many: repetition {m.group('rep')}"
    values = {}
    for name in _TIME_FIELDS:
        try:
            values[name] = float(pairs[name])
        except (KeyError, ValueError):
            raise ParseError(f"{where} has no {name}= time: {m.group(0)!r}") from None
    if "at" in pairs:
        try:
            at = tuple(int(x) for x in pairs["at"].split(","))
            cumulative = {name: tuple(float(x) for x in pairs[f"{name}_at"].split(","))
                          for name in ("irecv", "end_to_end")}
        except (KeyError, ValueError):
            raise ParseError(f"{where}: unreadable checkpoints: {m.group(0)!r}") from None
        if any(len(v) != len(at) for v in cumulative.values()):
            raise ParseError(f"{where}: {len(at)} checkpoints but other counts of times")
        values.update(at=at, irecv_at=cumulative["irecv"],
                      end_to_end_at=cumulative["end_to_end"])
    return RepetitionTimes(rep=int(m.group("rep")), **values)


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
    summary: AllToManySummary,
    iterations: int | None = None,
    nprocs: int | None = None,
    repetitions: int | None = None,
) -> list[str]:
    """What keeps a summary block from being whole: every count and timing line, the closing
    rule, figures that are finite and possible (counts > 0, times >= 0), and (when given) the
    requested iterations, process count and repetitions (then one full-precision line for each).
    Empty when whole."""
    problems = []
    absent = [label for name, label in REQUIRED if getattr(summary, name) is None]
    if absent:
        problems.append(f"all-to-many: no {', '.join(repr(a) for a in absent)} line")
    if summary.cut_mid_line:
        problems.append("all-to-many: output ends mid-line (cut short)")
    problems += [f"all-to-many: {label!r} printed twice in one block (which is the run's?)"
                 for label in summary.repeated]
    if not (summary.footer and summary.closed):
        what = "closing rule" if summary.footer else "'(Max means ...)' line and closing rule"
        problems.append(f"all-to-many: the summary block has no {what} (cut short)")
    if iterations is not None and summary.iterations not in (None, iterations):
        problems.append(f"all-to-many: {summary.iterations} iterations, expected {iterations}")
    if nprocs is not None and summary.nprocs not in (None, nprocs):
        problems.append(f"all-to-many: {summary.nprocs} processes, expected {nprocs}")
    unphysical = _unphysical(summary)
    # (figures that are none cannot contradict each other: they are named as such)
    problems += unphysical or _contradictions(summary)
    if repetitions is not None:
        problems += _repetitions_missing(summary, repetitions)
    return problems


#: the block's times are printed "%.4f": half their last digit (and a full-precision line's
#: "%.9e" rounding besides)
_BLOCK_ROUNDING = 0.00005 + 1e-9
_BLOCK_TIMES = {"irecv": "t_irecv", "isend": "t_isend", "waitall": "t_waitall",
                "end_to_end": "t_end_to_end"}


def _contradictions(s: AllToManySummary) -> list[str]:
    """Figures the program cannot print together (see the module docstring)."""
    out = []
    n = s.nprocs
    for name, count in (("sender", s.senders), ("receiver", s.receivers)):
        if None not in (n, count) and not 1 <= count <= n:
            out.append(f"all-to-many: {count} {name} processes of {n}")
    if None not in (n, s.footer_nprocs) and s.footer_nprocs != n:
        out.append(f"all-to-many: '(Max means the maximum among all {s.footer_nprocs} "
                   f"processes)' in a block of {n}")
    unit = s.unit_size
    if None not in (unit, s.min_msg_size) and s.min_msg_size != unit:
        out.append(f"all-to-many: min message size {s.min_msg_size} bytes, not the unit "
                   f"{unit}")
    if None not in (unit, s.receivers, s.max_msg_size) and s.max_msg_size != unit * s.receivers:
        out.append(f"all-to-many: max message size {s.max_msg_size} bytes, not {s.receivers} "
                   f"receivers x {unit}")
    for name, attr in _BLOCK_TIMES.items():
        t, total = getattr(s, attr), s.t_end_to_end
        if name != "end_to_end" and None not in (t, total) and t > total:
            out.append(f"all-to-many: the {name} time {t:g} s above the end-to-end {total:g} s")
    for t in s.times:
        out += _repetition_contradictions(t)
    if s.times and not out:
        out += _median_contradictions(s)
    return out[:4]


def _repetition_contradictions(t: RepetitionTimes) -> list[str]:
    where = f"all-to-many: repetition {t.rep}"
    out = [f"{where}: the {name} time {getattr(t, name):g} s above the end-to-end "
           f"{t.end_to_end:g} s" for name in _TIME_FIELDS[:3] if getattr(t, name) > t.end_to_end]
    for name in ("irecv", "end_to_end"):
        got = getattr(t, f"{name}_at")
        if any(b < a for a, b in zip(got, got[1:], strict=False)):
            out.append(f"{where}: the cumulative {name} times decrease: {got}")
    if any(i > e for i, e in zip(t.irecv_at, t.end_to_end_at, strict=True)):
        out.append(f"{where}: posting irecv longer than the end-to-end time at a checkpoint")
    if t.irecv_at and t.irecv_at[-1] != t.irecv:
        out.append(f"{where}: posting irecv {t.irecv_at[-1]:g} s at the last checkpoint, "
                   f"{t.irecv:g} s in all")
    if t.end_to_end_at and t.end_to_end_at[-1] > t.end_to_end:
        out.append(f"{where}: end-to-end {t.end_to_end_at[-1]:g} s at the last checkpoint, "
                   f"above {t.end_to_end:g} s in all")
    return out


def _median_contradictions(s: AllToManySummary) -> list[str]:
    """The block's four times are the median repetition's (by end-to-end time; the lower of
    the two middle ones for an even count), to 4 decimals."""
    ranked = sorted(s.times, key=lambda t: t.end_to_end)
    middle = ranked[(len(ranked) - 1) // 2].end_to_end
    candidates = [t for t in ranked if t.end_to_end == middle]  # (ties: any of them)
    for t in candidates:
        if all(getattr(s, attr) is None or abs(getattr(s, attr) - getattr(t, name))
               <= _BLOCK_ROUNDING for name, attr in _BLOCK_TIMES.items()):
            return []
    return [f"all-to-many: the block's times are not those of the median repetition "
            f"(repetition {candidates[0].rep}: end-to-end {middle:.4f} s)"]


def _unphysical(summary: AllToManySummary) -> list[str]:
    """Counts must be positive; times finite and >= 0 (the block's 4 decimals print a short
    time as 0.0000), the end-to-end time of a full-precision line > 0."""
    found = [not_a_figure(f"all-to-many: {label!r}", getattr(summary, name), zero_ok=name[0] == "t")
             for name, label in REQUIRED]
    for t in summary.times:
        for name in _TIME_FIELDS:
            found.append(not_a_figure(f"all-to-many: repetition {t.rep} {name} time",
                                      getattr(t, name), zero_ok=name != "end_to_end"))
        for k, v in zip(t.at, t.irecv_at, strict=True):
            found.append(not_a_figure(f"all-to-many: repetition {t.rep} irecv time at {k}", v,
                                      zero_ok=True))
        for k, v in zip(t.at, t.end_to_end_at, strict=True):
            found.append(not_a_figure(f"all-to-many: repetition {t.rep} end-to-end time at {k}",
                                      v))
    return [p for p in found if p]


def _repetitions_missing(summary: AllToManySummary, repetitions: int) -> list[str]:
    if summary.repetitions is None:
        return ["all-to-many: no 'Repetitions' line (a build without -r?)"]
    if summary.repetitions != repetitions:
        return [f"all-to-many: {summary.repetitions} repetitions, expected {repetitions}"]
    reps = [t.rep for t in summary.times]
    if reps != list(range(1, repetitions + 1)):
        return [f"all-to-many: {len(reps)} of {repetitions} 'alltomany-times' lines"]
    if summary.iterations and any(not t.at or t.at[-1] != summary.iterations
                                  for t in summary.times):
        return [f"all-to-many: a repetition has no checkpoint at {summary.iterations} iterations"]
    return []


def per_iteration(summary: AllToManySummary, name: str) -> list[float]:
    """The time ``name`` (irecv, isend, waitall, end_to_end) per iteration of each repetition,
    at full precision; the block's one figure when the output has no full-precision lines
    (the notes' program)."""
    if not summary.iterations:
        raise ValueError("all-to-many: no iteration count")
    if summary.times:
        return [getattr(t, name) / summary.iterations for t in summary.times]
    block = {"irecv": "t_irecv", "isend": "t_isend", "waitall": "t_waitall",
             "end_to_end": "t_end_to_end"}[name]
    return [getattr(summary, block) / summary.iterations]

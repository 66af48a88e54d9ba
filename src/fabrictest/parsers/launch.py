"""Launcher and MPI failure lines in a job's output (stdout and stderr together).

A benchmark that crashed, aborted or exited non-zero must be reported as such (signal, rank,
node), not as "parse error: empty output" or, worse, as a pass on the rows it printed before
dying. Recognised (Open MPI 4/5, MPICH, Slurm, bash)::

    mpirun noticed that process rank 2 with PID 4242 on node node03 exited on signal 11 (Segmentation fault).
    srun: error: node03: task 2: Segmentation fault (core dumped)
    srun: error: node03: tasks 0-3: Exited with exit code 1
    MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD
    with errorcode 7.
    application called MPI_Abort(MPI_COMM_WORLD, 1) - process 0
    mpi4py.MPI.Exception: MPI_ERR_TRUNCATE: message truncated
    [node03:4242] *** Process received signal ***  /  [node03:4242] Signal: Segmentation fault (11)
    mpirun detected that one or more processes exited with non-zero status ... Process name: [[15622,1],1] Exit code: 1
    mpirun has exited due to process rank 0 with PID 0 on node node01 exiting improperly
    slurmstepd: error: *** STEP 12.0 ON node03 CANCELLED AT 2026-11-22T10:00:00 DUE TO TIME LIMIT ***
    ./job.sh: line 12:  4242 Segmentation fault      (core dumped) ./prog
    fabrictest: exit status of the launch: 139          (the suite's own job-script line)

:func:`launch_failures` returns them in order of appearance; :func:`describe` makes the one
line a test failure shows, the most telling failure (a signal with its rank and node) first.

A last line without its newline was cut while it was written: a failure begun there is
reported as cut (kind ``cut``: the job failed, its rank, node or status unknown), never read
with a shorter number or name (``exit status ...: 13`` cut to ``1``), and
:func:`exit_statuses` does not read a status from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._util import ends_mid_line

#: the line the suite's job scripts print after each launch (see reframe_tests/fabric_base.py)
EXIT_STATUS_LINE = "fabrictest: exit status of {what}: {status}"
_EXIT_STATUS = re.compile(r"^fabrictest: exit status of (?P<what>.+?): (?P<status>-?\d+)\s*$")

_MPIRUN_SIGNAL = re.compile(
    r"mpirun noticed that process rank (?P<rank>\d+) with PID (?P<pid>\d+) on node (?P<node>\S+)"
    r" exited on signal (?P<signal>\d+)(?: \((?P<name>[^)]*)\))?"
)
_SRUN_TASK = re.compile(
    r"srun: error: (?P<node>[^\s:]+): tasks? (?P<ranks>[\d,\-]+): (?P<what>.+?)\s*$"
)
_ABORT = re.compile(
    r"MPI_ABORT was invoked on rank (?P<rank>\d+) in communicator (?P<comm>\S+)"
    r"(?:\s+with errorcode (?P<code>-?\d+))?"
)
_MPICH_ABORT = re.compile(
    r"application called MPI_Abort\((?P<comm>[^,]+), (?P<code>-?\d+)\) - process (?P<rank>\d+)"
)
_MPI_ERR = re.compile(r"\b(?P<err>MPI_ERR_[A-Z_]+)\b(?::\s*(?P<text>.*?))?\s*$")
_OMPI_SIGNAL = re.compile(
    r"^\[(?P<node>[^:\]\s]+):(?P<pid>\d+)\]\s+Signal: (?P<name>[^(]+?) \((?P<signal>\d+)\)"
)
_OMPI_EXIT = re.compile(
    r"mpirun detected that one or more processes exited with non-zero status.*?"
    r"Process name:\s*\[\[\d+,\d+\],(?P<rank>\d+)\]\s*Exit code:\s*(?P<code>-?\d+)",
    re.S,
)
_OMPI_IMPROPER = re.compile(
    r"mpirun has exited due to process rank (?P<rank>\d+) with PID (?P<pid>\d+) on\s+"
    r"node (?P<node>\S+) exiting improperly"
)
_LOST_DAEMON = re.compile(r"(?:ORTE|PRTE) has lost communication with a remote daemon")
_STEPD = re.compile(
    r"slurmstepd: error: \*\*\* (?P<what>JOB|STEP) (?P<id>\S+) ON (?P<node>\S+) CANCELLED AT \S+"
    r"(?: DUE TO (?P<why>[^*]+?))? \*\*\*"
)
_BASH_SIGNAL = re.compile(
    r"line \d+:\s+\d+ (?P<name>Segmentation fault|Bus error|Aborted|Killed|Floating point "
    r"exception|Illegal instruction)"
)
_SEGV = re.compile(r"Segmentation fault")
# the program never started: Open MPI's banners, srun's stepd. "unable to find" (a name not
# on PATH) prints Node: then Executable:; "could not access or execute" (a path that is not
# there or not executable) prints Executable: then Node:
_OMPI_NOT_FOUND = re.compile(
    r"mpirun was unable to find the specified executable file.*?"
    r"Node:\s*(?P<node>\S+)\s+Executable:\s*(?P<exe>\S+)"
)
_OMPI_NOT_EXECUTABLE = re.compile(
    r"mpirun was unable to launch the specified application as it could not access or "
    r"execute an executable:\s*Executable:\s*(?P<exe>\S+)\s+Node:\s*(?P<node>\S+)"
)
_EXECVE = re.compile(r"slurmstepd: error: execve\(\): (?P<exe>[^:]+): (?P<why>.+?)\s*$")

_SIGNAL_NAMES = {
    "segmentation fault": 11,
    "bus error": 7,
    "aborted": 6,
    "killed": 9,
    "floating point exception": 8,
    "illegal instruction": 4,
}
_SIGNAL_BY_NUMBER = {n: name.capitalize() for name, n in _SIGNAL_NAMES.items()}
_SIGNAL_BY_NUMBER[15] = "Terminated"


@dataclass(frozen=True)
class LaunchFailure:
    """One failure line. ``kind``: ``signal`` (a rank died of a signal), ``abort``
    (MPI_Abort), ``mpi-error`` (an MPI_ERR_* error), ``exit`` (a non-zero exit status),
    ``cancelled`` (Slurm cancelled the step, e.g. time limit), ``lost`` (a launcher daemon
    vanished), ``not-started`` (the launcher could not start the program)."""

    kind: str  # signal | abort | mpi-error | exit | cancelled | lost | not-started | cut
    line: str
    rank: int | None = None
    node: str | None = None
    signal: int | None = None
    signal_name: str | None = None
    code: int | None = None
    detail: str | None = None

    def describe(self) -> str:
        where = " ".join(
            x for x in (f"rank {self.rank}" if self.rank is not None else "",
                        f"on {self.node}" if self.node else "") if x
        )
        if self.kind == "signal":
            sig = f"signal {self.signal}" if self.signal is not None else "a signal"
            name = self.signal_name or _SIGNAL_BY_NUMBER.get(self.signal or 0)
            name = f" ({name})" if name else ""
            return f"{where or self.detail or 'a process'} exited on {sig}{name}"
        if self.kind == "abort":
            code = f" with errorcode {self.code}" if self.code is not None else ""
            return f"MPI_Abort{code} on {where or 'a rank'}"
        if self.kind == "mpi-error":
            return f"MPI error {self.detail}"
        if self.kind == "exit":
            what = self.detail or (where or "a process")
            return f"{what} exited with status {self.code}"
        if self.kind == "not-started":
            return f"the launcher could not start {self.detail}"
        if self.kind == "cancelled":
            return f"Slurm cancelled the {self.detail}"
        if self.kind == "cut":
            return f"a failure line cut short (the output ends mid-line): {self.line[-80:]!r}"
        return self.detail or self.line


def _first_rank(ranks: str) -> int | None:
    m = re.match(r"\d+", ranks)
    return int(m.group(0)) if m else None


def _srun(m: re.Match[str], line: str) -> LaunchFailure:
    what = m.group("what")
    node, rank = m.group("node"), _first_rank(m.group("ranks"))
    code = re.match(r"Exited with exit code (-?\d+)", what)
    if code:
        return LaunchFailure("exit", line, rank=rank, node=node, code=int(code.group(1)),
                             detail=f"rank {rank} on {node}")
    name = re.sub(r"\s*\(core dumped\)", "", what).strip()
    return LaunchFailure("signal", line, rank=rank, node=node,
                         signal=_SIGNAL_NAMES.get(name.lower()), signal_name=name)


def _line_failure(line: str) -> LaunchFailure | None:
    if (m := _EXIT_STATUS.match(line)) is not None:
        status = int(m.group("status"))
        if status == 0:
            return None
        if status > 128:  # the shell's way of saying "killed by signal status-128"
            return LaunchFailure("signal", line, signal=status - 128,
                                 detail=m.group("what"), code=status)
        return LaunchFailure("exit", line, code=status, detail=m.group("what"))
    if (m := _MPIRUN_SIGNAL.search(line)) is not None:
        return LaunchFailure("signal", line, rank=int(m.group("rank")), node=m.group("node"),
                             signal=int(m.group("signal")), signal_name=m.group("name"))
    if (m := _SRUN_TASK.search(line)) is not None:
        return _srun(m, line)
    if (m := _MPICH_ABORT.search(line)) is not None:
        return LaunchFailure("abort", line, rank=int(m.group("rank")), code=int(m.group("code")))
    if (m := _STEPD.search(line)) is not None:
        why = (m.group("why") or "").strip().lower()
        detail = f"{m.group('what').lower()} {m.group('id')} on {m.group('node')}"
        return LaunchFailure("cancelled", line, node=m.group("node"),
                             detail=detail + (f" ({why})" if why else ""))
    if (m := _OMPI_SIGNAL.search(line)) is not None:
        return LaunchFailure("signal", line, node=m.group("node"), signal=int(m.group("signal")),
                             signal_name=m.group("name").strip())
    if (m := _BASH_SIGNAL.search(line)) is not None:
        name = m.group("name")
        return LaunchFailure("signal", line, signal=_SIGNAL_NAMES.get(name.lower()),
                             signal_name=name)
    if (m := _MPI_ERR.search(line)) is not None:
        text = (m.group("text") or "").strip()
        return LaunchFailure("mpi-error", line,
                             detail=m.group("err") + (f": {text}" if text else ""))
    if (m := _EXECVE.search(line)) is not None:
        return LaunchFailure("not-started", line,
                             detail=f"{m.group('exe')} ({m.group('why').strip()})")
    if _LOST_DAEMON.search(line):
        return LaunchFailure("lost", line, detail="the launcher lost a remote daemon")
    if _SEGV.search(line):
        return LaunchFailure("signal", line, signal=11, signal_name="Segmentation fault")
    return None


def launch_failures(text: str | None) -> list[LaunchFailure]:
    """Every failure line in ``text``, in order (none: an empty list; never raises). A failure
    that begins in a last line without its newline is one ``cut`` failure."""
    if not text:
        return []
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not ends_mid_line(text):
        return _failures(text)
    whole = text[: text.rfind("\n") + 1]
    before, after = _failures(whole), _failures(text)
    if after == before:
        return before
    return [*before, LaunchFailure("cut", text[len(whole):].strip())]


def _failures(text: str) -> list[LaunchFailure]:
    out: list[LaunchFailure] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and (failure := _line_failure(line)) is not None:
            out.append(failure)
    flat = re.sub(r"\s+", " ", text)
    # the banners Open MPI spreads over several lines
    for m in _ABORT.finditer(flat):
        code = m.group("code")
        out.append(LaunchFailure("abort", m.group(0), rank=int(m.group("rank")),
                                 code=int(code) if code is not None else None))
    for m in _OMPI_EXIT.finditer(text):
        out.append(LaunchFailure("exit", " ".join(m.group(0).split()), rank=int(m.group("rank")),
                                 code=int(m.group("code"))))
    for pattern, why in ((_OMPI_NOT_FOUND, "not found"),
                         (_OMPI_NOT_EXECUTABLE, "not there or not executable")):
        for m in pattern.finditer(flat):
            out.append(LaunchFailure("not-started", m.group(0), node=m.group("node"),
                                     detail=f"{m.group('exe')} on {m.group('node')} ({why})"))
    for m in _OMPI_IMPROPER.finditer(flat):
        out.append(LaunchFailure("exit", m.group(0), rank=int(m.group("rank")),
                                 node=m.group("node"), detail="exited improperly"))
    if any(f.kind == "not-started" for f in out):
        # a launcher that started nothing exits 132 or 134 (Open MPI): its own status, no
        # process's signal ("exited on signal 4 (Illegal instruction)" would send the reader
        # looking for a crash)
        out = [LaunchFailure("exit", f.line, code=f.code, detail=f.detail)
               if f.kind == "signal" and _EXIT_STATUS.match(f.line) else f for f in out]
    return out


def exit_statuses(text: str | None) -> dict[str, int]:
    """The suite's ``fabrictest: exit status of WHAT: N`` lines, ``{WHAT: N}``."""
    found: dict[str, int] = {}
    text = text or ""
    if ends_mid_line(text):
        text = text[: text.rfind("\n") + 1]  # a status cut short is no status
    for raw in text.splitlines():
        if (m := _EXIT_STATUS.match(raw.strip())) is not None:
            found[m.group("what")] = int(m.group("status"))
    return found


_RANKING = {"not-started": -1, "signal": 0, "abort": 1, "cancelled": 2, "lost": 3, "mpi-error": 4,
            "exit": 5, "cut": 6}


def describe(failures: list[LaunchFailure], limit: int = 3) -> str:
    """One line for a test failure: the most telling failures first (a rank's signal with its
    node beats the launcher's exit status), each once."""
    ordered = sorted(
        enumerate(failures),
        key=lambda item: (_RANKING.get(item[1].kind, 9), item[1].node is None, item[0]),
    )
    seen: list[str] = []
    for _, failure in ordered:
        text = failure.describe()
        if text not in seen:
            seen.append(text)
    more = len(seen) - limit
    head = "; ".join(seen[:limit])
    return head + (f" (+{more} more)" if more > 0 else "")

"""Slurm ``sinfo`` output: the default format, ``-N``/``-Nel`` (node-oriented, long), and
headerless two-column ``sinfo -N -h -o '%N %T'``. Host lists such as
``compute[000000,000003]`` or ``nid[001-004,007]`` are expanded (zero padding kept) by
:mod:`.hostlists`.

What is refused (ParseError), never read first- or last-wins: a row whose ``NODES`` is not the
number of nodes its node list names (the header printed again, a line that is not sinfo's),
a node listed twice in one partition (without a partition column: twice with two
states; a node in two partitions is printed once for each), a last line cut
before its newline. The timestamp of ``-l`` is the line before the header when it is a date as
sinfo prints it (``Fri Jul 09 16:55:43 2021``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import require_text
from .errors import ParseError
from .hostlists import expand

_STAMP = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$")


@dataclass(frozen=True)
class SinfoRow:
    nodelist: str  # as printed (a host list in the default format)
    nodes: list[str]  # expanded names
    partition: str | None  # without the default marker '*'
    state: str | None  # as printed, e.g. "idle", "mix", "down*", "drain"
    default_partition: bool = False
    avail: str | None = None
    timelimit: str | None = None
    fields: dict[str, str] = field(default_factory=dict)  # every column by header name

    @property
    def base_state(self) -> str | None:
        """The state without Slurm's flag suffixes (``*`` not responding, ``~``, ``#``...)."""
        return None if self.state is None else self.state.rstrip("*~#!%$@^-+")


@dataclass
class SinfoResult:
    format: str  # "default" | "long-node" (-Nel / -N -l) | "node" (-N) | "plain"
    rows: list[SinfoRow]
    timestamp: str | None = None

    def node_names(self) -> list[str]:
        """Every node once, in order of appearance."""
        seen: dict[str, None] = {}
        for row in self.rows:
            for name in row.nodes:
                seen.setdefault(name, None)
        return list(seen)

    def partitions(self) -> list[str]:
        seen: dict[str, None] = {}
        for row in self.rows:
            if row.partition:
                seen.setdefault(row.partition, None)
        return list(seen)

    def default_partition(self) -> str | None:
        for row in self.rows:
            if row.default_partition:
                return row.partition
        return None

    def states(self) -> dict[str, str]:
        """node -> state (the last row naming it wins)."""
        out: dict[str, str] = {}
        for row in self.rows:
            for name in row.nodes:
                if row.state is not None:
                    out[name] = row.state
        return out

    def nodes_in_state(self, *states: str) -> list[str]:
        wanted = {s.lower() for s in states}
        return [n for n, s in self.states().items() if s.rstrip("*~#!%$@^-+").lower() in wanted]


def parse_sinfo(text: str) -> SinfoResult:
    text = require_text(text, "sinfo")
    if not text.endswith("\n"):  # sinfo ends every line: the last one was cut while printed
        last = text.rsplit("\n", 1)[-1]
        raise ParseError(f"sinfo: output ends mid-line ({last[:60]!r} has no newline): cut "
                         "short?")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    timestamp = None
    header_i = None
    for i, line in enumerate(lines):
        upper = line.split()
        if (
            upper
            and upper[0] in ("PARTITION", "NODELIST", "HOSTNAMES", "NODE_NAME")
            or ("NODELIST" in upper and "STATE" in upper)
        ):
            header_i = i
            break
    if header_i is None:
        # headerless: "%N %T" (node state) lines
        rows = []
        for line in lines:
            tok = line.split()
            if len(tok) != 2:
                raise ParseError(f"not sinfo output: no header and not 'NODE STATE': {line!r}")
            rows.append(SinfoRow(tok[0], expand(tok[0], "sinfo node list"), None, tok[1]))
        _once(rows)
        return SinfoResult("plain", rows)
    if header_i > 0 and _STAMP.match(lines[header_i - 1].strip()):
        timestamp = lines[header_i - 1].strip()
    header = lines[header_i].split()
    rows = []
    for line in lines[header_i + 1 :]:
        tok = line.split()
        if len(tok) < len(header):
            # REASON may be empty; pad, but a shorter row than that is not sinfo's
            if len(tok) < len(header) - 1:
                raise ParseError(f"sinfo row has {len(tok)} columns, header {len(header)}")
            tok = tok + [""]
        values = dict(zip(header[:-1], tok[: len(header) - 1], strict=True))
        values[header[-1]] = " ".join(tok[len(header) - 1 :])
        nodelist = values.get("NODELIST") or values.get("HOSTNAMES") or values.get("NODE_NAME", "")
        part = values.get("PARTITION")
        # an empty partition's row: 0 nodes, node list "n/a"
        nodes = expand(nodelist, "sinfo node list") if nodelist not in ("", "n/a") else []
        if "NODES" in values and values["NODES"] != str(len(nodes)):
            raise ParseError(f"sinfo row {line.strip()[:80]!r}: NODES {values['NODES']!r}, but "
                             f"its node list names {len(nodes)}")
        rows.append(
            SinfoRow(
                nodelist=nodelist,
                nodes=nodes,
                partition=part.rstrip("*") if part else None,
                state=values.get("STATE"),
                default_partition=bool(part and part.endswith("*")),
                avail=values.get("AVAIL"),
                timelimit=values.get("TIMELIMIT"),
                fields=values,
            )
        )
    if not rows:
        raise ParseError(f"sinfo output has a header and no rows: {lines[header_i].strip()!r}")
    _once(rows)
    if header[0] == "PARTITION":
        fmt = "default"
    else:
        fmt = "long-node" if "CPUS" in header and "REASON" in header else "node"
    return SinfoResult(fmt, rows, timestamp)


def _once(rows: list[SinfoRow]) -> None:
    """A node is in one row of a partition (sinfo's rows group the nodes of a partition by
    state): a second one is another output's, or the same row again with other figures.
    Without a partition column (``sinfo -N -o '%N %T'``) a node in two partitions is printed
    once per partition, with its one state: that is accepted, another state is not."""
    seen: dict[tuple[str | None, str], str | None] = {}
    for row in rows:
        for name in row.nodes:
            key = (row.partition, name)
            if key in seen and (row.partition is not None or seen[key] != row.state):
                where = f" of partition {row.partition}" if row.partition else (
                    f" ({seen[key]} and {row.state})")
                raise ParseError(f"sinfo: node {name} in two rows{where}")
            seen[key] = row.state

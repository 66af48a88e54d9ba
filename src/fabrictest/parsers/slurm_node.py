"""``scontrol -o show node NAME`` -> the node's state flags and its reason.

One line per node: ``NodeName=node03 Arch=x86_64 ... State=IDLE+DRAIN ... Reason=fabric-health:
node03 eth0/- lldp: FAIL ... [root@2026-11-26T10:02:11]``. The reason runs to the ``[user@time]``
Slurm appends, or to the end of the line; it may hold spaces and ``=``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._util import require_text
from .errors import ParseError

_NAME_RE = re.compile(r"(?:^|\s)NodeName=(\S+)")
_STATE_RE = re.compile(r"(?:^|\s)State=(\S+)")
_REASON_RE = re.compile(r"(?:^|\s)Reason=(.*?)(?:\s+\[[^\]]*@[^\]]*\])?\s*$")


@dataclass(frozen=True)
class SlurmNode:
    name: str
    state: str  # IDLE+DRAIN, DOWN*, MIXED ...
    reason: str = ""

    @property
    def flags(self) -> set[str]:
        return {f.rstrip("*~#$@%!^-") for f in self.state.upper().split("+")}

    @property
    def drained(self) -> bool:
        """DRAIN set (DRAINING or DRAINED both print as +DRAIN in State)."""
        return "DRAIN" in self.flags or "DRAINED" in self.flags or "DRAINING" in self.flags


def parse_slurm_nodes(text: str) -> dict[str, SlurmNode]:
    """Every ``NodeName=`` line of ``scontrol -o show node``."""
    text = require_text(text, "scontrol show node")
    out: dict[str, SlurmNode] = {}
    for line in text.splitlines():
        name = _NAME_RE.search(line)
        if not name:
            continue
        state = _STATE_RE.search(line)
        if not state:
            raise ParseError(f"scontrol show node: {name.group(1)} has no State=")
        reason = _REASON_RE.search(line)
        out[name.group(1)] = SlurmNode(name.group(1), state.group(1),
                                       reason.group(1).strip() if reason else "")
    if not out:
        raise ParseError("not scontrol show node output: no 'NodeName=' line")
    return out


__all__ = ["SlurmNode", "parse_slurm_nodes"]

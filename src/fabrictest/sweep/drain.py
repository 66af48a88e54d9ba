"""Quarantine: put the sweep's suspect nodes into Slurm's DRAIN state, with the evidence.

`fabric-sweep --drain` prints the `scontrol update NodeName=... State=DRAIN Reason=...`
command of every named suspect, and runs them only with `--confirm` (`--yes`). It drains
nothing, and says why, when the verdict is not whole (interrupted, an undecided side, a run
that failed with no suspect to explain it, the cluster as a whole below its reference) or
when more than `--max-drain-fraction` of the swept nodes would go: a fault that wide is the
fabric or the measurement more likely than the nodes, and draining it would empty the
partition.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field

from ..topology_source import SCONTROL_TIMEOUT
from .options import UsageError, parse_number

DEFAULT_MAX_FRACTION = 0.25
REASON_LIMIT = 240  # Slurm keeps the reason as one line; the JSON has the whole evidence


@dataclass
class DrainPlan:
    commands: list[list[str]] = field(default_factory=list)
    refused: str = ""  # why nothing is drained, when the verdict does not allow it

    def lines(self, confirmed: bool) -> list[str]:
        if self.refused:
            return [f"drain: refused: {self.refused}"]
        if not self.commands:
            return ["drain: nothing to drain"]
        head = "drain:" if confirmed else "drain (dry run; --confirm to run):"
        return [f"{head} {shlex.join(c)}" for c in self.commands]


def add_options(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("quarantine")
    g.add_argument("--drain", action="store_true",
                   help="put each suspect node into Slurm's DRAIN state with the evidence as "
                        "the reason; prints the scontrol commands unless --confirm")
    g.add_argument("--confirm", "--yes", dest="confirm", action="store_true",
                   help="with --drain: run the scontrol commands")
    g.add_argument("--max-drain-fraction", type=parse_number, default=DEFAULT_MAX_FRACTION,
                   help="drain nothing when more than this share of the swept nodes would be "
                        f"drained (default {DEFAULT_MAX_FRACTION:g})")


def check_options(args: argparse.Namespace) -> None:
    """Refused before any run: --confirm alone, a fraction outside (0, 1], draining a
    simulated cluster, or no scontrol to drain with."""
    f = args.max_drain_fraction
    if not (0.0 < f <= 1.0):
        raise UsageError(f"--max-drain-fraction must be in (0, 1], got {f:g}")
    if args.confirm and not args.drain:
        raise UsageError("--confirm runs the commands of --drain: give --drain too")
    if args.drain and args.confirm:
        if args.launcher == "sim":
            raise UsageError("--drain --confirm drains real nodes: not with --launcher sim "
                             "(leave out --confirm to see the commands)")
        if shutil.which("scontrol") is None:
            raise UsageError("--drain --confirm needs scontrol on PATH")


def reason(line: str) -> str:
    text = " ".join(f"fabric-sweep: {line.removeprefix('suspect: ')}".split())
    return text if len(text) <= REASON_LIMIT else text[:REASON_LIMIT - 3] + "..."


def plan(res, max_fraction: float) -> DrainPlan:
    """The scontrol commands for the suspects of a SweepResult, or why none may run."""
    v = res.verdict
    if res.interrupted:
        return DrainPlan(refused="the sweep was interrupted: its verdict is not whole")
    if v.undecided:
        return DrainPlan(refused=f"{len(v.undecided)} node-directions are undecided: the "
                                 "verdict is not whole")
    if v.failed_runs:
        return DrainPlan(refused=f"{len(v.failed_runs)} runs failed that no suspect explains")
    if v.notes:
        what = ("the whole cluster is below its reference" if v.notes[0].startswith("below")
                else "the verdict is about the cluster or a pair, not about nodes")
        return DrainPlan(refused=f"{what} ({v.notes[0]}): a node drain does not fix that")
    named = [s for s in v.suspects if s.kind != "uplink"]  # a link is not drained
    nodes = [s.node for s in named]
    n = len(res.nodes)
    if n and len(nodes) > max_fraction * n:
        return DrainPlan(refused=(
            f"{len(nodes)} of {n} nodes would be drained ({100 * len(nodes) / n:.0f}% > "
            f"--max-drain-fraction {100 * max_fraction:g}%): a fault this wide is more likely "
            "the fabric or the measurement than the nodes"))
    cmds = [["scontrol", "update", f"NodeName={s.node}", "State=DRAIN",
             f"Reason={reason(s.line(v.level, v.unit))}"] for s in named]
    return DrainPlan(commands=cmds)


def execute(p: DrainPlan) -> list[str]:
    """Run the commands; a line per node that could not be drained (empty: all drained)."""
    errors = []
    for cmd in p.commands:
        node = cmd[2].removeprefix("NodeName=")
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=SCONTROL_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as err:
            errors.append(f"drain: failed: {node}: {err}")
            continue
        if proc.returncode != 0:
            why = " ".join((proc.stderr or proc.stdout).split())[:200]
            errors.append(f"drain: failed: {node}: scontrol exit {proc.returncode}: {why}")
    return errors

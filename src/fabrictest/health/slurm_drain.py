"""``fabric-health --drain``: the checks as Slurm's health check (``HealthCheckProgram``), by
LBNL NHC's convention: a failing node is drained with the first failure as its reason
(``fabric-health: eth0/- lldp: FAIL found sw2 port p1, expected sw1 port p1 ...``), and a node
this program drained is resumed once every check passes again. A node drained by someone else
(an administrator's reason) is left as it is, failing or not.

Slurm runs the program as root on each node every ``HealthCheckInterval`` seconds; it acts on
nothing the program exits with, so the program calls ``scontrol`` itself. One line says what
it did: ``HEALTH <node> slurm: drained|resumed|left drained|unchanged: ...``.
"""

from __future__ import annotations

import shutil
import subprocess

from fabrictest.parsers import ParseError
from fabrictest.parsers.health import CheckResult
from fabrictest.parsers.slurm_node import parse_slurm_nodes

#: the reasons this program writes begin so (NHC's are "NHC: ..."): only those it resumes
REASON_PREFIX = "fabric-health:"
#: Slurm keeps reasons short in its listings; the first failure says enough
MAX_REASON = 200
SCONTROL_TIMEOUT_S = 30.0


def reason_for(failures: list[CheckResult]) -> str:
    """``fabric-health: eth0/- lldp: found ..., expected ... (+2 more)``, at most
    :data:`MAX_REASON` characters, on one line."""
    first = failures[0]
    text = f"{REASON_PREFIX} {first.device}/{first.port} {first.check}: {first.detail}"
    more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
    text = " ".join(text.split())
    if len(text) + len(more) > MAX_REASON:
        text = text[:MAX_REASON - len(more) - 3].rstrip() + "..."
    return text + more


def _scontrol(*args: str) -> tuple[str | None, str | None]:
    exe = shutil.which("scontrol")
    if exe is None:
        return None, "scontrol not found"
    try:
        proc = subprocess.run([exe, *args], capture_output=True, text=True,
                              timeout=SCONTROL_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"scontrol {args[0]} gave no answer within {SCONTROL_TIMEOUT_S:g} s"
    except OSError as err:
        return None, f"scontrol: {err.strerror or err}"
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        return None, f"scontrol {args[0]} exited {proc.returncode}" + (
            f": {said[-1][:160]}" if said else "")
    return proc.stdout, None


def apply(node: str, results: list[CheckResult]) -> tuple[str, bool]:
    """Drain or resume ``node`` by its results; (the line saying what was done, ok). ``ok`` is
    False when Slurm could not be asked or told."""
    out, problem = _scontrol("-o", "show", "node", node)
    if out is None:
        return f"HEALTH {node} slurm: unchanged: {problem}", False
    try:
        state = parse_slurm_nodes(out).get(node)
    except ParseError as err:
        return f"HEALTH {node} slurm: unchanged: {err}", False
    if state is None:
        return f"HEALTH {node} slurm: unchanged: Slurm knows no node {node}", False
    ours = state.reason.startswith(REASON_PREFIX)
    failures = [r for r in results if not r.ok]
    if failures:
        reason = reason_for(failures)
        if state.drained and not ours:
            return f"HEALTH {node} slurm: left drained: {state.reason}", True
        if state.drained and state.reason == reason:
            return f"HEALTH {node} slurm: unchanged: drained: {reason}", True
        _, problem = _scontrol("update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}")
        if problem:
            return f"HEALTH {node} slurm: not drained: {problem}", False
        return f"HEALTH {node} slurm: drained: {reason}", True
    if state.drained and ours:
        _, problem = _scontrol("update", f"NodeName={node}", "State=RESUME")
        if problem:
            return f"HEALTH {node} slurm: not resumed: {problem}", False
        return f"HEALTH {node} slurm: resumed (was: {state.reason})", True
    return f"HEALTH {node} slurm: unchanged: {state.state}", True


__all__ = ["REASON_PREFIX", "apply", "reason_for"]

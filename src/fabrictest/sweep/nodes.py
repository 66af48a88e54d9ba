"""Which nodes to sweep: a hostlist expression, a Slurm allocation or a Slurm partition.

Expressions are expanded by the package's one hostlist reader (`parsers/hostlists.py`: the
maintained `python-hostlist` library, Slurm's syntax: `node[01-04]`, `nid00[1000-1063],login1`,
at most 100,000 names), so host files built by hand are not needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence

from ..parsers import hostlists
from ..parsers.errors import ParseError


class NodeSetError(ValueError):
    """The node set could not be determined or is unusable."""


def expand(expr: str | Iterable[str]) -> list[str]:
    """Expand one or more hostlist expressions, keep the first occurrence of each name."""
    if isinstance(expr, str):
        exprs = [expr]
    else:
        exprs = list(expr)
    out: list[str] = []
    seen: set[str] = set()
    for e in exprs:
        e = e.strip()
        if not e:
            continue
        try:
            names = hostlists.expand(e, "hostlist expression")
        except ParseError as err:
            raise NodeSetError(str(err)) from None
        for name in names:
            if name not in seen:
                seen.add(name)
                out.append(name)
    return out


def collect(names: Sequence[str]) -> str:
    """The compact hostlist expression of `names` (node01,node02 -> node[01-02])."""
    return hostlists.compress(names)


def from_file(path: str) -> list[str]:
    """Names from a host file (one name or expression per line, `#` comments, `a slots=2`)."""
    exprs = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.split("#", 1)[0].strip()
                if line:
                    exprs.append(line.split()[0].split(":")[0])
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise NodeSetError(f"host file {path}: {why}") from None
    if not exprs:
        raise NodeSetError(f"host file {path} names no node")
    return expand(exprs)


def from_allocation(env: dict[str, str] | None = None) -> list[str]:
    """The nodes of the current Slurm allocation (SLURM_JOB_NODELIST / SLURM_NODELIST)."""
    env = os.environ if env is None else env
    value = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not value:
        raise NodeSetError("not inside a Slurm allocation (SLURM_JOB_NODELIST is not set)")
    return expand(value)


def _run(cmd: list[str]) -> str:
    if shutil.which(cmd[0]) is None:
        raise NodeSetError(f"{cmd[0]} not found on PATH")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as err:
        raise NodeSetError(f"{' '.join(cmd)} did not answer within 60 s") from err
    if proc.returncode != 0:
        raise NodeSetError(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")
    return proc.stdout


def from_partition(partition: str, states: str | None = None) -> list[str]:
    """The nodes of a Slurm partition (`sinfo -h -p P -o %N`), optionally only in `states`."""
    cmd = ["sinfo", "-h", "-p", partition, "-o", "%N"]
    if states:
        cmd += ["-t", states]
    out = _run(cmd)
    names = expand([line for line in out.split() if line])
    if not names:
        raise NodeSetError(f"partition {partition!r} has no nodes")
    return names


def resolve(
    nodes: str | Sequence[str] | None = None,
    partition: str | None = None,
    hostfile: str | None = None,
    env: dict[str, str] | None = None,
) -> list[str]:
    """The node set from the first of: expression(s), host file, partition, allocation."""
    if nodes:
        names = expand(nodes)
    elif hostfile:
        names = from_file(hostfile)
    elif partition:
        names = from_partition(partition)
    else:
        names = from_allocation(env)
    if len(names) < 2:
        raise NodeSetError(f"a sweep needs at least 2 nodes, got {names}")
    return names

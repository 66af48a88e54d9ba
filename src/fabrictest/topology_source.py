"""Where a fabric topology is read from, for every command that takes ``--topology FILE|slurm``
(``fabric-sweep``, ``fabric-report attribute``): a Slurm ``topology.conf`` (tree or block), the
output of ``scontrol show topology``, our own file (``SWITCH: NODES parent=SWITCH``), or
``slurm`` to ask ``scontrol`` itself. The texts are turned into a
:class:`~fabrictest.parsers.topology.Topology` by the pure parsers; this module only fetches
them, and what Slurm says beside them: a tree is a dragonfly's when Slurm is configured with
``TopologyParam=dragonfly`` (``scontrol show config``, or the ``slurm.conf`` next to a
``topology.conf``, where Slurm keeps it)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .parsers.errors import ParseError
from .parsers.topology import ROUTINGS, Topology, parse_any_topology, parse_scontrol_topology

#: seconds ``scontrol`` may take to answer
SCONTROL_TIMEOUT = 60.0
_DRAGONFLY = re.compile(r"(?im)^\s*TopologyParam\s*=\s*\S*\bdragonfly\b")


class TopologyError(ValueError):
    """One line naming the option's value and what went wrong."""


def _scontrol(*args: str) -> str:
    proc = subprocess.run(["scontrol", *args], capture_output=True, text=True,
                          timeout=SCONTROL_TIMEOUT)
    if proc.returncode != 0:
        raise TopologyError(f"--topology slurm: scontrol {' '.join(args)} failed: "
                            + " ".join((proc.stderr or proc.stdout).split())[:200])
    return proc.stdout


def _slurm_says_dragonfly(spec: str) -> bool:
    """TopologyParam=dragonfly in Slurm's configuration (asked, or the slurm.conf beside a
    topology.conf); False when it cannot be read (a plain tree, as Slurm then treats it)."""
    try:
        if spec == "slurm":
            text = _scontrol("show", "config")
            return bool(_DRAGONFLY.search(text))
        conf = Path(spec).resolve().parent / "slurm.conf"
        return bool(_DRAGONFLY.search(conf.read_text(errors="replace")))
    except (OSError, TopologyError, subprocess.TimeoutExpired):
        return False


def read_topology(spec: str, routing: str | None = None) -> Topology:
    """The topology ``spec`` names (a file, or ``slurm``), with the fabric's routing rule
    when given; TopologyError when it cannot be read or parsed."""
    if routing is not None and routing not in ROUTINGS:
        raise TopologyError(f"--routing {routing}: one of {', '.join(ROUTINGS)}")
    try:
        if spec == "slurm":
            topo = parse_scontrol_topology(_scontrol("show", "topology"))
        else:
            try:
                with open(spec, encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError) as err:
                raise TopologyError(f"--topology {spec}: "
                                    f"{getattr(err, 'strerror', None) or err}") from None
            topo = parse_any_topology(text)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise TopologyError(f"--topology slurm: cannot run scontrol: {err}") from None
    except ParseError as err:
        raise TopologyError(f"--topology {spec}: {err}") from None
    dragonfly = (True if topo.source == "scontrol" and topo.shape == "tree"
                 and _slurm_says_dragonfly(spec) else None)
    return topo.configured(routing=routing, dragonfly=dragonfly)

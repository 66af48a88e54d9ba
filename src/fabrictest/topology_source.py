"""Where a fabric topology is read from, for every command that takes ``--topology FILE|slurm``
(``fabric-sweep``, ``fabric-report attribute``): a Slurm ``topology.conf``, the output of
``scontrol show topology``, our own file (``SWITCH: NODES parent=SWITCH``), or ``slurm`` to ask
``scontrol`` itself. The texts are turned into a :class:`~fabrictest.parsers.topology.Topology`
by the pure parsers; this module only fetches them."""

from __future__ import annotations

import subprocess

from .parsers.errors import ParseError
from .parsers.topology import Topology, parse_scontrol_topology, parse_topology_file

#: seconds ``scontrol`` may take to answer
SCONTROL_TIMEOUT = 60.0


class TopologyError(ValueError):
    """One line naming the option's value and what went wrong."""


def read_topology(spec: str) -> Topology:
    """The topology ``spec`` names (a file, or ``slurm``); TopologyError when it cannot be
    read or parsed."""
    try:
        if spec == "slurm":
            proc = subprocess.run(["scontrol", "show", "topology"], capture_output=True,
                                  text=True, timeout=SCONTROL_TIMEOUT)
            if proc.returncode != 0:
                raise TopologyError("--topology slurm: scontrol show topology failed: "
                                    + " ".join((proc.stderr or proc.stdout).split())[:200])
            return parse_scontrol_topology(proc.stdout)
        try:
            with open(spec, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as err:
            raise TopologyError(f"--topology {spec}: "
                                f"{getattr(err, 'strerror', None) or err}") from None
        return (parse_scontrol_topology(text) if "SwitchName=" in text
                else parse_topology_file(text))
    except (OSError, subprocess.TimeoutExpired) as err:
        raise TopologyError(f"--topology slurm: cannot run scontrol: {err}") from None
    except ParseError as err:
        raise TopologyError(f"--topology {spec}: {err}") from None

"""What the sweep takes from the system when not told: Slurm's topology and the system's
reference.

A sweep judges nodes against the cluster's own level, so a fault every pair shares passes: a
slow uplink that every screening pair crosses (its rate became "the level"), or every link
slower alike. Where Slurm knows the switches (`scontrol show topology`) and the system has a
calibrated reference (`reference/<system>.yaml`: TxRxTest paired stream_gbps), an experienced
engineer would use both, so the sweep does unless told not to (`--no-topology`,
`--no-reference`). The system is ReFrame's (`$RFM_SYSTEM`, before any `:partition`) or else
Slurm's cluster name (`$SLURM_CLUSTER_NAME`, set in every allocation); its file is where every
reader finds the references (`fabrictest.references.reference_file`: `$RFM_REFERENCE_PREFIX`,
else the suite's own `reference/`). When no reference applies, the summary says why the level
is unjudged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..references import reference_file
from ..topology_source import TopologyError, read_topology
from .expectation import Expectation, ExpectationError, from_reference


def system_name(env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    system = (env.get("RFM_SYSTEM") or "").split(":", 1)[0].strip()
    return system or (env.get("SLURM_CLUSTER_NAME") or "").strip() or None


def system_expectation(method: str, shaping: dict[str, int],
                       env: Mapping[str, str] | None = None, nodes: int | None = None
                       ) -> tuple[Expectation | None, str]:
    """(the system's reference rate for a sweep of `nodes`, '') or (None, why there is
    none)."""
    system = system_name(env)
    if system is None:
        return None, "no system named ($RFM_SYSTEM or Slurm's $SLURM_CLUSTER_NAME)"
    path = reference_file(system)
    if not path.is_file():
        return None, f"system {system} has no reference file ({path})"
    try:
        exp = from_reference(path, system, method, shaping, nodes)
    except ExpectationError as err:
        return None, f"the system's reference does not apply: {err}"
    return Expectation(value=exp.value, lower=exp.lower, unit=exp.unit,
                       source=f"{exp.source}, the system's reference",
                       measured_with=exp.measured_with), ""


def slurm_topology(names: Sequence[str]) -> tuple[str | None, str]:
    """('slurm', '') when `scontrol show topology` places the swept nodes under at least two
    leaf switches (an uplink to tell apart), else (None, why not)."""
    try:
        topo = read_topology("slurm")
    except TopologyError as err:
        return None, f"Slurm has none ({str(err).removeprefix('--topology slurm: ')})"
    where = topo.switch_of()
    leaves = {where[n] for n in names if n in where}
    if len(leaves) < 2:
        return None, (f"the swept nodes hang from {len(leaves)} switch"
                      f"{'' if len(leaves) == 1 else 'es'} of Slurm's topology: no uplink "
                      "between them")
    return "slurm", ""

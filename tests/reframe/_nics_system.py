"""A scratch ReFrame system, ``nics``: this host under the local scheduler, declaring what
`local` lacks for the families that need a fabric NIC (NicHealthTest: ``fabric_nics``;
PerftestWriteBwTest: ``+rdma +perftest`` and 2 nodes, both ranks here). Written beside a test
and added to RFM_CONFIG_FILES, so that those families run here with stand-in programs."""

from __future__ import annotations

import os
from pathlib import Path

NICS = '''import os
_root = [["OMPI_ALLOW_RUN_AS_ROOT", "1"], ["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"]] \\
    if os.geteuid() == 0 else []
site_configuration = {
    "systems": [{
        "name": "nics", "descr": "this host: one named fabric NIC (lo), +rdma +perftest",
        "hostnames": ["^$"], "modules_system": "nomod",
        "partitions": [{
            "name": "default", "descr": "this host", "scheduler": "local",
            "launcher": "mpirun-onehost", "environs": ["openmpi"],
            "features": ["mpi", "rdma", "perftest"], "max_jobs": 1, "env_vars": _root,
            "extras": {"num_nodes": 2, "ranks_per_node": 2, "fabric_nics": ["lo"],
                       "line_rate_gbps": 100, "rdma_device": "mlx5_0"}}]}],
    "environments": [{"name": "openmpi", "target_systems": ["nics"], "cc": "mpicc",
                      "cxx": "mpicxx", "ftn": "mpif90", "features": ["mpi", "openmpi"]}],
}
'''


def nics_config(tmp: Path) -> dict[str, str]:
    """The environment (RFM_CONFIG_FILES) that adds the ``nics`` system to the project's."""
    from _rfm import SETTINGS

    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "nics_system.py"
    path.write_text(NICS)
    return {"RFM_CONFIG_FILES": f"{SETTINGS}{os.pathsep}{path}"}

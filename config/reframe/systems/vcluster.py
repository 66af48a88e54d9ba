"""`vcluster`: the local Slurm cluster over network namespaces (``vcluster up``, docs/vcluster.md).

Nodes ``node01..nodeNN`` are network namespaces on this machine joined by veth links (shaped to
a steady rate with ``tbf``) to a bridge; jobs go through the real Slurm path: ``sbatch`` from
here, ``srun --mpi=pmix`` (Slurm's ``MpiDefault``) on the nodes, Open MPI over TCP on the bridge.

What this module reads from the running cluster's state directory (``$VCLUSTER_STATE_DIR`` or
``<tmp>/fabrictest-vcluster``) when ReFrame loads its configuration:

* the number of nodes (partition extras ``num_nodes``/``nodes``);
* whether accounting is on (``vcluster up --accounting``): then the scheduler is ReFrame's
  ``slurm`` (it needs ``sacct``), otherwise ``squeue`` (no slurmdbd needed).
  The partition's name is ``nodes`` either way, so references do not depend on it;
* ``SLURM_CONF`` for ReFrame's own ``sbatch``/``squeue`` calls: set here when this process runs
  ``--system vcluster`` and the shell has not set it (``eval $(vcluster env)`` does it too).

Partition features ``osu``/``imb`` are added when those binaries are found (``OSU_HOME``,
``IMB_HOME`` or ``PATH``), as the tests expect.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

try:  # the installed distribution (the venv the README activates)
    from fabrictest.vcluster.plan import Plan, default_state_dir
except ImportError:  # pragma: no cover - configuration read without the project's venv
    Plan = None

    def default_state_dir() -> Path:
        env = os.environ.get("VCLUSTER_STATE_DIR")
        return Path(env) if env else Path(tempfile.gettempdir()) / "fabrictest-vcluster"


def _plan():
    """The running cluster's plan, or a 4-node default (so --dry-run and listing work)."""
    state = default_state_dir()
    data = {}
    try:
        data = json.loads((state / "cluster.json").read_text())
    except (OSError, ValueError):
        data = {"state_dir": str(state)}
    if Plan is None:
        return None, data
    try:
        return Plan.from_json({**data, "state_dir": data.get("state_dir", str(state))}), data
    except Exception:  # noqa: BLE001 - a broken state file must not break every ReFrame run
        return Plan(state_dir=state), data


def _selected() -> bool:
    """Is this ReFrame process running `--system vcluster[:...]`?"""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        value = None
        if arg == "--system" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--system="):
            value = arg.split("=", 1)[1]
        if value is not None:
            return value.split(":")[0] == "vcluster"
    return os.environ.get("RFM_SYSTEM", "").split(":")[0] == "vcluster"


def _has_osu() -> bool:
    home = os.environ.get("OSU_HOME")
    if home and any(Path(home).rglob("osu_bw")):
        return True
    return shutil.which("osu_bw") is not None


def _has_imb() -> bool:
    home = os.environ.get("IMB_HOME")
    if home and ((Path(home) / "IMB-MPI1").exists() or (Path(home) / "bin" / "IMB-MPI1").exists()):
        return True
    return shutil.which("IMB-MPI1") is not None


PLAN, _STATE = _plan()
NUM_NODES = PLAN.nodes if PLAN else int(_STATE.get("nodes", 4))
NODES = [f"node{i:02d}" for i in range(1, NUM_NODES + 1)]
ACCOUNTING = bool(PLAN.accounting if PLAN else _STATE.get("accounting", False))
SLURM_CONF = str(PLAN.slurm_conf if PLAN else default_state_dir() / "etc" / "slurm.conf")
JOB_ENV = dict(PLAN.mpi_env()) if PLAN else {}
JOB_ENV["SLURM_CONF"] = SLURM_CONF

if _selected():
    os.environ.setdefault("SLURM_CONF", SLURM_CONF)

_features = ["mpi", "slurm"]
if _has_osu():
    _features.append("osu")
if _has_imb():
    _features.append("imb")

system = {
    "name": "vcluster",
    "descr": f"vcluster: {NUM_NODES} Slurm nodes in network namespaces on this machine",
    # Inside a node (hostname nodeNN) or on the controller ReFrame would detect this system;
    # from the host it is chosen with --system vcluster.
    "hostnames": [r"^node\d{2,}$", r"^vcctl$"],
    "modules_system": "nomod",
    "partitions": [
        {
            "name": "nodes",
            "descr": f"node[01-{NUM_NODES:02d}] over veth links "
            f"({'slurm + sacct' if ACCOUNTING else 'squeue, no accounting'})",
            "scheduler": "slurm" if ACCOUNTING else "squeue",
            "launcher": "srun",
            # Whole nodes: two tests must not share a node's link.
            "access": ["--partition=vc", "--exclusive"],
            "environs": ["openmpi"],
            "features": _features,
            "max_jobs": 4,
            "time_limit": "10m",
            # A job that can never start (too many ranks per node, a node down) is cancelled
            # and its test fails, instead of pending until the time limit.
            "sched_options": {
                "slurm_job_cancel_reasons": [
                    "ReqNodeNotAvail", "PartitionConfig", "PartitionNodeLimit", "BadConstraints",
                    "NodeDown",
                ],
            },
            "env_vars": [[k, v] for k, v in JOB_ENV.items()],
            "extras": {
                "nodes": NODES,
                "num_nodes": NUM_NODES,
                "ranks_per_node": 2,
                "max_ranks_per_node": PLAN.cpus if PLAN else 4,
                "launcher_options": [],
                # OSU multi-pair scopes (meaningless on one bridge: every scope is all nodes)
                "node_sets": {s: f"node[01-{NUM_NODES:02d}]" for s in ("switch", "group", "global")},
                "link_rate": PLAN.default_rate if PLAN else None,
                # all-to-many: per-iteration times below 10 ms are noise on shared cores
                "alltomany_noise_floor_s": 0.01,
            },
        }
    ],
}

environments = [
    {
        "name": "openmpi",
        "target_systems": ["vcluster"],
        "cc": "mpicc",
        "cxx": "mpicxx",
        "ftn": "mpif90",
        "features": ["mpi", "openmpi"],
    }
]

"""Node-pair sweep: `fabric-sweep` inside one allocation of every node of a partition.

The job script runs `fabric-sweep --launcher slurm` once (local launcher); the sweep itself
starts concurrent `srun` steps, each pinned to its two nodes, in a few rounds (two screening
matchings and a confirmation round), and ends with `suspect: NODE ...` lines or
`suspects: none`.

Sanity: the verdict is printed and, unless `-S SweepTest.fail_on_suspect=false`, names no
suspect (the suspects and their evidence are the failure message).
Performance: each node's own figure (median of its pairs with partners that are not
suspects; Gbps, one variable per node) and the cluster's level; `sweep.json` is kept in the output directory for `fabric-report html`.
Skipped with a reason on partitions of fewer than two nodes or without Slurm.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable


def _fabric_sweep() -> str:
    cand = Path(sys.executable).parent / "fabric-sweep"
    return str(cand) if cand.exists() else (shutil.which("fabric-sweep") or "fabric-sweep")


@rfm.simple_test
class SweepTest(rfm.RunOnlyRegressionTest):
    descr = "node-pair sweep: isolate slow or unreachable nodes in a few rounds"
    valid_systems = ["+slurm"]
    valid_prog_environs = ["+mpi"]
    method = parameter(["mpi", "rdma"])
    scenario = variable(str, value="sweep")
    nmsg = variable(int, value=500)
    msg_size = variable(int, value=65536)
    pair_timeout = variable(int, value=120)
    rounds = variable(int, value=2)
    seed = variable(int, value=-1)
    fail_on_suspect = variable(typ.Bool, value=True)
    sweep_options = variable(list, value=[])
    time_limit = "30m"
    sourcesdir = None
    keep_files = ["sweep.json"]
    maintainers = ["fabrictest"]
    tags = {"fabric", "sweep"}

    def _nodes(self) -> int:
        extras = self.current_partition.extras
        nodes = extras.get("nodes") or []
        return int(extras.get("num_nodes", len(nodes) if nodes else 1))

    @run_after("setup")
    def check_partition(self):
        n = self._nodes()
        self.skip_if(n < 2, f"{self.current_partition.fullname} has {n} node(s): a sweep "
                            "needs at least 2")
        self.skip_if(self.method == "rdma" and "rdma" not in self.current_partition.features,
                     "partition has no RDMA NIC (+rdma)")
        self.skip_if(self.current_partition.scheduler.registered_name == "local",
                     "the sweep runs srun steps inside an allocation: needs a Slurm partition")

    @run_before("run")
    def configure(self):
        n = self._nodes()
        self.num_tasks = n
        self.num_tasks_per_node = 1
        self.job.launcher = getlauncher("local")()  # one fabric-sweep; it starts the steps
        self.executable = _fabric_sweep()
        opts = [
            "--launcher", "slurm", "--test", "txrx", "--method", self.method,
            "--msg-size", str(self.msg_size), "--nmsg", str(self.nmsg),
            "--pair-timeout", str(self.pair_timeout), "--rounds", str(self.rounds),
            "--json", "sweep.json", "-v",
        ]  # fmt: skip
        if self.seed >= 0:
            opts += ["--seed", str(self.seed)]
        self.executable_opts = opts + list(self.sweep_options)
        self.env_vars.setdefault("PYTHONUNBUFFERED", "1")

    @sanity_function
    def validate(self):
        verdict = sn.assert_found(r"^(suspect: \S+ |suspects: none)", self.stdout)
        if not self.fail_on_suspect:
            return verdict
        sn.evaluate(verdict)
        suspects = sn.evaluate(sn.extractall(r"^(suspect: .*)$", self.stdout, 1))
        return sn.assert_false(suspects, msg="; ".join(suspects))

    @run_before("performance")
    def set_perf_variables(self):
        path = os.path.join(self.stagedir, "sweep.json")
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return
        unit = data.get("unit", "Gbps")
        self.perf_variables = {}
        level = data.get("level", {}).get("center")
        if level is not None:
            self.perf_variables["cluster_level"] = sn.make_performance_function(
                sn.defer(float(level)), unit)
        for row in data.get("nodes_table", []):
            value = row.get("figure", row.get("median"))
            if value is not None:
                self.perf_variables[row["node"]] = sn.make_performance_function(
                    sn.defer(float(value)), unit)
        self.perf_variables["rounds_used"] = sn.make_performance_function(
            sn.defer(int(data.get("rounds_used", 0))), "rounds")

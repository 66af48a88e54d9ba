"""Node-pair sweep: `fabric-sweep` inside one allocation of every node of a partition.

The job script runs `fabric-sweep --launcher slurm` once (local launcher); the sweep itself
starts concurrent `srun` steps, each pinned to its two nodes, both directions of every pair,
in a few rounds (2 screening, extra ones for ambiguous nodes up to `max_rounds`), and ends
with `suspect: NODE send|receive ...` lines or `suspects: none`.

Sanity: the sweep ran to its verdict (exit status 0 or 1, the verdict printed, `sweep.json`
whole). Sanity does not judge the verdict, so that the figures are recorded whatever it is.
Performance: every figure the sweep measured (`figures` of `sweep.json`): the cluster level,
each node's own figure (`NODE`, the lower of its two directions) and each direction
(`NODE_send`, `NODE_recv`), each run (`a->b`: a sends), the rounds used and the numbers of
suspects, failed runs and undecided node-directions; `sweep.json` is kept for
`fabric-report html`.
Verdict: after the figures are recorded, anything but `suspects: none` (a suspect, a run that
gave no figure, an undecided node) fails the test with the verdict lines as the message,
unless `-S SweepTest.fail_on_suspect=false`.
Skipped with a reason on partitions of fewer than two nodes or without Slurm.

`-S SweepTest.launcher=sim` runs the sweep's simulation instead (nodes `sim_nodes`, faults
in `sweep_options`, e.g. `--sim-slow=node03=0.25`) on any system: a check of this test's own
plumbing that needs no cluster.
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
from reframe.core.builtins import (
    parameter,
    run_after,
    run_before,
    sanity_function,
    variable,
)
from reframe.core.exceptions import SanityError

EXIT_LINE = "fabric-sweep exit status:"


def _fabric_sweep() -> str:
    cand = Path(sys.executable).parent / "fabric-sweep"
    return str(cand) if cand.exists() else (shutil.which("fabric-sweep") or "fabric-sweep")


def _skipping_performance() -> bool:
    # With --skip-performance-check ReFrame never runs the performance stage, where the
    # verdict is judged; sanity judges it then (the figures are not recorded in that case).
    return "--skip-performance-check" in sys.argv


@rfm.simple_test
class SweepTest(rfm.RunOnlyRegressionTest):
    descr = "node-pair sweep: isolate slow or unreachable nodes in a few rounds"
    valid_systems = ["+slurm"]
    valid_prog_environs = ["+mpi"]
    method = parameter(["mpi", "rdma"])
    scenario = variable(str, value="sweep")
    launcher = variable(str, value="slurm")  # or "sim": the simulation, on any system
    sim_nodes = variable(str, value="node[01-08]")
    nmsg = variable(int, value=500)
    msg_size = variable(int, value=65536)
    pair_timeout = variable(int, value=120)
    rounds = variable(int, value=2)
    max_rounds = variable(int, value=8)
    seed = variable(int, value=-1)
    fail_on_suspect = variable(typ.Bool, value=True)
    sweep_options = variable(typ.List[str], value=[])
    time_limit = "30m"
    sourcesdir = None
    keep_files = ["sweep.json"]
    maintainers = ["fabrictest"]
    tags = {"fabric", "sweep"}

    @run_after("init")
    def simulation_runs_anywhere(self):
        if self.launcher == "sim":
            self.valid_systems = ["*"]
            self.valid_prog_environs = ["*"]

    def _nodes(self) -> int:
        extras = self.current_partition.extras
        nodes = extras.get("nodes") or []
        return int(extras.get("num_nodes", len(nodes) if nodes else 1))

    @run_after("setup")
    def check_partition(self):
        self.skip_if(self.launcher not in ("slurm", "sim"),
                     f"launcher {self.launcher!r}: use slurm or sim")
        if self.launcher == "sim":
            self.skip_if(self.method != "mpi", "the simulation does not depend on the method")
            return
        n = self._nodes()
        self.skip_if(n < 2, f"{self.current_partition.fullname} has {n} node(s): a sweep "
                            "needs at least 2")
        self.skip_if(self.method == "rdma" and "rdma" not in self.current_partition.features,
                     "partition has no RDMA NIC (+rdma)")
        self.skip_if(self.current_partition.scheduler.registered_name == "local",
                     "the sweep runs srun steps inside an allocation: needs a Slurm partition")

    @run_before("run")
    def configure(self):
        self.job.launcher = getlauncher("local")()  # one fabric-sweep; it starts the steps
        self.executable = _fabric_sweep()
        opts = [
            "--test", "txrx", "--method", self.method,
            "--msg-size", str(self.msg_size), "--nmsg", str(self.nmsg),
            "--pair-timeout", str(self.pair_timeout), "--rounds", str(self.rounds),
            "--max-rounds", str(self.max_rounds), "--json", "sweep.json", "-v",
        ]  # fmt: skip
        if self.launcher == "sim":
            self.num_tasks = 1
            opts = [self.sim_nodes, "--launcher", "sim", *opts]
        else:
            self.num_tasks = self._nodes()
            self.num_tasks_per_node = 1
            opts = ["--launcher", "slurm", *opts]
        if self.seed >= 0:
            opts += ["--seed", str(self.seed)]
        self.executable_opts = opts + list(self.sweep_options)
        self.postrun_cmds = [f'echo "{EXIT_LINE} $?"']
        self.env_vars.setdefault("PYTHONUNBUFFERED", "1")

    def _sweep(self) -> dict:
        path = os.path.join(self.stagedir, "sweep.json")
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)

    @sanity_function
    def validate(self):
        """The sweep ran to its verdict; the verdict itself is judged after the figures."""
        status = sn.extractsingle(rf"^{EXIT_LINE} (\d+)$", self.stdout, 1, int)
        sn.evaluate(sn.assert_in(status, (0, 1),
                                 msg="fabric-sweep exited {0}: it could not sweep"))
        sn.evaluate(sn.assert_found(r"^verdict:$", self.stdout,
                                    msg="fabric-sweep printed no verdict"))
        try:
            data = self._sweep()
        except (OSError, ValueError) as err:
            raise SanityError(f"sweep.json unreadable: {err}") from None
        if not data.get("figures") or not data.get("verdict"):
            raise SanityError("sweep.json has no figures or no verdict")
        if _skipping_performance():
            self._judge_verdict(data)
        return True

    @run_before("performance")
    def set_perf_variables(self):
        if self.is_dry_run():
            # nothing ran, so there is no sweep.json; the figures' names come from the sweep
            return
        data = self._sweep()
        self.perf_variables = {
            name: sn.make_performance_function(sn.defer(float(value)), unit)
            for name, (value, unit) in data["figures"].items()
        }

    @run_after("performance")
    def judge_verdict(self):
        if self.is_dry_run():
            return
        self._judge_verdict(self._sweep())

    def _judge_verdict(self, data: dict) -> None:
        if self.fail_on_suspect and not data.get("healthy", False):
            # ReFrame copies keep_files to the output directory only for passing tests;
            # fabric-report looks for the sweep there, and a sweep that found something is
            # the one to look at
            shutil.copy2(os.path.join(self.stagedir, "sweep.json"), self.outputdir)
            raise SanityError("; ".join(data["verdict"]))

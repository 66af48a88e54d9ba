"""All-to-many personalised exchange with MPI_Isend/Irecv/Waitall (seed 004), our src/c program.

``AllToManyTest``: ``alltomany -p PPN -b UNIT -n ITERS`` for ITERS in 2, 8, 16, 32; performance
variables (s) for each time it reports (``t_irecv``, ``t_isend``, ``t_waitall``,
``t_end_to_end``) and the time per iteration. ``AllToManyScalingTest`` (no job of its own)
compares the four runs: the time per iteration must not grow by more than ``max_growth`` from
2 to 32 iterations (seed 004's symptom: posting Irecv 30x slower per iteration at 32 on Cori KNL).
"""

from __future__ import annotations

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.udeps as udeps
from fabric_base import FabricTest, iteration_growth
from reframe.core.builtins import (
    parameter,
    performance_function,
    run_after,
    sanity_function,
    variable,
)

from fabrictest.parsers.alltomany import parse_alltomany

ITERATIONS = [2, 8, 16, 32]


@rfm.simple_test
class AllToManyTest(FabricTest):
    scenario = variable(str, value="all-to-many")
    iterations = parameter(ITERATIONS)
    #: message block unit size (bytes), -b (seed 004: 32)
    unit_size = variable(int, value=32)
    #: ranks per node, -p; 0: the partition's ranks_per_node
    ppn = variable(int, value=0)

    tags = {"fabric", "all-to-many", "acceptance", "regression"}

    @run_after("setup")
    def configure(self):
        ppn = self.ppn or int(self.extra("ranks_per_node", 2))
        nodes = self.partition_nodes()
        if nodes < 2 and self.is_local_host:
            # one host: two groups of ppn ranks stand for two nodes (-p tells the program)
            nodes, self.virtual_nodes = 2, True
        else:
            self.virtual_nodes = False
        self.ppn_used, self.nodes_used = ppn, nodes
        self.executable = self.binaries.program("alltomany")
        self.executable_opts = [
            "-p",
            str(ppn),
            "-b",
            str(self.unit_size),
            "-n",
            str(self.iterations),
        ]
        if self.virtual_nodes:
            self.num_tasks = nodes * ppn
            self.job.launcher.options = list(self.extra("launcher_options", []))
        else:
            self.place(nodes, ppn, round_robin=False)
        self.descr = (
            f"all-to-many: {nodes * ppn} ranks ({nodes} x {ppn}), "
            f"-b {self.unit_size} -n {self.iterations}"
        )

    def summary(self):
        if not hasattr(self, "_summary"):
            self._summary = parse_alltomany(self.stdout_text())
        return self._summary

    @sanity_function
    def validate(self):
        s = self.summary()
        sn.assert_eq(
            s.nprocs, self.num_tasks, msg="{0} processes reported, expected {1}"
        ).evaluate()
        sn.assert_eq(s.iterations, self.iterations, msg="{0} iterations, expected {1}").evaluate()
        for name in ("t_irecv", "t_isend", "t_waitall", "t_end_to_end"):
            sn.assert_true(getattr(s, name) is not None, msg=f"no {name} line").evaluate()
        check = s.extra.get("Payload check", "passed")
        return sn.assert_true(check.startswith("passed"), msg=f"payload check: {check}")

    @performance_function("s")
    def t_irecv(self):
        return self.summary().t_irecv

    @performance_function("s")
    def t_isend(self):
        return self.summary().t_isend

    @performance_function("s")
    def t_waitall(self):
        return self.summary().t_waitall

    @performance_function("s")
    def t_end_to_end(self):
        return self.summary().t_end_to_end

    @performance_function("s")
    def t_per_iteration(self):
        return self.summary().t_end_to_end / self.iterations


@rfm.simple_test
class AllToManyScalingTest(rfm.RunOnlyRegressionTest):
    """Seed 004's degradation check over the AllToManyTest runs of this partition."""

    scenario = variable(str, value="all-to-many")
    #: largest accepted growth of the time per iteration from 2 to 32 iterations
    max_growth = variable(float, value=4.0)
    #: per-iteration noise floor (s); 0: the partition's alltomany_noise_floor_s (or 0)
    noise_floor_s = variable(float, value=-1.0)

    valid_systems = ["*"]
    valid_prog_environs = ["+mpi"]
    local = True
    executable = "true"
    tags = {"fabric", "all-to-many", "acceptance", "regression"}
    maintainers = ["fabrictest"]

    @run_after("init")
    def add_deps(self):
        for i in range(len(ITERATIONS)):
            self.depends_on(AllToManyTest.variant_name(i), udeps.by_env)

    @run_after("setup")
    def floor(self):
        if self.noise_floor_s < 0:
            self.noise_floor_s = float(
                self.current_partition.extras.get("alltomany_noise_floor_s", 0.0)
            )

    def timings(self, field: str) -> dict[int, float]:
        out = {}
        for i in range(len(ITERATIONS)):
            dep = self.getdep(AllToManyTest.variant_name(i))
            out[dep.iterations] = getattr(dep.summary(), field)
        return out

    @sanity_function
    def validate(self):
        g_e2e = iteration_growth(self.timings("t_end_to_end"), self.noise_floor_s)
        g_irecv = iteration_growth(self.timings("t_irecv"), self.noise_floor_s)
        worst = max(g_e2e, g_irecv)
        return sn.assert_le(
            worst,
            self.max_growth,
            msg=(
                f"time per iteration grows {worst:.2f}x from {min(ITERATIONS)} to "
                f"{max(ITERATIONS)} iterations (end-to-end {g_e2e:.2f}x, posting irecv "
                f"{g_irecv:.2f}x), more than {self.max_growth}x"
            ),
        )

    @performance_function("x")
    def end_to_end_growth(self):
        return iteration_growth(self.timings("t_end_to_end"), self.noise_floor_s)

    @performance_function("x")
    def irecv_growth(self):
        return iteration_growth(self.timings("t_irecv"), self.noise_floor_s)

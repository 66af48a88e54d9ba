"""All-to-many personalised exchange with MPI_Isend/Irecv/Waitall (the all-to-many (Cori)
notes), our src/c program.

``AllToManyTest``: ``alltomany -p PPN -b UNIT -n ITERS`` for ITERS in 2, 8, 16, 32; performance
variables (s) for each time it reports (``t_irecv``, ``t_isend``, ``t_waitall``,
``t_end_to_end``) and the time per iteration. ``AllToManyScalingTest`` (no job of its own)
compares the four runs: the time per iteration must not grow by more than ``max_growth`` from
2 to 32 iterations (the all-to-many (Cori) notes' symptom: posting Irecv 30x slower per
iteration at 32 on Cori KNL).
"""

from __future__ import annotations

import reframe as rfm
import reframe.utility.udeps as udeps
from fabric_base import FabricTest
from fabric_placement import node_count, one_host
from reframe.core.builtins import parameter, performance_function, run_after, variable
from scenario_math import iteration_growth

from fabrictest.parsers import ParseError
from fabrictest.parsers.alltomany import missing, parse_alltomany_all

ITERATIONS = [2, 8, 16, 32]


def runs_on(part, ppn: int | None, num_nodes: int | None) -> tuple[int, int, bool]:
    """(nodes, ranks per node, whether two groups of ranks on one host stand for the nodes) of
    the all-to-many runs on partition ``part``; None for ``ppn``/``num_nodes``: the partition's."""
    ppn = ppn or int(part.extras.get("ranks_per_node", 2))
    nodes = num_nodes or node_count(part)
    if nodes < 2 and one_host(part):
        return 2, ppn, True  # one host: two groups of ppn ranks stand for two nodes (-p says so)
    return nodes, ppn, False


@rfm.simple_test
class AllToManyTest(FabricTest):
    scenario = variable(str, value="all-to-many")
    iterations = parameter(ITERATIONS)
    #: message block unit size (bytes), -b (the all-to-many (Cori) notes: 32)
    unit_size = variable(int, value=32)
    #: ranks per node, -p; unset: the partition's ranks_per_node
    ppn = variable(int, type(None), value=None)

    tags = {"fabric", "all-to-many", "acceptance", "regression"}
    shaped_by = ("unit_size", "ppn", "num_nodes")

    def placement_on(self, part):
        nodes, ppn, virtual = runs_on(part, self.ppn, self.num_nodes)
        return None if virtual else (nodes, ppn)

    @run_after("setup")
    def configure(self):
        nodes, ppn, _virtual = runs_on(self.current_partition, self.ppn, self.num_nodes)
        self.record_shaping(ppn=ppn, num_nodes=nodes)
        self.executable = self.binaries.program("alltomany")
        self.executable_opts = [
            "-p",
            str(ppn),
            "-b",
            str(self.unit_size),
            "-n",
            str(self.iterations),
        ]
        self.place(nodes, ppn, round_robin=False)
        self.descr = (
            f"all-to-many: {nodes * ppn} ranks ({nodes} x {ppn}), "
            f"-b {self.unit_size} -n {self.iterations}"
        )

    def parse(self, text):
        blocks = parse_alltomany_all(text)
        if len(blocks) != 1:
            raise ParseError(f"all-to-many: {len(blocks)} summary blocks, expected 1")
        return blocks[0]

    def result_problems(self):
        s = self.result()
        problems = missing(s, iterations=self.iterations, nprocs=self.num_tasks)
        check = s.extra.get("Payload check")
        if check is None:
            problems.append("all-to-many: no 'Payload check' line")
        elif not check.startswith("passed"):
            problems.append(f"all-to-many: payload check {check}")
        return problems

    @performance_function("s")
    def t_irecv(self):
        return self.result().t_irecv

    @performance_function("s")
    def t_isend(self):
        return self.result().t_isend

    @performance_function("s")
    def t_waitall(self):
        return self.result().t_waitall

    @performance_function("s")
    def t_end_to_end(self):
        return self.result().t_end_to_end

    @performance_function("s")
    def t_per_iteration(self):
        return self.result().t_end_to_end / self.iterations


@rfm.simple_test
class AllToManyScalingTest(FabricTest):
    """The all-to-many (Cori) notes' degradation check over the AllToManyTest runs of this
    partition (no job of its own: a local `true`), judged against its references like every
    FabricTest."""

    scenario = variable(str, value="all-to-many")
    #: largest accepted growth of the time per iteration from 2 to 32 iterations
    max_growth = variable(float, value=4.0)
    #: per-iteration noise floor (s); -1: the partition's alltomany_noise_floor_s (or 0)
    noise_floor_s = variable(float, value=-1.0)

    local = True
    executable = "true"
    tags = {"fabric", "all-to-many", "acceptance", "regression"}
    shaped_by = ("noise_floor_s",)

    def placement_on(self, part):
        # listed exactly where the runs it compares are (a dependency on a case that is not
        # there is an error): their nodes and ranks per node, as -S set them
        nodes, ppn, virtual = runs_on(part, AllToManyTest.ppn, AllToManyTest.num_nodes)
        return None if virtual else (nodes, ppn)

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
            out[dep.iterations] = getattr(dep.result(), field)
        return out

    def result_problems(self):
        g_e2e = iteration_growth(self.timings("t_end_to_end"), self.noise_floor_s)
        g_irecv = iteration_growth(self.timings("t_irecv"), self.noise_floor_s)
        worst = max(g_e2e, g_irecv)
        if worst <= self.max_growth:
            return []
        return [
            f"time per iteration grows {worst:.2f}x from {min(ITERATIONS)} to "
            f"{max(ITERATIONS)} iterations (end-to-end {g_e2e:.2f}x, posting irecv "
            f"{g_irecv:.2f}x), more than {self.max_growth}x"
        ]

    @performance_function("x")
    def end_to_end_growth(self):
        return iteration_growth(self.timings("t_end_to_end"), self.noise_floor_s)

    @performance_function("x")
    def irecv_growth(self):
        return iteration_growth(self.timings("t_irecv"), self.noise_floor_s)

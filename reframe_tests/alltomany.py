"""All-to-many personalised exchange with MPI_Isend/Irecv/Waitall (the all-to-many (Cori)
notes), our src/c program.

``AllToManyTest``: ``alltomany -p PPN -b UNIT -n ITERS -r REPS`` for ITERS in 2, 8, 16, 32;
performance variables (s) for each time it reports (``t_irecv``, ``t_isend``, ``t_waitall``,
``t_end_to_end``: the median repetition, at full precision) and the time per iteration.
``AllToManyScalingTest`` (no job of its own) judges the time per iteration as the all-to-many
(Cori) notes do (posting Irecv 30x slower per iteration at 32 iterations than at 2 on Cori KNL),
twice: **within a run**, it must not grow by more than ``max_growth`` from 2 to 32 iterations
in the 32-iteration run (each repetition compared with itself at its 2- and 32-iteration
checkpoints, the median taken, the repetitions' scatter measured as the noise); **across the
runs** (the notes' table), the time per iteration of the 16- and 32-iteration runs must not
exceed that of the faster of the 2- and 8-iteration runs by more than ``max_run_growth`` (each
run's lowest repetition: a slowdown of whole runs, which no run shows within itself)
(docs/c-programs.md).
``-S AllToManyTest.inject=K:USEC`` makes the fault on purpose (the program's ``-i``), in every run
or, with ``-S AllToManyTest.inject_min_iterations=N``, only in the runs of N iterations or more.
"""

from __future__ import annotations

import statistics

import reframe as rfm
import reframe.utility.udeps as udeps
from fabric_base import FabricTest
from fabric_placement import node_count, one_host
from fabric_types import Count, Flag, Real
from reframe.core.builtins import parameter, performance_function, run_after, variable
from reframe.core.logging import getlogger
from scenario_math import MAX_GROWTH, across_runs, across_runs_unjudged, run_level, scaling

from fabrictest.parsers import ParseError
from fabrictest.parsers.alltomany import missing, parse_alltomany_all, per_iteration

ITERATIONS = [2, 8, 16, 32]
#: the scaling test cases that have said their growth across runs is not judged
_SAID_UNJUDGED: set[str] = set()


def injection_problems(inject, min_iterations) -> dict[str, str]:
    """Why ``-S inject=K:USEC`` (with ``-S inject_min_iterations=N``) injects nothing in any of
    the runs of :data:`ITERATIONS` iterations; {} when it does (or nothing was asked)."""
    most = max(ITERATIONS)
    if not isinstance(inject, str) or not isinstance(min_iterations, int):
        return {}  # the variables' own rules refuse these
    if not inject:
        if min_iterations:
            return {"inject_min_iterations": (
                f"-S inject_min_iterations={min_iterations}: says which runs -S inject slows, "
                "but inject is empty: nothing would be injected")}
        return {}
    head = inject.split(":", 1)[0]
    if head.isdigit() and int(head) > most:
        return {"inject": (f"-S inject={inject!r}: from iteration {int(head)} on, but the runs "
                           f"have at most {most} iterations ({ITERATIONS}): nothing would be "
                           "injected")}
    if min_iterations > most:
        return {"inject_min_iterations": (
            f"-S inject_min_iterations={min_iterations}: no run has that many iterations "
            f"({ITERATIONS}): nothing would be injected")}
    return {}


def runs_on(part, ppn: int | None, num_nodes: int | None) -> tuple[int, int, bool]:
    """(nodes, ranks per node, whether two groups of ranks on one host stand for the nodes) of
    the all-to-many runs on partition ``part``; None for ``ppn``/``num_nodes``: the partition's
    (``alltomany_ranks_per_node``, else ``ranks_per_node``)."""
    extras = part.extras
    ppn = ppn or int(extras.get("alltomany_ranks_per_node", extras.get("ranks_per_node", 2)))
    nodes = num_nodes or node_count(part)
    if nodes < 2 and one_host(part):
        return 2, ppn, True  # one host: two groups of ppn ranks stand for two nodes (-p says so)
    return nodes, ppn, False


@rfm.simple_test
class AllToManyTest(FabricTest):
    descr = "all-to-many Isend/Irecv/Waitall timings of the all-to-many (Cori) notes"
    scenario = variable(str, value="all-to-many")
    iterations = parameter(ITERATIONS)
    #: message block unit size (bytes), -b (the all-to-many (Cori) notes: 32)
    unit_size = variable(Count, value=32)
    #: ranks per node, -p; unset: the partition's (alltomany_ranks_per_node, ranks_per_node)
    ppn = variable(Count, type(None), value=None)
    #: repetitions of the timed loop in each run, -r (their scatter is the measured noise)
    repetitions = variable(Count, value=30)
    #: fault injection, -i K:USEC: from iteration K on, USEC us more posting each receive
    #: ('' : none). For seeing AllToManyScalingTest fail; never in a real acceptance run.
    inject = variable(str, value="")
    #: the runs ``inject`` applies to: those of at least this many iterations (0: every run);
    #: ``-S inject=1:USEC -S inject_min_iterations=16`` slows whole runs of 16 and 32 iterations,
    #: the fault only the comparison across runs sees
    inject_min_iterations = variable(Count, value=0)
    #: seconds any rank waits for a peer before the program ends the job (-T); unset: the
    #: program's default (docs/c-programs.md)
    program_timeout = variable(Real, type(None), value=None)

    tags = {"fabric", "all-to-many", "acceptance", "regression"}
    shaped_by = ("unit_size", "ppn", "num_nodes")

    def value_problems(self) -> dict[str, str]:
        """An injection that cannot happen in any run; no repetitions (0 means "the runs'"
        only to the scaling check) (fabric_variables: family rules)."""
        if self.repetitions == 0:
            return {"repetitions": "-S repetitions=0: AllToManyTest repeats its timed loop at "
                                   "least 3 times (their scatter is the measured noise)"}
        return injection_problems(self.inject, self.inject_min_iterations)

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
            "-r",
            str(self.repetitions),
        ]
        if self.inject and self.iterations >= self.inject_min_iterations:
            self.executable_opts += ["-i", self.inject]
        if self.program_timeout is not None:
            self.executable_opts += ["-T", f"{self.program_timeout:g}"]
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
        problems = missing(s, iterations=self.iterations, nprocs=self.num_tasks,
                           repetitions=self.repetitions)
        check = s.extra.get("Payload check")
        if check is None:
            problems.append("all-to-many: no 'Payload check' line")
        elif not check.startswith("passed"):
            problems.append(f"all-to-many: payload check {check}")
        return problems

    def median_time(self, name: str) -> float:
        """The median repetition's time ``name`` (irecv, isend, waitall, end_to_end), at full
        precision."""
        return statistics.median(per_iteration(self.result(), name)) * self.iterations

    @performance_function("s")
    def t_irecv(self):
        return self.median_time("irecv")

    @performance_function("s")
    def t_isend(self):
        return self.median_time("isend")

    @performance_function("s")
    def t_waitall(self):
        return self.median_time("waitall")

    @performance_function("s")
    def t_end_to_end(self):
        return self.median_time("end_to_end")

    @performance_function("s")
    def t_per_iteration(self):
        return self.median_time("end_to_end") / self.iterations


@rfm.simple_test
class AllToManyScalingTest(FabricTest):
    """The all-to-many (Cori) notes' degradation checks over the AllToManyTest runs of this
    partition (no job of its own: a local `true`): within the 32-iteration run, judged against
    its references like every FabricTest, and across the runs of 2 to 32 iterations."""
    descr = ("all-to-many: time per iteration must not grow from 2 to 32 iterations, within a "
             "run and across runs")

    scenario = variable(str, value="all-to-many")
    #: largest accepted growth of the time per iteration from 2 to 32 iterations, within a run
    max_growth = variable(Real, value=MAX_GROWTH)
    #: largest accepted growth of the time per iteration from the 2- and 8-iteration runs to the
    #: 16- and 32-iteration runs (separate jobs); unset: the partition's
    #: ``alltomany_max_run_growth``, else ``max_growth``'s default (scenario_math.MAX_GROWTH)
    max_run_growth = variable(Real, type(None), value=None)
    #: judge the growth across runs (true) or record it only (false); unset: judged unless the
    #: partition's ``alltomany_run_growth_informational`` says why not (local: separate jobs on
    #: 2 shared cores differ by the scheduler, not the fabric)
    judge_across_runs = variable(Flag, type(None), value=None)

    #: the repetitions of the runs it reads, as recorded (0: the AllToManyTest runs', read
    #: from them): the growths are medians over them
    repetitions = variable(Count, value=0)

    local = True
    executable = "true"
    tags = {"fabric", "all-to-many", "acceptance", "regression"}
    shaped_by = ("repetitions",)
    # the noise is recorded, not judged against a reference: the sanity check reads it; so are
    # the growths across runs (judged by the sanity check against max_run_growth)
    informational_perf_vars = [r".*_noise", r"run_.*_growth"]

    def placement_on(self, part):
        # listed exactly where the runs it compares are (a dependency on a case that is not
        # there is an error): their nodes and ranks per node, as -S set them
        nodes, ppn, virtual = runs_on(part, AllToManyTest.ppn, AllToManyTest.num_nodes)
        return None if virtual else (nodes, ppn)

    @run_after("init")
    def add_deps(self):
        for i in range(len(ITERATIONS)):
            self.depends_on(AllToManyTest.variant_name(i), udeps.by_env)

    def run_of(self, iterations: int):
        """The AllToManyTest case of ``iterations`` iterations."""
        return self.getdep(AllToManyTest.variant_name(ITERATIONS.index(iterations)))

    def longest(self):
        return self.run_of(max(ITERATIONS))

    @run_after("setup")
    def record_repetitions(self):
        self.record_shaping(repetitions=self.longest().repetitions)

    def run_growth_limit(self) -> float:
        if self.max_run_growth is not None:
            return self.max_run_growth
        return float(self.extra("alltomany_max_run_growth", MAX_GROWTH))

    def figures(self):
        """Growths and measured noise over the repetitions of the longest run, each compared
        with itself at 2 and 32 iterations (scenario_math.scaling)."""
        longest = self.longest()
        reps = [(t.cumulative("end_to_end"), t.cumulative("irecv"))
                for t in longest.result().times]
        return scaling(reps, min(ITERATIONS), max(ITERATIONS))

    def across(self):
        """The time per iteration across the runs of every iteration count, each run's lowest
        repetition (scenario_math.across_runs)."""
        levels = []
        for n in ITERATIONS:
            summary = self.run_of(n).result()
            levels.append(run_level(n, per_iteration(summary, "end_to_end"),
                                    per_iteration(summary, "irecv")))
        return across_runs(levels)

    def result_problems(self):
        problems = [self.figures().problem(self.max_growth, min(ITERATIONS), max(ITERATIONS))]
        unjudged = across_runs_unjudged(self.judge_across_runs,
                                        self.extra("alltomany_run_growth_informational"))
        if unjudged is None:
            problems.append(self.across().problem(self.run_growth_limit()))
        else:
            across = self.across()  # still computed: a run it cannot read fails the test
            if self.unique_name not in _SAID_UNJUDGED:
                _SAID_UNJUDGED.add(self.unique_name)
                getlogger().info(
                    f"AllToManyScalingTest on {self.current_system.name}: the growth across "
                    f"runs ({across.end_to_end:.3g}x end-to-end, {across.irecv:.3g}x posting "
                    f"irecv) is informational here, not judged ({unjudged}); the growth within "
                    "a run is judged (-S AllToManyScalingTest.judge_across_runs=true judges it)")
        return [p for p in problems if p]

    @performance_function("x")
    def end_to_end_growth(self):
        return self.figures().end_to_end

    @performance_function("x")
    def irecv_growth(self):
        return self.figures().irecv

    @performance_function("x")
    def end_to_end_noise(self):
        return self.figures().end_to_end_noise

    @performance_function("x")
    def irecv_noise(self):
        return self.figures().irecv_noise

    @performance_function("x")
    def run_end_to_end_growth(self):
        return self.across().end_to_end

    @performance_function("x")
    def run_irecv_growth(self):
        return self.across().irecv

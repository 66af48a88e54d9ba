"""OSU's collective benchmarks over a partition's node sets: ``OsuCollectiveTest``.

``benchmark``: ``osu_allreduce``, ``osu_alltoall``, ``osu_allgather``, ``osu_bcast``,
``osu_reduce_scatter``, ``osu_barrier`` (the collectives procurement sets and the Slingshot
acceptance notes' users run; ReFrame's hpctestlib and excalibur-tests run the first three).
``per_node``: ``1`` rank per node, or ``full``: the partition's ``max_ranks_per_node`` (else its
``ranks_per_node``; not listed where that is 1, the ``1`` case). ``scope``: ``all`` the
partition's nodes (``-S num_nodes=N``), or the node set of a ``switch`` (edge), ``group``
(local) or ``global`` scope where the partition has one (``extras.topology`` or
``extras.node_sets``, ``fabric_node_sets.py``; ``--nodelist`` under Slurm). On one host
(``local``) two ranks stand for two nodes (``%scope=all %per_node=1`` only).

Command: ``-m 1:TOP`` where a top is asked (``-S max_size=``, the quick profile's 64 KiB, else
``extras.osu_collective_max_size`` on a small host; OSU's default is 1 MiB), ``-i`` from
``-S osu_iterations=`` or ``extras.osu_collective_iter``, and ``--validation`` (``-c``) unless
``-S OsuCollectiveTest.validation=false`` (OSU 5.x builds have none: OSU then prints ``Invalid
option`` and the test says so); the reductions validate ``-T mpi_float`` (OSU 7.4's ``MPI_CHAR``
allreduce fails its own validation from 16 bytes on: its check overflows the char), and
``osu_barrier`` has no ``-c``.

Sanity: the run whole (every size of the collective's own series, from its datatype's size up
to the top; barrier's one figure), each size once, no line inside its table, the title, unit
and ``Validation`` of the benchmark asked for, the ``# Datatype:`` the ``-T`` asked, and no latency faster than its bytes can cross
the partition's links (``extras.line_rate_gbps``; ``parsers/collectives.py``).
Performance (us): ``latency`` at 8 B (barrier: its one figure) and ``latency_large`` at the top
size, judged against the references; ``latency_<size>`` for every size, informational (the
perflog). A failing figure names the node set it ran on (``node[01-04]``, or the job's nodes).
"""

from __future__ import annotations

import reframe as rfm
from fabric_node_sets import derived, first_nodes, node_set_sizes
from fabric_node_sets import node_sets as partition_node_sets
from fabric_osu import OsuBase
from fabric_placement import job_nodes, one_host
from fabric_types import Flag
from reframe.core.builtins import parameter, performance_function, run_after, variable

from fabrictest.binaries import OSU_COLLECTIVES
from fabrictest.parsers.collectives import DEFAULT_MAX_SIZE, REDUCTIONS, SIZELESS
from fabrictest.parsers.hostlists import compress
from fabrictest.parsers.node_sets import LABELS
from fabrictest.parsers.osu import datatype_problems

#: the one list of them, where the binaries are searched for (fabrictest.binaries)
BENCHMARKS = list(OSU_COLLECTIVES)
#: the small-message headline size (bytes): 8 B, the size applications' allreduces live on
SMALL_SIZE = 8
SCOPES = ["all", "switch", "group", "global"]
#: the datatype the reductions validate (see the module docstring)
VALIDATED_TYPE = "mpi_float"


@rfm.simple_test
class OsuCollectiveTest(OsuBase):
    descr = "OSU collective latency (allreduce, alltoall, ...) over a node set, 1 or all ranks per node"
    scenario = variable(str, value="collective")
    benchmark = parameter(BENCHMARKS)
    per_node = parameter(["1", "full"])
    scope = parameter(SCOPES)
    #: --validation (-c): OSU checks every result; false for builds without it (OSU 5.x)
    validation = variable(Flag, value=True)

    tags = {"fabric", "osu", "collective", "acceptance", "regression"}
    shaped_by = ("max_size", "osu_iterations", "num_nodes", "validation")
    informational_perf_vars = [r"latency_\d+"]

    # -- where it runs --------------------------------------------------------------------
    def ranks_per_node_on(self, part) -> int:
        extras = part.extras
        if self.per_node == "1":
            return 1
        return int(extras.get("max_ranks_per_node", extras.get("ranks_per_node", 1)))

    def layout_on(self, part) -> tuple[int, int, bool]:
        """(nodes, ranks per node, whether groups of ranks on one host stand for the nodes)
        on ``part``; a ValueError says why ``part`` cannot hold the case."""
        ppn = self.ranks_per_node_on(part)
        if self.per_node == "full" and ppn == 1:
            raise ValueError("its full ranks per node is 1: the %per_node=1 case")
        if self.scope != "all":
            sizes = node_set_sizes(part)
            if self.scope not in sizes:
                why = derived(part).missing.get(self.scope) or (
                    "no extras.topology or extras.node_sets")
                raise ValueError(f"no {self.scope} ({LABELS[self.scope]}) node set: {why}")
            nodes = int(sizes[self.scope])
        else:
            nodes = self.nodes_on(part)
        if nodes < 2 and one_host(part):
            if self.scope != "all" or self.per_node != "1":
                raise ValueError("one host: only %scope=all %per_node=1 (two ranks stand for "
                                 "two nodes)")
            return 2, 1, True
        if nodes < 2:
            raise ValueError(f"a collective between nodes needs 2 nodes, has {nodes}")
        return nodes, ppn, False

    def placement_on(self, part):
        nodes, ppn, virtual = self.layout_on(part)
        return None if virtual else (nodes, ppn)

    def node_set(self) -> str | None:
        """The hostlist of the case's node set (``switch``, ``group``, ``global``); None for
        ``all`` (the partition's nodes, as the scheduler gives them)."""
        if self.scope == "all":
            return None
        return partition_node_sets(self.current_partition).get(self.scope)

    # -- the command line -----------------------------------------------------------------
    def default_top(self) -> int:
        return DEFAULT_MAX_SIZE

    def asked_top(self) -> int:
        return super().asked_top() or int(self.extra("osu_collective_max_size", 0))

    def asked_iterations(self) -> int:
        return self.osu_iterations or int(self.extra("osu_collective_iter", 0))

    @run_after("setup")
    def configure(self):
        nodes, ppn, _virtual = self.layout_on(self.current_partition)
        self.executable = self.osu_binary(self.benchmark)
        short = self.benchmark.removeprefix("osu_")
        opts = [] if short in SIZELESS else self.size_opts()
        if short in SIZELESS and self.asked_iterations():
            opts = ["-i", str(self.asked_iterations())]
        if self.validation and short not in SIZELESS:
            opts += ["-c"] + (["-T", VALIDATED_TYPE] if short in REDUCTIONS else [])
        self.executable_opts = opts
        hostlist = self.node_set()
        if hostlist and self.is_slurm:
            self.job.options += [f"--nodelist={first_nodes(hostlist, nodes)}"]
        self.record_shaping(num_nodes=nodes, osu_iterations=self.asked_iterations())
        self.place(nodes, ppn, round_robin=False)
        self.descr = (f"OSU {short} over {self.scope} ({nodes} nodes x {ppn} ranks"
                      f"{', one host' if _virtual else ''})")

    # -- sanity ---------------------------------------------------------------------------
    def result_problems(self):
        _nodes, _ppn, virtual = self.layout_on(self.current_partition)
        name = self.executable_name()
        problems = self.run_problems(self.result(), name, self.benchmark, one_host=virtual)
        res = self.result()
        short = self.benchmark.removeprefix("osu_")
        if self.validation and short not in SIZELESS and res.validation is None:
            problems.append(f"{name}: no Validation column, though --validation was asked")
        if "-T" in self.executable_opts:  # the datatype line must be the one asked
            problems += datatype_problems(res, VALIDATED_TYPE, name)
        return problems

    def launch_problems(self):
        problems = super().launch_problems()
        if problems and "Invalid option" in self.stdout_text() + self.output_text(self.stderr):
            problems.append(f"{self.executable_name()} refused an option (an OSU build without "
                            "--validation, 5.x?): run with -S OsuCollectiveTest.validation=false")
        return problems

    # -- performance ----------------------------------------------------------------------
    @performance_function("us")
    def latency(self):
        res = self.result()
        return res.rows[0].value if not res.sized else res.at(SMALL_SIZE)

    @performance_function("us")
    def latency_large(self):
        return self.result().at(self.top_size())

    @run_after("setup")
    def choose_perf(self):
        if self.benchmark.removeprefix("osu_") in SIZELESS:
            self.perf_variables = {"latency": self.latency()}
        else:
            self.perf_variables = {"latency": self.latency(),
                                   "latency_large": self.latency_large()}

    def dynamic_perf_variables(self):
        res = self.result()
        if not res.sized:
            return {}
        return {f"latency_{row.size}": (row.value, "us") for row in res.rows}

    def figure_place(self, var, failed):
        """The node set the figure was measured on: its hostlist, or the job's nodes."""
        nodes = self.node_set()
        if nodes is None:
            got = job_nodes(self)
            nodes = compress(got) if got else ""
        where = f"{self.scope} node set" if self.scope != "all" else "all nodes"
        return nodes, f"{where}, {self.num_tasks_per_node} per node"

"""Bisection bandwidth (the Slingshot acceptance notes' bisec_bw program, our src/c
``bisection_bw PPN REPS``).

Rank i exchanges with rank i + n/2 (MPI_Isend + MPI_Recv) for sizes 1 KiB .. 2 MiB. Ranks are
placed in blocks (fill a node first), so with 2+ nodes the first half of the nodes exchanges with
the second half across the fabric's bisection. With a topology (``extras.topology``) or a
hand-written ``node_sets["bisection"]``, the nodes are chosen so the halves sit on either side of
the top of the tree.
Performance: ``node_bw`` (MB/s per node) and ``aggregate_bw`` (GB/s) at the largest size, and,
informational, ``node_bw_<size>`` for every size.
"""

from __future__ import annotations

import reframe as rfm
from fabric_base import FabricTest
from fabric_line_rate import link_rate
from fabric_node_sets import node_set_sizes, node_sets
from fabric_placement import one_host
from fabric_types import Count, Real
from reframe.core.builtins import performance_function, run_after, variable

from fabrictest.parsers.bisection import above_line_rate, missing, parse_bisection


@rfm.simple_test
class BisectionTest(FabricTest):
    descr = "bisection bandwidth: each rank exchanges with its partner across the machine's halves"
    scenario = variable(str, value="bisection")
    #: ranks per node; unset: the partition's ranks_per_node
    ppn = variable(Count, type(None), value=None)
    #: repetitions per size; unset: 100 (20 in the quick profile)
    num_reps = variable(Count, type(None), value=None)
    #: seconds any rank waits for a peer before the program ends the job (-T); unset: the
    #: program's default (docs/c-programs.md)
    program_timeout = variable(Real, type(None), value=None)

    tags = {"fabric", "bisection", "acceptance", "regression"}
    informational_perf_vars = [r"node_bw_\d+"]
    shaped_by = ("ppn", "num_nodes", "num_reps")

    def placement_on(self, part):
        ppn = self.ppn or int(part.extras.get("ranks_per_node", 2))
        nodes = self.num_nodes or node_set_sizes(part).get("bisection") or self.nodes_on(part)
        return nodes, ppn + (nodes * ppn) % 2  # an even number of ranks: pairs across halves

    @run_after("setup")
    def configure(self):
        nodes, ppn = self.placement_on(self.current_partition)
        reps = self.num_reps or int(
            self.extra("bisection_reps", 20 if self.size_profile == "quick" else 100)
        )
        self.executable = self.binaries.program("bisection_bw")
        self.executable_opts = [str(ppn), str(reps)]
        if self.program_timeout is not None:
            self.executable_opts = ["-T", f"{self.program_timeout:g}", *self.executable_opts]
        self.layout = {"nodes": nodes, "ppn": ppn, "reps": reps}
        # the pairs across the top of the tree (extras.topology or node_sets["bisection"]):
        # Slurm places the rank blocks in node-name order, first half against second half
        crossing = node_sets(self.current_partition).get("bisection")
        if crossing and self.num_nodes is None and self.is_slurm:
            self.job.options += [f"--nodelist={crossing}"]
        self.record_shaping(ppn=ppn, num_nodes=nodes, num_reps=reps)
        self.place(nodes, ppn, round_robin=False)
        self.descr = f"bisection: {nodes * ppn} ranks ({nodes} x {ppn}), {reps} reps"

    def parse(self, text):
        return parse_bisection(text)

    def result_problems(self):
        problems = missing(self.result(), ranks=self.num_tasks, **self.layout)
        # every rank on one host (local, or a one-node run): the host's memory, not a link
        rate, what = link_rate(self.current_partition, one_host=(
            one_host(self.current_partition) or self.layout["nodes"] == 1))
        if rate is None:
            return [*problems, what]
        return problems + above_line_rate(self.result(), rate, what,
                                          int(self.extra("link_burst_bytes", 0)))

    @performance_function("MB/s")
    def node_bw(self):
        return self.result().largest().node_mbps

    @performance_function("GB/s")
    def aggregate_bw(self):
        return self.result().largest().aggregate_gbps

    def dynamic_perf_variables(self):
        return {f"node_bw_{r.size}": (r.node_mbps, "MB/s") for r in self.result().rows}

"""OSU Micro-Benchmarks (5.x and 7.x: install prefix, 7.x build tree or PATH; both output formats).

* ``OsuPt2PtTest``: osu_latency, osu_bw, osu_bibw, osu_get_bw between two nodes, one rank each
  (the Slingshot acceptance notes' edge test: ``osu_get_bw`` between two nodes of one switch).
* ``OsuMbwMrTest``: osu_mbw_mr over a node set (``scope``: switch | group | global, the
  Slingshot acceptance notes) with ``ranks_per_node`` ranks per node; pairs = ranks / 2.
* ``OsuGpuAwareTest`` (scenario ``gpu-aware``, ``+gpu`` partitions): osu_bw/osu_bibw with
  ``-d cuda|rocm`` for ``H H``, ``H D`` and ``D D`` in one job, and the derived check that D-D
  bandwidth is at least ``min_fraction`` of H-H (the Crusher GPU notes' symptom, 10.9 vs
  19.5 GB/s, fails). ``span``: ``node`` (the notes' case: one node, the two ranks on two of
  its GPUs, or sharing its one GPU where it has one) or ``nodes`` (one rank on each of two
  nodes: device buffers across the network).

Identity (every family): the output is the benchmark, direction and unit asked for (its title
and column header), each size once, every size up to the requested maximum, no line inside the
table, a bandwidth that does not collapse at the largest sizes, and no rate above the
partition's line rate (``extras.line_rate_gbps``; x 2 for ``osu_bibw``, x the node pairs for
``osu_mbw_mr``'s aggregate; the shared-memory ceiling where the ranks share one host).

``OsuBase`` (sizes, parsing, the whole-run and line-rate checks) is in ``fabric_osu.py``, shared
with the collective family (``osu_collectives.py``).

Binaries: the ``FabricBinaries`` fixture (``self.binaries.osu(name)``): on ``+spack`` partitions
the Spack environment's, elsewhere those ``OSU_HOME`` or ``PATH`` hold. ``+osu`` partitions only.
"""

from __future__ import annotations

import os

import reframe as rfm
import reframe.utility.typecheck as typ
from fabric_node_sets import derived, first_nodes, node_set_sizes
from fabric_node_sets import node_sets as partition_node_sets
from fabric_osu import OsuBase
from fabric_placement import gpus_on, job_nodes, one_host
from fabric_types import Count, Real
from reframe.core.builtins import parameter, performance_function, run_after, run_before, variable
from scenario_math import device_fraction

from fabrictest.parsers.hostlists import compress
from fabrictest.parsers.launch import EXIT_STATUS_LINE
from fabrictest.parsers.node_sets import LABELS
from fabrictest.parsers.osu import placement_problems


@rfm.simple_test
class OsuPt2PtTest(OsuBase):
    descr = "OSU point-to-point latency and bandwidth between two nodes, one rank each"
    scenario = variable(str, value="paired")
    benchmark = parameter(["osu_latency", "osu_bw", "osu_bibw", "osu_get_bw"])

    def placement_on(self, part):
        nodes = self.pair_nodes_on(part)
        return nodes, 2 // nodes

    @run_after("setup")
    def configure(self):
        self.executable = self.osu_binary(self.benchmark)
        nodes, ppn = self.placement_on(self.current_partition)
        self.executable_opts = self.size_opts()
        node_sets = partition_node_sets(self.current_partition)
        if "switch" in node_sets and self.is_slurm and nodes == 2:
            # two nodes of one switch (edge): Slurm refuses a list longer than -N
            self.job.options += [f"--nodelist={first_nodes(node_sets['switch'], 2)}"]
        self.place(nodes, ppn, round_robin=False)

    def result_problems(self):
        nodes, _ppn = self.placement_on(self.current_partition)
        return self.run_problems(self.result(), self.executable_name(), self.benchmark,
                                 one_host=nodes == 1)

    @performance_function("us")
    def latency(self):
        res = self.result()
        return min(res.rows, key=lambda r: r.size).value

    @performance_function("MB/s")
    def peak_bw(self):
        return self.result().peak()

    @run_after("setup")
    def choose_perf(self):
        if self.benchmark == "osu_latency":
            self.perf_variables = {"latency": self.latency()}
        else:
            self.perf_variables = {"peak_bw": self.peak_bw()}


@rfm.simple_test
class OsuMbwMrTest(OsuBase):
    descr = "OSU multi-pair bandwidth and message rate over a switch, group or global node set"
    shaped_by = ("max_size", "osu_iterations", "mbw_nodes", "min_size")
    scenario = variable(str, value="paired")
    scope = parameter(["switch", "group", "global"])
    ranks_per_node = parameter([1, 8, 20])
    #: nodes; unset: extras.node_set_sizes[scope] (or the size of the scope's set in
    #: extras.topology), else the partition's nodes
    mbw_nodes = variable(Count, type(None), value=None)
    #: smallest size (-m MIN:TOP); unset: extras.osu_mbw_min_size, else OSU's 1 B. Links
    #: shaped by a token bucket (the vcluster's tbf) pass a window that fits the bucket at
    #: memory speed, and osu_mbw_mr's untimed barrier before each window refills it
    min_size = variable(Count, type(None), value=None)
    #: set by the family: the node pairs of its node set (a reference $index may name it, and
    #: the run report records it for `fabric-report calibrate`)
    node_pairs = variable(int, type(None), value=None)

    def asked_min(self) -> int:
        return int(self.min_size or self.extra("osu_mbw_min_size", 1))

    def layout_on(self, part) -> tuple[int, bool]:
        """(nodes, whether two groups of ranks on one host stand for them) on ``part``; a
        ValueError says why ``part`` cannot hold the case."""
        sizes = node_set_sizes(part)
        if self.scope not in sizes and not self.mbw_nodes:
            why = derived(part).missing.get(self.scope)
            if why:  # the partition has a topology, and it holds no such set
                raise ValueError(f"osu_mbw_mr over a {self.scope} ({LABELS[self.scope]}): "
                                 f"extras.topology: {why}")
        nodes = self.mbw_nodes or int(sizes.get(self.scope, self.nodes_on(part)))
        # one host (local): two groups of ranks_per_node ranks stand for two nodes, as the
        # tx/rx same-node scenario does, up to the host's extras.max_host_ranks (default 2)
        if nodes < 2 and one_host(part):
            slots = int(part.extras.get("max_host_ranks", 2))
            if 2 * self.ranks_per_node > slots:
                raise ValueError(f"osu_mbw_mr on one host: 2 x {self.ranks_per_node} ranks "
                                 f"exceed the {slots} it allows (extras.max_host_ranks)")
            return 2, True
        nodes -= nodes % 2
        if nodes < 2:
            raise ValueError(f"osu_mbw_mr over a {self.scope} needs >= 2 nodes, "
                             f"has {self.nodes_on(part)}")
        return nodes, False

    def placement_on(self, part):
        nodes, virtual = self.layout_on(part)
        return None if virtual else (nodes, self.ranks_per_node)

    @run_after("setup")
    def configure(self):
        nodes, _virtual = self.layout_on(self.current_partition)
        self.executable = self.osu_binary("osu_mbw_mr")
        self.executable_opts = self.size_opts()
        node_sets = partition_node_sets(self.current_partition)
        if self.scope in node_sets and self.is_slurm:
            self.job.options += [f"--nodelist={node_sets[self.scope]}"]
        self.node_pairs = nodes // 2
        low = self.asked_min()
        self.record_shaping(mbw_nodes=nodes, min_size=low if low > 1 else None)
        # block placement: the first half of the ranks (nodes) pairs with the second half
        self.place(nodes, self.ranks_per_node, round_robin=False)

    def result_problems(self):
        res = self.result()
        nodes, virtual = self.layout_on(self.current_partition)
        problems = self.run_problems(res, "osu_mbw_mr", "osu_mbw_mr",
                                     links=1 if virtual else nodes // 2, one_host=virtual)
        if res.pairs is not None and res.pairs != self.num_tasks // 2:
            problems.append(f"osu_mbw_mr: {res.pairs} pairs, expected {self.num_tasks // 2}")
        return problems

    @performance_function("MB/s")
    def peak_bw(self):
        return self.result().peak()

    @performance_function("MB/s")
    def node_pair_bw(self):
        """The Slingshot acceptance notes' 'Peak BW/Node': peak aggregate over the number of
        node pairs."""
        return self.result().peak() / self.node_pairs

    def figure_place(self, var, failed):
        """The node set the figure was measured on: the job's nodes as a hostlist."""
        got = job_nodes(self)
        return (compress(got) if got else "",
                f"{self.scope} node set, {self.node_pairs} node pairs")


@rfm.simple_test
class OsuGpuAwareTest(OsuBase):
    descr = "OSU GPU-aware bandwidth host and device buffers: D-D must reach a fraction of H-H"
    scenario = variable(str, value="gpu-aware")
    benchmark = parameter(["osu_bw", "osu_bibw"])
    #: node: both ranks on one node (the Crusher GPU notes' case); nodes: one on each of two
    span = parameter(["node", "nodes"])
    #: D-D bandwidth must reach this fraction of H-H (the Crusher GPU notes: 10.9/19.5 = 0.56 fails)
    min_fraction = variable(Real, value=0.8)
    #: the buffer pairs run, in this order, in one job
    modes = variable(typ.List[str], value=["H H", "H D", "D D"])

    tags = {"fabric", "osu", "gpu", "gpu-aware", "acceptance", "regression"}

    def needs_gpu(self) -> bool:
        return True

    def placement_on(self, part):
        if self.span == "node":
            return 1, 2
        nodes = self.nodes_on(part)
        if nodes < 2:
            raise ValueError(f"{self.benchmark} between nodes needs 2 nodes, has {nodes}")
        return 2, 1

    @run_after("setup")
    def configure(self):
        runtime = self.extra("gpu_runtime", "cuda")
        nodes, ppn = self.placement_on(self.current_partition)
        self.osu_exe = self.osu_binary(self.benchmark)
        self.accel = runtime
        self.executable = self.osu_exe
        # the main launch is the last mode; the others run first into their own files
        self.executable_opts = [*self.size_opts(), "-d", runtime, *self.modes[-1].split()]
        self.place(nodes, ppn, round_robin=False)
        if self.span == "node":
            gpus = gpus_on(self.current_partition)
            self.descr = (f"{self.benchmark} H H, H D, D D on one node: 2 ranks "
                          + ("on 2 of its GPUs" if gpus >= 2 else "sharing its one GPU"
                             if gpus == 1 else "(the partition declares no gpu devices)"))

    @run_before("run")
    def other_modes(self):
        launch = self.launch_prefix()
        for mode in self.modes[:-1]:
            out = f"osu_{mode.replace(' ', '')}.out"
            cmd = [launch, self.osu_exe, *self.size_opts(), "-d", self.accel, mode, ">", out]
            status = EXIT_STATUS_LINE.format(what=f"the {mode} run", status="$?")
            self.prerun_cmds.append(" ".join(cmd) + f'; echo "{status}" >&2')

    def mode_result(self, mode: str):
        if mode == self.modes[-1]:
            return self.result()
        return self.parsed(f"osu_{mode.replace(' ', '')}.out")

    def result_problems(self):
        name = os.path.basename(self.osu_exe)
        problems = []
        for mode in self.modes:
            res = self.mode_result(mode)
            # one node: the ranks' path is the node's own (NVLink, xGMI, shared memory)
            problems += self.run_problems(res, f"{name} {mode}", self.benchmark,
                                          one_host=self.span == "node")
            problems += placement_problems(res, mode, self.accel, f"{name} {mode}")
        if problems:
            return problems
        frac = device_fraction(self.mode_result("D D").peak(), self.mode_result("H H").peak())
        if frac < self.min_fraction:
            problems.append(
                f"device-to-device bandwidth is {frac:.2f} of host-to-host, below "
                f"{self.min_fraction} (GPU-aware MPI not using a direct path?)"
            )
        return problems

    @performance_function("MB/s")
    def bw_hh(self):
        return self.mode_result("H H").peak()

    @performance_function("MB/s")
    def bw_hd(self):
        return self.mode_result("H D").peak()

    @performance_function("MB/s")
    def bw_dd(self):
        return self.mode_result("D D").peak()

    @performance_function("ratio")
    def dd_over_hh(self):
        return device_fraction(self.mode_result("D D").peak(), self.mode_result("H H").peak())

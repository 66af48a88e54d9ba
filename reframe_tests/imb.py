"""Intel MPI Benchmarks ``IMB-MPI1 PingPong|Uniband|Biband -msglog N`` between two nodes (the
ORFEO IMB notes), and its collectives ``allreduce|alltoall|bcast|allgather`` over the
partition's nodes, one rank each (two ranks on one host), ``-npmin`` the ranks (one block).

The collectives take IMB's own command-line names (``-n 'ImbTest%benchmark=allreduce'``); the
point-to-point cases keep their names (``PingPong``), so that the references and stored
sessions written under them still match. A collective's sizes are IMB's: 0, 1, 2 ... bytes, a
reduction's 0, 4, 8 ... (IMB reduces MPI_FLOATs, ``parsers/imb.py``); up to ``-msglog``: 22
(IMB's default, 4 MiB; ``extras.imb_msglog`` caps it), 16 quick. Performance of a collective
(us, ``t_avg``): ``latency`` at 8 bytes, ``latency_large`` at the largest size,
``latency_large_max`` (``t_max`` there: the slowest rank's; judged where a system has a
reference for it) and ``latency_<size>`` for every size (informational); it is physically
possible when no time is below what its bytes take through the transport's link
(``parsers/collectives.py``).

``transport``: ``rdma`` or ``tcp``; each sets the partition's variables for it
(``extras.transports``, e.g. orfeo's ``UCX_NET_DEVICES=bond0`` for TCP over the 25 GbE bond),
exported to the ranks (``mpirun -x``). Performance: ``latency`` (us, 0 bytes, PingPong) and
``peak_bw`` (MB/s). Identity: the benchmark's block and column header (units), each size
once, no line inside the table, no rate above the transport's line rate
(``extras.transport_line_rate_gbps``, else ``extras.line_rate_gbps``; x 2 for Biband). Sizes: ``-msglog`` 28 (``extras.imb_msglog`` where a partition caps it,
e.g. ``local``), 16 with ``size_profile=quick``, or ``-S msglog=``; ``-iter``
from ``extras.imb_iter`` or ``-S max_repetitions=``. ``+imb`` partitions only; the binary comes
from the ``FabricBinaries`` fixture (Spack's, else ``IMB_HOME`` or PATH).
"""

from __future__ import annotations

import reframe as rfm
from fabric_base import FabricTest
from fabric_line_rate import link_rate
from fabric_placement import job_nodes, one_host
from fabric_types import Count
from reframe.core.builtins import parameter, performance_function, run_after, variable

from fabrictest.parsers import physical
from fabrictest.parsers.hostlists import compress
from fabrictest.parsers.imb import above_line_rate, missing, parse_imb, too_fast

#: IMB-MPI1's collectives this family runs, by IMB's command-line names
COLLECTIVES = ["allreduce", "alltoall", "bcast", "allgather"]
#: a collective's small-message headline size (bytes)
SMALL_BYTES = 8


@rfm.simple_test
class ImbTest(FabricTest):
    descr = "IMB PingPong, Uniband, Biband between two nodes, and collectives, over RDMA or TCP"
    scenario = variable(str, value="paired")
    benchmark = parameter(["PingPong", "Uniband", "Biband", *COLLECTIVES])
    transport = parameter(["rdma", "tcp"])
    #: largest size 2**msglog (the ORFEO IMB notes: 28); quick profile: 16
    msglog = variable(Count, type(None), value=None)
    #: at most this many repetitions per size (-iter); unset: extras.imb_iter, else IMB's default
    max_repetitions = variable(Count, type(None), value=None)

    tags = {"fabric", "imb", "acceptance", "regression"}
    shaped_by = ("msglog", "max_repetitions", "num_nodes")
    requires = ("imb",)
    #: the per-size times, and the slowest rank's time where a system gives it no reference
    informational_perf_vars = [r"latency_\d+", "latency_large_max"]

    @property
    def collective(self) -> bool:
        return self.benchmark in COLLECTIVES

    @run_after("init")
    def name_the_collectives_scenario(self):
        """A collective's figures are a node set's, not a pair's (a failure reads
        ``node[01-04] (collective, 4 nodes)``), as OsuCollectiveTest's."""
        if self.collective:
            self.scenario = "collective"

    def required_features(self) -> list[str]:
        # the rdma transport is the RDMA NIC's (UCX_NET_DEVICES=mlx5_0:1 on orfeo)
        extra = ["rdma"] if self.transport == "rdma" else []
        return list(dict.fromkeys([*super().required_features(), *extra]))

    def placement_on(self, part):
        """Two ranks on two nodes (one host: both here); a collective: every node, one rank
        each (one host: two ranks)."""
        if not self.collective:
            nodes = self.pair_nodes_on(part)
            return nodes, 2 // nodes
        nodes = self.nodes_on(part)
        if nodes < 2 and not one_host(part):
            raise ValueError(f"a collective between nodes needs 2 nodes, has {nodes}")
        return (nodes, 1) if nodes >= 2 else (1, 2)

    def why_not_on(self, part):
        if self.transport not in part.extras.get("transports", {}):
            return f"defines no '{self.transport}' transport (extras.transports)"
        return super().why_not_on(part)

    @run_after("setup")
    def configure(self):
        self.executable = self.binaries.imb()
        nodes, ppn = self.placement_on(self.current_partition)
        transports = self.extra("transports")
        # a partition may cap the full profile; the collectives run up to IMB's default 4 MiB
        full = min(int(self.extra("imb_msglog", 28)), 22 if self.collective else 28)
        msglog = self.msglog or (16 if self.size_profile == "quick" else full)
        self.executable_opts = [self.benchmark.lower(), "-msglog", str(msglog)]
        if self.collective:  # one block, of every rank (not 2, 4 ... as IMB does by default)
            self.executable_opts += ["-npmin", str(nodes * ppn)]
        reps = self.max_repetitions or int(self.extra("imb_iter", 0))
        self.record_shaping(msglog=msglog, max_repetitions=reps,
                            num_nodes=nodes if self.collective else None)
        if reps:
            self.executable_opts += ["-iter", str(reps)]
        self.place(nodes, ppn, round_robin=True)
        self.export_to_ranks(dict(transports[self.transport]))

    def parse(self, text):
        return parse_imb(text)

    def measured(self):
        """This case's benchmark in the parsed output."""
        return self.result().benchmark(self.benchmark)

    def result_problems(self):
        """Whole (every size, the closing line), the benchmark's block and columns (units),
        its process count (2; a collective's: every rank), every rate within the transport's
        line rate and no collective faster than its link (the shared-memory ceiling where the
        ranks are on one host)."""
        nodes, _ppn = self.placement_on(self.current_partition)
        floor = physical.SHARED_TOP_FLOOR if nodes == 1 else physical.TOP_FLOOR
        problems = missing(self.result(), self.benchmark, 1 << self.shaping()["msglog"],
                           top_floor=floor)
        want = self.num_tasks if self.collective else 2
        if not problems and self.measured().nprocs != want:
            problems.append(f"{self.benchmark}: {self.measured().nprocs} processes, "
                            f"expected {want}")
        rate, what = link_rate(self.current_partition, nodes == 1, self.transport)
        if rate is None:
            return [*problems, what]
        return (problems + above_line_rate(self.result(), self.benchmark, rate, what=what)
                + too_fast(self.result(), self.benchmark, rate, what=what))

    @performance_function("us")
    def latency(self):
        """PingPong: t[usec] at 0 bytes; a collective: t_avg[usec] at 8 bytes."""
        return self.measured().latency_at(SMALL_BYTES if self.collective else 0)

    @performance_function("us")
    def latency_large(self):
        """A collective's t_avg[usec] at its largest size (2**msglog)."""
        return self.measured().latency_at(1 << self.shaping()["msglog"])

    @performance_function("us")
    def latency_large_max(self):
        """A collective's t_max[usec] at its largest size: the slowest rank's time. A slow link
        delays its own node's rank most, and the others' average can hide it (IMB allreduce
        on the vcluster, node03 15 % slower: t_avg within the healthy spread, t_max 15-30 %
        above it)."""
        return self.measured().slowest_at(1 << self.shaping()["msglog"])

    @performance_function("MB/s")
    def peak_bw(self):
        return self.measured().peak_bandwidth()

    @run_after("setup")
    def choose_perf(self):
        if self.collective:
            self.perf_variables = {"latency": self.latency(),
                                   "latency_large": self.latency_large(),
                                   "latency_large_max": self.latency_large_max()}
        elif self.benchmark == "PingPong":
            self.perf_variables = {"latency": self.latency(), "peak_bw": self.peak_bw()}
        else:
            self.perf_variables = {"peak_bw": self.peak_bw()}

    def dynamic_perf_variables(self):
        if not self.collective:
            return {}
        return {f"latency_{row.bytes}": (row.t_avg, "us") for row in self.measured().rows
                if row.bytes}

    def figure_place(self, var, failed):
        """A collective's nodes (the job's), as a hostlist."""
        got = job_nodes(self) if self.collective else []
        return (compress(got), f"{len(got)} nodes") if got else ("", "")

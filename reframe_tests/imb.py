"""Intel MPI Benchmarks ``IMB-MPI1 PingPong|Uniband|Biband -msglog N`` between two nodes (the
ORFEO IMB notes).

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
from fabric_types import Count
from reframe.core.builtins import parameter, performance_function, run_after, variable

from fabrictest.parsers import physical
from fabrictest.parsers.imb import above_line_rate, missing, parse_imb


@rfm.simple_test
class ImbTest(FabricTest):
    descr = "IMB PingPong, Uniband and Biband between two nodes over RDMA or TCP"
    scenario = variable(str, value="paired")
    benchmark = parameter(["PingPong", "Uniband", "Biband"])
    transport = parameter(["rdma", "tcp"])
    #: largest size 2**msglog (the ORFEO IMB notes: 28); quick profile: 16
    msglog = variable(Count, type(None), value=None)
    #: at most this many repetitions per size (-iter); unset: extras.imb_iter, else IMB's default
    max_repetitions = variable(Count, type(None), value=None)

    tags = {"fabric", "imb", "acceptance", "regression"}
    shaped_by = ("msglog", "max_repetitions")
    requires = ("imb",)

    def required_features(self) -> list[str]:
        # the rdma transport is the RDMA NIC's (UCX_NET_DEVICES=mlx5_0:1 on orfeo)
        extra = ["rdma"] if self.transport == "rdma" else []
        return list(dict.fromkeys([*super().required_features(), *extra]))

    def placement_on(self, part):
        nodes = self.pair_nodes_on(part)
        return nodes, 2 // nodes

    def why_not_on(self, part):
        if self.transport not in part.extras.get("transports", {}):
            return f"defines no '{self.transport}' transport (extras.transports)"
        return super().why_not_on(part)

    @run_after("setup")
    def configure(self):
        self.executable = self.binaries.imb()
        nodes, ppn = self.placement_on(self.current_partition)
        transports = self.extra("transports")
        full = int(self.extra("imb_msglog", 28))  # a partition may cap the full profile
        msglog = self.msglog or (16 if self.size_profile == "quick" else full)
        self.executable_opts = [self.benchmark.lower(), "-msglog", str(msglog)]
        reps = self.max_repetitions or int(self.extra("imb_iter", 0))
        self.record_shaping(msglog=msglog, max_repetitions=reps)
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
        2 processes, every rate within the transport's line rate (the shared-memory ceiling
        where both ranks are on one host)."""
        nodes, _ppn = self.placement_on(self.current_partition)
        floor = physical.SHARED_TOP_FLOOR if nodes == 1 else physical.TOP_FLOOR
        problems = missing(self.result(), self.benchmark, 1 << self.shaping()["msglog"],
                           top_floor=floor)
        if not problems and self.measured().nprocs != 2:
            problems.append(f"{self.benchmark}: {self.measured().nprocs} processes, expected 2")
        rate, what = link_rate(self.current_partition, nodes == 1, self.transport)
        if rate is None:
            return [*problems, what]
        return problems + above_line_rate(self.result(), self.benchmark, rate, what=what)

    @performance_function("us")
    def latency(self):
        return self.measured().latency_at(0)

    @performance_function("MB/s")
    def peak_bw(self):
        return self.measured().peak_bandwidth()

    @run_after("setup")
    def choose_perf(self):
        if self.benchmark != "PingPong":
            self.perf_variables.pop("latency", None)

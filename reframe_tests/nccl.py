"""NCCL/RCCL collectives on ``+gpu`` partitions: NVIDIA's ``nccl-tests`` (CUDA) or AMD's
``rccl-tests`` (ROCm), the same programs and output (``fabrictest.parsers.nccl``).

``NcclTest``: ``BENCHMARK -b 8 -e 8G -f 2 -g 1 -c 1``, one rank per GPU (``-g 1``, bound with
the partition's ``gpu`` resource: ``--gpus-per-task=1 --gpu-bind=closest``), ``benchmark`` =
``all_reduce_perf`` | ``alltoall_perf`` (nccl-tests' name for all-to-all), ``span`` = ``node``
(every GPU of one node: NVLink, xGMI, PCIe) | ``nodes`` (every GPU of every node: the fabric).
Listed where a node has two GPUs at least (with one rank the bus bandwidth is 0 by definition:
no data crosses a link) and, for ``nodes``, where the partition has two nodes.

Sanity: the run whole and checked (every size from 8 B to 8 GiB, each printed as the benchmark
makes it for the ranks, ``#wrong`` 0, ``Out of bounds values : 0 OK``, the closing average),
its figures nccl-tests' own arithmetic (algbw = size / time, busbw = algbw x the benchmark's
factor), and every bus bandwidth within what the links carry: the shared-memory ceiling of
``fabric_line_rate`` within one node (no GPU moves data faster than its memory), across nodes
the partition's line rate x 2 (busbw counts an all-reduce's bytes twice: 2(n-1)/n x algbw) x
the node's GPUs (one link per GPU at most, as on the HGX/MI300X nodes; a node with more NICs
than GPUs declares the rate of its links together). Performance: ``busbw`` (GB/s, out-of-place, at the largest size) against the
reference the system's link rate gives (reference/<system>.yaml says how), and
``avg_busbw`` (the closing line, informational: it averages the latency-bound small sizes).
Binaries: the system's Spack environment (``nccl-tests``/``rccl-tests`` from Spack's builtin
recipes, ``fabrictest+nccl``), elsewhere ``NCCL_TESTS_HOME`` or ``PATH``; ``+nccl`` partitions.
"""

from __future__ import annotations

import reframe as rfm
from fabric_base import FabricTest
from fabric_line_rate import link_rate
from fabric_placement import gpus_on
from fabric_types import Count
from reframe.core.builtins import parameter, performance_function, run_after, variable

from fabrictest.parsers import physical
from fabrictest.parsers.nccl import above_line_rate, missing, parse_nccl

#: -e of the full profile (the issue's 8G) and of the quick one
FULL_MAX_BYTES = 8 << 30
QUICK_MAX_BYTES = 64 << 20


@rfm.simple_test
class NcclTest(FabricTest):
    descr = "NCCL/RCCL collective bus bandwidth (nccl-tests, rccl-tests), one rank per GPU"
    scenario = variable(str, value="collective")
    benchmark = parameter(["all_reduce_perf", "alltoall_perf"])
    #: node: the GPUs of one node; nodes: the GPUs of every node of the partition
    span = parameter(["node", "nodes"])
    #: smallest size (-b)
    min_bytes = variable(Count, value=8)
    #: largest size (-e); unset: 8 GiB (64 MiB in the quick profile)
    max_bytes = variable(Count, type(None), value=None)

    tags = {"fabric", "gpu", "nccl", "collective", "acceptance", "regression"}
    shaped_by = ("min_bytes", "max_bytes", "num_nodes")
    requires = ("nccl",)
    informational_perf_vars = ["avg_busbw"]

    def needs_gpu(self) -> bool:
        return True

    def placement_on(self, part):
        gpus = gpus_on(part)
        if gpus < 2:
            raise ValueError(f"{self.benchmark} needs 2 GPUs per node (one rank each), the "
                             f"partition declares {gpus}: with one rank the bus bandwidth is 0")
        if self.span == "node":
            return 1, gpus
        nodes = self.nodes_on(part)
        if nodes < 2:
            raise ValueError(f"{self.benchmark} across nodes needs 2 nodes, has {nodes}")
        return nodes, gpus

    def top_bytes(self) -> int:
        return self.max_bytes or (QUICK_MAX_BYTES if self.size_profile == "quick"
                                  else FULL_MAX_BYTES)

    @run_after("setup")
    def configure(self):
        nodes, gpus = self.placement_on(self.current_partition)
        self.executable = self.binaries.nccl(self.benchmark)
        self.executable_opts = ["-b", str(self.min_bytes), "-e", str(self.top_bytes()),
                                "-f", "2", "-g", "1", "-c", "1"]
        self.record_shaping(max_bytes=self.top_bytes(), num_nodes=nodes)
        self.place(nodes, gpus, round_robin=False)
        self.descr = (f"{self.benchmark} on {nodes} node(s) x {gpus} GPUs, one rank each, "
                      f"{self.min_bytes} B .. {self.top_bytes()} B")

    def parse(self, text):
        return parse_nccl(text)

    def result_problems(self):
        problems = missing(self.result(), self.benchmark, self.min_bytes, self.top_bytes(),
                           ranks=self.num_tasks)
        part = self.current_partition
        rate, what = link_rate(part, one_host=self.span == "node")
        if rate is None:
            return [*problems, what]
        ceiling = (physical.Ceiling(rate, what=what) if self.span == "node"
                   else physical.Ceiling(rate, directions=2, links=gpus_on(part), what=what))
        return problems + above_line_rate(self.result(), self.benchmark, ceiling)

    @performance_function("GB/s")
    def busbw(self):
        return self.result().largest().out_of_place.busbw

    @performance_function("GB/s")
    def avg_busbw(self):
        return self.result().avg_busbw

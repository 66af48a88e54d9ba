"""perftest ``ib_write_bw -c UC`` between two nodes: the line-rate anchor for the tx/rx figures.

Rank 0 runs the server, rank 1 the client (``resources/perftest_pair.sh``), RoCE GID index from
the partition (``extras.gid_index``), ``--report_gbits``. ``+rdma +perftest`` partitions only;
the binary comes from the ``FabricBinaries`` fixture (Spack's, else ``PATH``). Performance:
``bw_avg`` (Gbps). Identity: the client's ``RDMA_Write BW`` output in Gb/sec, its connection
type, the requested size, each size once, no average above the line rate
(``extras.line_rate_gbps``).
"""

from __future__ import annotations

import reframe as rfm
from fabric_base import FabricTest
from fabric_binaries import REPO_ROOT
from fabric_line_rate import link_rate
from fabric_types import Count
from reframe.core.builtins import performance_function, run_after, variable

from fabrictest.parsers.perftest import above_line_rate, missing, parse_perftest
from fabrictest.txrx.options import DEFAULT_MSG_SIZE

#: the banner of ib_write_bw (``RDMA_Write BW Test``); --report_gbits prints Gb/sec
TEST = "RDMA_Write BW"


@rfm.simple_test
class PerftestWriteBwTest(FabricTest):
    descr = "perftest ib_write_bw between two nodes: the line-rate anchor of the tx/rx figures"
    scenario = variable(str, value="paired")
    connection = variable(str, value="UC")
    #: bytes per message: the tx/rx tool's default, whose figures this one anchors
    msg_size = variable(Count, value=DEFAULT_MSG_SIZE)
    #: iterations; unset: 100_000 (5_000 in the quick profile)
    perftest_iters = variable(Count, type(None), value=None)

    tags = {"fabric", "perftest", "rdma", "acceptance", "regression"}
    shaped_by = ("msg_size", "connection", "perftest_iters")
    requires = ("rdma", "perftest")

    def placement_on(self, part):
        nodes = self.nodes_on(part)
        if nodes < 2:
            raise ValueError(f"ib_write_bw between nodes needs 2 nodes, has {nodes}")
        return 2, 1  # rank 0 the server, rank 1 the client

    @run_after("setup")
    def configure(self):
        nodes, ppn = self.placement_on(self.current_partition)
        exe = self.binaries.perftest("ib_write_bw")
        self.sourcesdir = str(REPO_ROOT / "reframe_tests" / "resources")
        iters = self.perftest_iters or (5_000 if self.size_profile == "quick" else 100_000)
        self.record_shaping(perftest_iters=iters)
        cmd = [
            exe,
            "-c",
            self.connection,
            "-s",
            str(self.msg_size),
            "-n",
            str(iters),
            "--report_gbits",
            "-F",
        ]
        if self.extra("rdma_device"):
            cmd += ["-d", self.extra("rdma_device")]
        if self.extra("gid_index") is not None:
            cmd += ["-x", str(self.extra("gid_index"))]
        self.place(nodes, ppn, round_robin=False)
        hosts = self.placed_hosts()  # the pair's hosts where the launcher picks them (hostfile)
        if hosts:
            server = hosts[0]
        elif self.is_slurm:
            server = '$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)'
        else:
            server = "$(hostname)"
        self.prerun_cmds = [*self.prerun_cmds, f"SERVER_HOST={server}"]
        self.executable = "./perftest_pair.sh"
        self.executable_opts = ['"$SERVER_HOST"', *cmd]

    def parse(self, text):
        return parse_perftest(text)

    def result_problems(self):
        res = self.result()
        problems = missing(res, msg_size=self.msg_size, test=TEST, units="Gb/sec")
        if res.role != "client":
            problems.append(f"perftest: the output is the {res.role}'s, expected the client's")
        if res.transport != self.connection:
            problems.append(f"perftest: connection {res.transport}, expected {self.connection}")
        rate, what = link_rate(self.current_partition, one_host=False)
        if rate is None:
            return [*problems, what]
        return problems + above_line_rate(res, rate, what)

    @performance_function("Gbps")
    def bw_avg(self):
        return self.result().peak_avg_gbps()

"""tx/rx scenarios of seed 000 with our ``txrx`` tool (RoCE RDMA WRITE or MPI).

``scenario``: same-node | paired | many-to-one | pairs-of-three; ``span``: ``one`` (one node,
pair or triple, as in the seed's single demos) or ``many`` (as many as the partition's nodes
allow, as in its multi-node demos); ``method``: rdma (``+rdma`` partitions) | mpi (everywhere);
``buffer``: host | cuda (``+gpu`` partitions).

Sanity: every stream reports, received == total == nmsg, loss rate 0 (or <= ``loss_tolerance``
with ``--transport uc``), every transmitter reports, no ``ERROR`` lines.
Performance (Gbps): ``stream_gbps`` (slowest stream), ``node_gbps`` (slowest receiving node,
sum of its streams), ``tx_gbps`` (slowest transmitter), and per link ``rx<R>_tx<T>_gbps`` and
per node ``node_<host>_gbps`` (``node_<index>_gbps`` where hosts are unknown), each checked
against the headline's reference: the failure names the slow link or node.
"""

from __future__ import annotations

import reframe as rfm
from fabric_base import FabricTest, perf_name, txrx_layout
from reframe.core.builtins import parameter, performance_function, run_after, variable

from fabrictest.parsers.txrx import missing, parse_txrx


@rfm.simple_test
class TxRxTest(FabricTest):
    scenario = parameter(["same-node", "paired", "many-to-one", "pairs-of-three"])
    span = parameter(["one", "many"])
    method = parameter(["mpi", "rdma"])
    buffer = parameter(["host", "cuda"])

    msg_size = variable(int, value=65536)
    num_blks = variable(int, value=10)
    num_cmsgs = variable(int, value=100)
    #: messages per stream; 0: 100_000 (seed 000), 20_000 in the quick profile
    nmsg = variable(int, value=0)
    #: rdma queue pair type
    transport = variable(str, value="uc")
    #: largest loss rate accepted (only with --method rdma --transport uc)
    loss_tolerance = variable(float, value=0.0)
    #: txrx --timeout (s)
    txrx_timeout = variable(float, value=120.0)

    executable = "txrx"
    tags = {"fabric", "txrx", "acceptance", "regression"}
    shaped_by = ("msg_size", "num_blks", "num_cmsgs", "nmsg", "transport")
    reference_aliases = {
        r"rx\d+_tx\d+_gbps": "stream_gbps",
        r"node_(\d+|\w+)_gbps": "node_gbps",
    }

    def needs_gpu(self) -> bool:
        return self.buffer != "host"

    @run_after("setup")
    def configure(self):
        part = self.current_partition.fullname
        self.skip_if(
            self.method == "rdma" and not self.has_feature("rdma"),
            f"--method rdma needs an RDMA NIC: {part} has no +rdma feature",
        )
        self.skip_if(
            self.buffer != "host" and not self.has_feature("gpu"),
            f"--buffer {self.buffer} needs GPUs: {part} has no +gpu feature",
        )
        try:
            self.layout = txrx_layout(self.scenario, self.span, self.partition_nodes())
        except ValueError as err:
            self.skip(f"{err} ({part})")
        nmsg = self.nmsg or int(
            self.extra("txrx_nmsg", 20_000 if self.size_profile == "quick" else 100_000)
        )
        self.expected_nmsg = nmsg
        opts = [
            "--nrx",
            self.layout.nrx,
            "--nlink",
            self.layout.nlink,
            "--method",
            self.method,
            "--msg-size",
            self.msg_size,
            "--num-blks",
            self.num_blks,
            "--num-cmsgs",
            self.num_cmsgs,
            "--nmsg",
            nmsg,
            "--test",
            "throughput",
            "--timeout",
            self.txrx_timeout,
        ]
        if self.buffer != "host":
            opts += ["--buffer", self.buffer]
        if self.method == "rdma":
            opts += ["--transport", self.transport]
            if self.extra("rdma_device"):
                opts += ["--device", self.extra("rdma_device")]
            if self.extra("gid_index") is not None:
                opts += ["--gid-index", self.extra("gid_index")]
        self.executable_opts = [str(o) for o in opts]
        self.place(self.layout.nodes, self.layout.ppn, round_robin=True)
        self.descr = (
            f"tx/rx {self.scenario} ({self.span}): {self.layout.nlink} tx -> "
            f"{self.layout.nrx} rx on {self.layout.nodes} node(s), {self.method}, {self.buffer}"
        )

    # -- sanity ---------------------------------------------------------------------------
    def report(self):
        if not hasattr(self, "_report"):
            self._report = parse_txrx(self.stdout_text())
        return self._report

    def shaping(self):
        return {"msg_size": self.msg_size, "num_blks": self.num_blks,
                "num_cmsgs": self.num_cmsgs, "nmsg": self.expected_nmsg,
                "transport": self.transport if self.method == "rdma" else None}

    def launch_problems(self):
        """A failed launch, with txrx's own reason (its ERROR lines go to stderr)."""
        problems = super().launch_problems()
        if problems:
            text = self.output_text(self.stdout) + self.output_text(self.stderr)
            problems += [line.strip() for line in text.splitlines() if "ERROR:" in line][:2]
        return problems

    def result_problems(self):
        rep = self.report()
        problems = [f"ERROR lines: {list(rep.errors)}"] if rep.errors else []
        problems += missing(rep, self.layout.nrx, self.layout.nlink)
        if problems:
            return problems
        tol = self.loss_tolerance if (self.method == "rdma" and self.transport == "uc") else 0.0
        for s in rep.streams:
            tag = f"receiver {s.receiver_rank} <- transmitter {s.transmitter}"
            if s.total != self.expected_nmsg:
                problems.append(f"{tag}: total {s.total} != {self.expected_nmsg}")
            if tol == 0.0 and (s.received != s.total or s.loss_rate != 0.0):
                problems.append(f"{tag}: received {s.received} of {s.total}, "
                                f"loss rate {s.loss_rate}")
            elif s.loss_rate > tol:
                problems.append(f"{tag}: loss rate {s.loss_rate} > {tol}")
        return problems

    # -- performance ----------------------------------------------------------------------
    def node_names(self) -> list[str]:
        """Host of each node index (ranks are numbered round-robin over these): the hostfile's
        nodes, else the job's node list when it has the layout's length, else none."""
        if self.extra("hostfile"):
            return list(self.extra("nodes", []))[: self.layout.nodes]
        nodelist = list(getattr(self.job, "nodelist", None) or [])
        return nodelist if len(nodelist) == self.layout.nodes else []

    def node_rates(self) -> dict[int, float]:
        rates: dict[int, float] = {}
        for s in self.report().streams:
            node = self.layout.receiver_node(s.receiver_rank)
            rates[node] = rates.get(node, 0.0) + (s.gbps or 0.0)
        return rates

    @performance_function("Gbps")
    def stream_gbps(self):
        return min(s.gbps for s in self.report().streams)

    @performance_function("Gbps")
    def node_gbps(self):
        return min(self.node_rates().values())

    @performance_function("Gbps")
    def tx_gbps(self):
        return min(t.gbps for t in self.report().transmitters)

    def dynamic_perf_variables(self):
        out = {}
        for s in self.report().streams:
            if s.gbps is not None:
                out[f"rx{s.receiver_rank}_tx{s.transmitter}_gbps"] = (s.gbps, "Gbps")
        names = self.node_names()
        for node, rate in sorted(self.node_rates().items()):
            label = names[node] if node < len(names) else str(node)
            out[f"node_{perf_name(label)}_gbps"] = (rate, "Gbps")
        return out

"""tx/rx scenarios of the SEREN tx/rx notes with our ``txrx`` tool (RoCE RDMA WRITE or MPI).

``scenario``: same-node | paired | many-to-one | pairs-of-three; ``span``: ``one`` (one node,
pair or triple, as in the notes' single demos) or ``many`` (as many as the partition's nodes
allow, as in its multi-node demos); ``method``: rdma (``+rdma`` partitions) | mpi (everywhere);
``buffer``: host | cuda (``+gpu`` partitions).

Sanity: every stream reports, received == total == nmsg, loss rate 0 (or <= ``loss_tolerance``
with ``--transport uc``; at most 1 %), every transmitter reports, no ``ERROR`` lines, each line
once with its unit (Gbps, seconds), and no rate above what its link carries: a stream or
transmitter between two hosts, and the sum a host receives from or sends to others, within the
partition's line rate (``extras.line_rate_gbps``); a stream within one host (or over the
simulated verbs provider, a memory copy) within the shared-memory ceiling. No rank of txrx
tool-bound (its own time per message above what the line rate, passed as ``--line-rate``,
allows: then the figures measure the tool and are not judged).
Performance (Gbps): ``stream_gbps`` (slowest stream), ``node_gbps`` (slowest receiving node,
sum of its streams), ``tx_gbps`` (slowest transmitter), and per link (transmitter host ->
receiver host, from txrx's ``link is`` lines) ``stream_<tx>_to_<rx>_gbps`` and ``tx_<tx>_gbps``,
per receiving node ``node_<host>_rx_gbps`` (``_tx<t>`` is added where ranks share a host), each
checked against its headline's reference. A failure names the node(s) to look at (the ends of
the failing streams all of whose streams failed), the scenario, the link, the figure, its drop
and the bound: ``node03 (pairs-of-three, stream node03->node01): stream_gbps 0.0477 Gbps is
74.9 % below its reference 0.19 (lower bound -20 %)``.
"""

from __future__ import annotations

import reframe as rfm
from fabric_base import FabricTest
from fabric_line_rate import link_rate
from fabric_placement import job_nodes, one_host
from fabric_types import Count, Real
from reframe.core.builtins import parameter, performance_function, run_after, variable
from scenario_math import txrx_layout

from fabrictest.gpus import SHARED_MEMORY_GBPS
from fabrictest.links import Link, name_links, node_var, place_of
from fabrictest.parsers.txrx import above_line_rate, missing, parse_txrx
from fabrictest.txrx.options import (
    DEFAULT_MSG_SIZE,
    DEFAULT_NMSG,
    DEFAULT_NUM_BLKS,
    DEFAULT_NUM_CMSGS,
    option_problem,
)


@rfm.simple_test
class TxRxTest(FabricTest):
    descr = "tx/rx streams of the SEREN tx/rx notes (RDMA WRITE or MPI): per stream, node and link"
    scenario = parameter(["same-node", "paired", "many-to-one", "pairs-of-three"])
    span = parameter(["one", "many"])
    method = parameter(["mpi", "rdma"])
    buffer = parameter(["host", "cuda"])

    msg_size = variable(Count, value=DEFAULT_MSG_SIZE)
    num_blks = variable(Count, value=DEFAULT_NUM_BLKS)
    num_cmsgs = variable(Count, value=DEFAULT_NUM_CMSGS)
    #: messages per stream; unset: txrx's default (100_000, the SEREN tx/rx notes), 20_000 in
    #: the quick profile
    nmsg = variable(Count, type(None), value=None)
    #: rdma queue pair type
    transport = variable(str, value="uc")
    #: largest loss rate accepted (only with --method rdma --transport uc)
    loss_tolerance = variable(Real, value=0.0)
    #: txrx --timeout (s)
    txrx_timeout = variable(Real, value=120.0)
    #: Gbps txrx judges its own time per message against (--line-rate: it says when it cannot
    #: fill the link, and the test then fails as tool-bound); unset: the partition's
    #: line_rate_gbps (none, or the streams on one host: not judged)
    txrx_line_rate = variable(Real, type(None), value=None)
    #: verbs provider of --method rdma: 'nic' (pyverbs on a +rdma partition) or 'sim' (the
    #: simulated provider, FABRICTEST_VERBS=sim: the rdma code path without a NIC, anywhere;
    #: its rates are figures of this host's memory, named sim_* and informational)
    verbs = variable(str, value="nic")
    #: messages per stream over the simulated provider (when nmsg is unset)
    sim_nmsg = variable(Count, value=3000)

    executable = "txrx"
    tags = {"fabric", "txrx", "acceptance", "regression"}
    shaped_by = ("msg_size", "num_blks", "num_cmsgs", "nmsg", "transport")
    reference_aliases = {
        r"stream_\w+_to_\w+_gbps": "stream_gbps",
        r"tx_\w+_gbps": "tx_gbps",
        r"node_\w+_rx_gbps": "node_gbps",
    }

    def value_problems(self) -> dict[str, str]:
        """The options txrx itself would refuse (its own rule: ``-S msg_size=12`` is not a
        multiple of 8 B), before any launch (fabric_variables: family rules)."""
        why = option_problem(
            self.method, msg_size=self.msg_size, num_blks=self.num_blks,
            num_cmsgs=self.num_cmsgs, nmsg=self.nmsg, timeout=self.txrx_timeout,
            line_rate=self.txrx_line_rate,
            transport=self.transport if self.method == "rdma" else None)
        return {"txrx": f"txrx would refuse these options: {why}"} if why else {}

    def needs_gpu(self) -> bool:
        return self.buffer != "host"

    def required_features(self) -> list[str]:
        # the simulated verbs provider needs no NIC: its rdma cases run anywhere
        needed = super().required_features()
        return [f for f in needed if f != "rdma"] if self.simulated else needed

    @property
    def simulated(self) -> bool:
        """--method rdma over the simulated verbs provider (asked with -S TxRxTest.verbs=sim)."""
        return self.method == "rdma" and self.verbs == "sim"

    def placement_on(self, part):
        layout = txrx_layout(self.scenario, self.span, self.nodes_on(part))  # ValueError: why not
        return layout.nodes, layout.ppn

    @run_after("setup")
    def configure(self):
        self.layout = txrx_layout(self.scenario, self.span, self.partition_nodes())
        nmsg = self.nmsg or (self.sim_nmsg if self.simulated else int(
            self.extra("txrx_nmsg", 20_000 if self.size_profile == "quick" else DEFAULT_NMSG)
        ))
        self.expected_nmsg = nmsg
        self.record_shaping(nmsg=nmsg, transport=self.transport if self.method == "rdma" else None)
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
        # txrx says when it is tool-bound; where the streams stay on one host (the same-node
        # scenario, or a one-host partition: the partition's figure is then the memory's
        # ceiling) there is no link to fill: judged only when asked
        on_one_host = self.scenario == "same-node" or one_host(self.current_partition)
        line_rate = self.txrx_line_rate or (
            None if on_one_host else self.extra("line_rate_gbps"))
        if line_rate and not self.simulated:
            opts += ["--line-rate", line_rate]
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
        if self.simulated:
            self.simulate_verbs()

    def simulate_verbs(self) -> None:
        """Every rank uses the simulated provider; its shared segments live in the stage
        directory (every node of the job sees it; /dev/shm may be private per node); the rate
        figures are renamed sim_* and are informational (a memory copy is no NIC's rate)."""
        self.export_to_ranks({"FABRICTEST_VERBS": "sim",
                              "FABRICTEST_VERBS_SIM_DIR": self.stagedir})
        self.descr += ", simulated verbs provider (not a NIC)"
        self.perf_variables = {f"sim_{k}": v for k, v in self.perf_variables.items()}
        self.informational_perf_vars = [*self.informational_perf_vars, r"sim_\w+"]

    # -- sanity ---------------------------------------------------------------------------
    def parse(self, text):
        return parse_txrx(text)

    def launch_problems(self):
        """A failed launch, with txrx's own reason (its ERROR lines go to stderr)."""
        problems = super().launch_problems()
        if problems:
            text = self.output_text(self.stdout) + self.output_text(self.stderr)
            problems += [line.strip() for line in text.splitlines() if "ERROR:" in line][:2]
        return problems

    def tool_bound_problems(self, rep) -> list[str]:
        """Ranks whose own time per message could not fill the line rate: the figures measure
        txrx, not the link, so they are not judged against the link's references."""
        bound = rep.tool_bound()
        if not bound:
            return []
        who = ", ".join(f"{o.role} {o.index} {o.own_us:.3g} us" for o in bound)
        rates = ", ".join(f"{s.gbps:.3g}" for s in rep.streams if s.gbps is not None)
        o = bound[0]
        return [f"tool-bound, not judged against the link: txrx's own time per message ({who})"
                f" is above the {o.need_us:.3g} us that {o.line_rate_gbps:g} Gbps allows at "
                f"{self.msg_size} B, so the stream rates ({rates} Gbps) measure the tool: "
                "raise -S TxRxTest.msg_size"]

    def result_problems(self):
        rep = self.result()
        problems = [f"ERROR lines: {list(rep.errors)}"] if rep.errors else []
        problems += self.tool_bound_problems(rep)
        if rep.simulated != self.simulated:
            problems.append(
                "-S TxRxTest.verbs=sim asked for the simulated verbs provider but the output has "
                "no 'verbs provider is simulated' line" if self.simulated else
                "the output says 'verbs provider is simulated' (FABRICTEST_VERBS=sim in the "
                "environment?): these are no NIC's figures; ask with -S TxRxTest.verbs=sim"
            )
        problems += missing(rep, self.layout.nrx, self.layout.nlink)
        if problems:
            return problems
        problems += self.rate_problems(rep)
        tol = self.loss_tolerance if (self.method == "rdma" and self.transport == "uc") else 0.0
        nrx = self.layout.nrx
        links = {(x.t % nrx, x.t // nrx): x for x in self.links()}
        for s in rep.streams:
            link = links[(s.receiver_rank, s.transmitter)]
            tag = f"stream {link.tx}->{link.rx} from transmitter {link.t}"
            if s.total != self.expected_nmsg:
                problems.append(f"{tag}: total {s.total} != {self.expected_nmsg}")
            if tol == 0.0 and (s.received != s.total or s.loss_rate != 0.0):
                problems.append(f"{tag}: received {s.received} of {s.total}, "
                                f"loss rate {s.loss_rate}")
            elif s.loss_rate > tol:
                problems.append(f"{tag}: loss rate {s.loss_rate} > {tol}")
        return problems

    def rate_problems(self, rep) -> list[str]:
        """Rates above the line rate between hosts (the shared-memory ceiling within one host,
        and everywhere over the simulated provider: its data never crosses a link)."""
        rate, what = link_rate(self.current_partition, one_host=self.simulated)
        if rate is None:
            return [what]
        nrx = self.layout.nrx
        hosts = {(x.t % nrx, x.t // nrx): (x.tx, x.rx) for x in self.links()}
        return above_line_rate(rep, nrx, rate, SHARED_MEMORY_GBPS, hosts)

    # -- performance ----------------------------------------------------------------------
    def node_names(self) -> list[str]:
        """Host of each node index (ranks are numbered round-robin over these): the hosts the
        launcher placed them on (a hostfile's), else the job's node list when it has the
        layout's length, else none. Only for output without `link is` lines (the SEREN
        tool's)."""
        placed = self.placed_hosts()
        if placed:
            return placed[: self.layout.nodes]
        nodelist = job_nodes(self)
        return nodelist if len(nodelist) == self.layout.nodes else []

    def links(self) -> list[Link]:
        """Every stream as a link: transmitter host -> receiver host, from the `link is` lines
        (or, without them, the layout's round-robin placement over :meth:`node_names`); found
        once per test case."""
        if getattr(self, "named_links", None) is not None:
            return self.named_links
        names, nrx = self.node_names(), self.layout.nrx

        def host(rank: int) -> str:
            node = rank % self.layout.nodes
            return names[node] if node < len(names) else f"node{node}"

        out = []
        for s in self.result().streams:
            t = s.receiver_rank + s.transmitter * nrx  # stream K of receiver r
            out.append(Link(t, s.transmitter_host or host(nrx + t),
                            s.receiver_host or host(s.receiver_rank), s.gbps))
        self.named_links = name_links(out)
        return self.named_links

    def node_rates(self) -> dict[str, float]:
        """Receive rate of each receiving host (the sum of its streams)."""
        rates: dict[str, float] = {}
        for link in self.links():
            rates[link.rx] = rates.get(link.rx, 0.0) + (link.gbps or 0.0)
        return rates

    @performance_function("Gbps")
    def stream_gbps(self):
        return min(s.gbps for s in self.result().streams)

    @performance_function("Gbps")
    def node_gbps(self):
        return min(self.node_rates().values())

    @performance_function("Gbps")
    def tx_gbps(self):
        return min(t.gbps for t in self.result().transmitters)

    def dynamic_perf_variables(self):
        prefix = "sim_" if self.simulated else ""
        return {prefix + k: v for k, v in self.link_figures().items()}

    def link_figures(self) -> dict:
        out = {}
        for link in self.links():
            if link.gbps is not None:
                out[link.stream_var] = (link.gbps, "Gbps")
        txs = {t.rank: t for t in self.result().transmitters}
        for link in self.links():
            tx = txs.get(link.t)
            if tx is not None and tx.gbps is not None:
                out[link.tx_var] = (tx.gbps, "Gbps")
        for host, rate in sorted(self.node_rates().items()):
            out[node_var(host)] = (rate, "Gbps")
        return out

    def figure_place(self, var: str, failed: set[str]) -> tuple[str, str]:
        links = self.links()
        if self.simulated:  # sim_* figures are informational; named as the others all the same
            var, failed = var.removeprefix("sim_"), {f.removeprefix("sim_") for f in failed}
        if var == "stream_gbps":
            var = min((x for x in links if x.gbps is not None), key=lambda x: x.gbps).stream_var
        elif var == "tx_gbps":
            slowest = min((t for t in self.result().transmitters if t.gbps is not None),
                          key=lambda t: t.gbps)
            var = next(x.tx_var for x in links if x.t == slowest.rank)
        elif var == "node_gbps":
            rates = self.node_rates()
            var = node_var(min(rates, key=rates.get))
        return place_of(var, links, failed)


"""Congestion: a victim pair measured isolated and while aggressors load the network, in one job
(GPCNeT's congestion impact factor at any size, with our src/c ``congestion`` program).

``aggressors``: ``incast`` (every rank of the other nodes streams into the victim's receiving
node: they share its link) or ``all-to-all`` (the other nodes stream among themselves: none of
the victim's links). Ranks are placed round-robin over all the partition's nodes (or
``-S num_nodes=N``), 2 per node: rank 0 the victim's sender, rank 1 its receiver; incast needs
3 nodes, all-to-all 4. On a one-host partition (``local``) the case is listed only with
``-S num_nodes=N``: N groups of 2 ranks on this host, a functional run (no link is shared; the
figures are the host's memory and cores).

Sanity: both phases with finite, positive figures, the aggressors sent, the closing line, the
ranks on separate hosts. Performance: the victim's ``lat_isolated_us``/``lat_loaded_us``
(average, half a round trip), ``bw_isolated_gbps``/``bw_loaded_gbps`` and the impact factors
``lat_impact`` (loaded / isolated) and ``bw_impact`` (isolated / loaded), GPCNeT's sense: above
1 is worse under load. Informational: the 99th percentile of latency and its impact, the
aggressors' rate.
"""

from __future__ import annotations

import reframe as rfm
from fabric_base import FabricTest
from fabric_line_rate import link_rate
from fabric_placement import one_host
from fabric_types import Count, Real
from reframe.core.builtins import parameter, performance_function, run_after, variable

from fabrictest.parsers.congestion import above_line_rate, missing, parse_congestion

#: nodes each kind of aggressors needs: the victim's two, and one (incast) or two (all-to-all)
#: for the aggressors
MIN_NODES = {"incast": 3, "all-to-all": 4}
RANKS_PER_NODE = 2  # incast: the victim's receiver and the aggressors' sink share a node
#: probe sizes of the size profiles: full for a fabric (tens of MiB per bandwidth sample),
#: quick for a shaped 200 Mbit/s link (the vcluster: 4 MiB samples, seconds per phase)
FULL = {"lat_size": 8, "lat_iters": 1000, "bw_size": 1 << 20, "bw_window": 16,
        "bw_samples": 10, "aggressor_size": 1 << 20}
QUICK = {"lat_size": 8, "lat_iters": 200, "bw_size": 512 << 10, "bw_window": 8,
         "bw_samples": 5, "aggressor_size": 256 << 10}


@rfm.simple_test
class CongestionTest(FabricTest):
    descr = "congestion impact: a victim pair isolated and under incast or all-to-all aggressors"
    scenario = variable(str, value="congestion")
    aggressors = parameter(["incast", "all-to-all"])

    #: the probes' sizes, 0: the size profile's (FULL, QUICK): victim latency message bytes and
    #: ping-pong iterations; victim bandwidth message bytes, messages per sample, samples;
    #: aggressor message bytes
    lat_size = variable(Count, value=0)
    lat_iters = variable(Count, value=0)
    bw_size = variable(Count, value=0)
    bw_window = variable(Count, value=0)
    bw_samples = variable(Count, value=0)
    aggressor_size = variable(Count, value=0)
    #: seconds the aggressors load the network before the loaded probes start
    warmup_s = variable(Real, value=1.0)
    #: the congestion program to run; empty: the suite's own build (the binaries fixture)
    program = variable(str, value="")
    #: seconds any rank waits for a peer before the program ends the job (-T); unset: the
    #: program's default (docs/c-programs.md)
    program_timeout = variable(Real, type(None), value=None)

    tags = {"fabric", "congestion", "acceptance", "regression"}
    #: num_nodes too: incast's victim link carries every other node's aggressors, so its
    #: loaded figures at 16 nodes are not those at 4 (issue 42: +591 % on the 4-node band)
    shaped_by = ("lat_size", "lat_iters", "bw_size", "bw_window", "bw_samples",
                 "aggressor_size", "warmup_s", "num_nodes")
    informational_perf_vars = ["lat_p99_isolated_us", "lat_p99_loaded_us", "lat_p99_impact",
                               "aggressor_gbps"]

    def value_problems(self) -> dict[str, str]:
        """-S num_nodes below what the aggressors need: the case could run nowhere."""
        need, nodes = MIN_NODES[self.aggressors], self.num_nodes
        if isinstance(nodes, int) and nodes < need:
            return {"num_nodes": f"-S num_nodes={nodes}: {self.aggressors} aggressors need at "
                                 f"least {need} nodes (the victim's 2 and {need - 2} more)"}
        return {}

    def placement_on(self, part):
        nodes, need = self.nodes_on(part), MIN_NODES[self.aggressors]
        if one_host(part) and not self.num_nodes:
            raise ValueError("needs separate nodes: on one host the ranks share no link "
                             "(-S num_nodes=N runs N groups of ranks here, a functional run)")
        if nodes < need:
            raise ValueError(f"{self.aggressors} aggressors need {need} nodes, has {nodes}")
        return nodes, RANKS_PER_NODE

    @run_after("setup")
    def configure(self):
        nodes, ppn = self.placement_on(self.current_partition)
        profile = QUICK if self.size_profile == "quick" else FULL
        # 0: the profile's (the values' rules, fabric_variables, refused anything else)
        p = {name: getattr(self, name) or default for name, default in profile.items()}
        p["warmup_s"] = self.warmup_s
        self.record_shaping(**p, num_nodes=nodes)
        self.probe_sizes = p
        self.executable = self.program or self.binaries.program("congestion")
        self.executable_opts = [str(o) for o in (
            "-n", nodes, "-m", self.aggressors, "-l", p["lat_size"], "-i", p["lat_iters"],
            "-b", p["bw_size"], "-w", p["bw_window"], "-s", p["bw_samples"],
            "-a", p["aggressor_size"], "-W", p["warmup_s"])]
        if self.program_timeout is not None:
            self.executable_opts += ["-T", f"{self.program_timeout:g}"]
        self.place(nodes, ppn, round_robin=True)
        self.descr = (f"congestion: victim between 2 nodes, {self.aggressors} aggressors on "
                      f"{nodes - 2} more ({nodes * ppn} ranks)")

    def parse(self, text):
        return parse_congestion(text)

    def result_problems(self):
        here = one_host(self.current_partition)
        problems = missing(self.result(), mode=self.aggressors,
                           nodes=self.num_tasks // RANKS_PER_NODE, ranks=self.num_tasks,
                           one_host=here, sizes=self.probe_sizes)
        rate, what = link_rate(self.current_partition, one_host=here)
        if rate is None:
            return [*problems, what]
        return problems + above_line_rate(self.result(), rate, what)

    # -- performance ------------------------------------------------------------------------
    def phase(self, name: str):
        return self.result().phases[name]

    @performance_function("us")
    def lat_isolated_us(self):
        return self.phase("isolated").lat_avg_us

    @performance_function("us")
    def lat_loaded_us(self):
        return self.phase("loaded").lat_avg_us

    @performance_function("x")
    def lat_impact(self):
        return self.result().impact("lat_avg_us")

    @performance_function("Gbps")
    def bw_isolated_gbps(self):
        return self.phase("isolated").bw_gbps

    @performance_function("Gbps")
    def bw_loaded_gbps(self):
        return self.phase("loaded").bw_gbps

    @performance_function("x")
    def bw_impact(self):
        return self.result().impact("bw_gbps")

    @performance_function("us")
    def lat_p99_isolated_us(self):
        return self.phase("isolated").lat_p99_us

    @performance_function("us")
    def lat_p99_loaded_us(self):
        return self.phase("loaded").lat_p99_us

    @performance_function("x")
    def lat_p99_impact(self):
        return self.result().impact("lat_p99_us")

    @performance_function("Gbps")
    def aggressor_gbps(self):
        return self.result().aggressors.gbps

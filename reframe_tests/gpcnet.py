"""GPCNeT (netbench/GPCNET): ``network_test`` and ``network_load_test``, at the scale its README
asks for.

``GpcnetNetworkTest`` runs ``network_test`` (random-ring and natural-ring latency and bandwidth,
allreduce, alltoall) over every node of the partition; ``GpcnetLoadTest`` runs
``network_load_test`` (the random-ring latency, bandwidth+sync and allreduce probes isolated
and beside all-to-all, incast and broadcast congestors on 80 % of the nodes) on at least 95 % of
the partition's nodes (GPCNeT's README: results are not representative below; it refuses fewer
than 10). ``per_nic``: GPCNeT's three processes-per-NIC settings: ``1``, ``intermediate`` (the
partition's ``ranks_per_node``) and ``full`` (its ``max_ranks_per_node``). Listed only where the
partition has ``+gpcnet`` (the Spack bundle's ``+gpcnet``, or the binaries found by
:mod:`fabrictest.binaries`: ``GPCNET_HOME``, ``PATH``) and separate nodes (GPCNeT counts nodes
by host name; on one host only with ``-S num_nodes=N``, for stand-ins).

Sanity: the parser's ``missing()``: no ``ERROR`` line, every table and row of the build with its
units and figures, the impact factors, the last table closed. Performance: ``network_test``'s
isolated figures (average and 99 %); ``network_load_test``'s isolated figures and the
**Congestion Impact Factors** (``*_impact_avg``, ``*_impact_p99``; above 1 is worse under
load); every row's figures are informational (``gpcnet_*``).
"""

from __future__ import annotations

import math
import re

import reframe as rfm
from fabric_base import FabricTest
from fabric_line_rate import link_rate
from fabric_placement import node_count, one_host
from fabric_types import Flag
from reframe.core.builtins import parameter, performance_function, run_after, variable

from fabrictest.parsers.gpcnet import (
    CONGESTORS,
    ISOLATED,
    KEY_RESULTS,
    LOADED,
    above_line_rate,
    missing,
    parse_gpcnet,
)

PPN_SETTINGS = ["1", "intermediate", "full"]
#: network_load_test on at least this fraction of the partition's nodes (GPCNeT's README)
LOAD_FRACTION = 0.95
#: the fewest nodes each program accepts (network_load_test: 2 test + 8 congestor nodes)
MIN_NODES = {"network_test": 2, "network_load_test": 10}
UNITS = {"usec": "us", "MiB/s/rank": "MiB/s"}


def table_slug(title: str) -> str:
    """A short name per table: isolated, congestors, loaded (-DVERBOSE: loaded_<test>), impact."""
    short = {ISOLATED: "isolated", CONGESTORS: "congestors", LOADED: "loaded",
             KEY_RESULTS: "impact"}
    if title in short:
        return short[title]
    return "loaded_" + slug(title.removeprefix(LOADED).strip(" ()").removesuffix("Network Test"))


def slug(text: str) -> str:
    """``RR Two-sided BW+Sync (131072 B)`` -> ``rr_two_sided_bw_sync``."""
    text = re.sub(r"\s*\(.*\)$", "", text)
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


class GpcnetBase(FabricTest):
    """What both GPCNeT programs share: placement at GPCNeT's scale, the binary, the parser."""

    program = ""  # the GPCNeT program, set by each test
    per_nic = parameter(PPN_SETTINGS)
    #: a -DVERBOSE build (the Spack recipe's +verbose): more tables and columns
    verbose_build = variable(Flag, value=False)

    tags = {"fabric", "gpcnet", "congestion", "acceptance"}
    requires = ("gpcnet",)
    shaped_by = ("num_nodes", "ranks_per_node")
    informational_perf_vars = [r"gpcnet_\w+"]

    def ranks_per_node_on(self, part) -> int:
        extras = part.extras
        intermediate = int(extras.get("ranks_per_node", 1))
        return {"1": 1, "intermediate": intermediate,
                "full": int(extras.get("max_ranks_per_node", intermediate))}[self.per_nic]

    def value_problems(self) -> dict[str, str]:
        """-S num_nodes below what the program accepts: the case could run nowhere."""
        need, nodes = MIN_NODES[self.program], self.num_nodes
        if isinstance(nodes, int) and nodes < need:
            return {"num_nodes": f"-S num_nodes={nodes}: GPCNeT's {self.program} runs on at "
                                 f"least {need} nodes"}
        return {}

    def placement_on(self, part):
        nodes, need = self.nodes_on(part), MIN_NODES[self.program]
        if one_host(part) and not self.num_nodes:
            raise ValueError("GPCNeT counts nodes by host name: one host is one node")
        if nodes < need:
            raise ValueError(f"{self.program} needs {need} nodes, has {nodes}")
        if self.program == "network_load_test" and not one_host(part):
            total = node_count(part)
            if nodes < math.ceil(LOAD_FRACTION * total):
                raise ValueError(f"network_load_test runs on at least 95 % of the nodes "
                                 f"(GPCNeT's README): {nodes} of {total}")
        return nodes, self.ranks_per_node_on(part)

    @run_after("setup")
    def configure(self):
        nodes, ppn = self.placement_on(self.current_partition)
        self.record_shaping(num_nodes=nodes, ranks_per_node=ppn)
        self.executable = self.binaries.gpcnet(self.program)
        self.place(nodes, ppn, round_robin=False)
        self.job_nodes = nodes
        self.descr = f"GPCNeT {self.program}: {nodes} nodes x {ppn} ranks ({self.per_nic} per NIC)"

    def parse(self, text):
        return parse_gpcnet(text)

    def result_problems(self):
        problems = missing(self.result(), program=self.program, ranks=self.num_tasks,
                           verbose=self.verbose_build, nodes=self.job_nodes)
        rate, what = link_rate(self.current_partition, one_host=one_host(self.current_partition))
        if rate is None:
            return [*problems, what]
        return problems + above_line_rate(self.result(), rate, what)

    def figure(self, table: str, test: str, column: str) -> float:
        return self.result().table(table).row(test).values[column]

    def dynamic_perf_variables(self):
        out = {}
        for table in self.result().tables:
            where = table_slug(table.title)
            for row in table.rows:
                for column, value in row.values.items():
                    name = f"gpcnet_{where}_{slug(row.name)}_{slug(column).replace('99', 'p99')}"
                    out[name] = (value, UNITS.get(row.units, row.units))
        return out


@rfm.simple_test
class GpcnetNetworkTest(GpcnetBase):
    descr = "GPCNeT network_test: ring latency, bandwidth, allreduce, alltoall on the partition"
    scenario = variable(str, value="gpcnet-network")
    program = "network_test"

    @performance_function("us")
    def rr_lat_avg(self):
        return self.figure(ISOLATED, "RR Two-sided Lat", "Avg")

    @performance_function("us")
    def rr_lat_p99(self):
        return self.figure(ISOLATED, "RR Two-sided Lat", "99%")

    @performance_function("MiB/s")
    def rr_bw_avg(self):
        return self.figure(ISOLATED, "RR Two-sided BW", "Avg")

    @performance_function("MiB/s")
    def rr_bw_p99(self):
        return self.figure(ISOLATED, "RR Two-sided BW", "99%")

    @performance_function("us")
    def allreduce_avg(self):
        return self.figure(ISOLATED, "Multiple Allreduce", "Avg")

    @performance_function("MiB/s")
    def alltoall_avg(self):
        return self.figure(ISOLATED, "Multiple Alltoall", "Avg")


@rfm.simple_test
class GpcnetLoadTest(GpcnetBase):
    descr = "GPCNeT network_load_test: congestion impact factors on 95 % of the partition's nodes"
    scenario = variable(str, value="gpcnet-load")
    program = "network_load_test"

    @performance_function("us")
    def rr_lat_avg(self):
        return self.figure(ISOLATED, "RR Two-sided Lat", "Avg")

    @performance_function("MiB/s")
    def rr_bw_sync_avg(self):
        return self.figure(ISOLATED, "RR Two-sided BW+Sync", "Avg")

    @performance_function("us")
    def allreduce_avg(self):
        return self.figure(ISOLATED, "Multiple Allreduce", "Avg")

    @performance_function("x")
    def lat_impact_avg(self):
        return self.result().impact("RR Two-sided Lat")[0]

    @performance_function("x")
    def lat_impact_p99(self):
        return self.result().impact("RR Two-sided Lat")[1]

    @performance_function("x")
    def bw_impact_avg(self):
        return self.result().impact("RR Two-sided BW+Sync")[0]

    @performance_function("x")
    def bw_impact_p99(self):
        return self.result().impact("RR Two-sided BW+Sync")[1]

    @performance_function("x")
    def allreduce_impact_avg(self):
        return self.result().impact("Multiple Allreduce")[0]

    @performance_function("x")
    def allreduce_impact_p99(self):
        return self.result().impact("Multiple Allreduce")[1]

"""NIC pre-flight health on ``+rdma`` partitions (the Slingshot acceptance notes' checklist, as
far as a node can check itself): ``fabric-health`` once on every node. It prints
``HEALTH <node> <dev>/<port> <check>: PASS|FAIL <detail>`` lines (port ACTIVE and link up, link
layer, active MTU >= expected, rate >= expected, a RoCE v2 GID on Ethernet ports, the netdev's
MTU, ARP cache thresholds for the job's node count) and ``HEALTH summary: N checks, M failed``.

Sanity: every node reports (a node without an RDMA device says so and fails), no check fails;
the failure message names node, port and check. No performance variables.
"""

from __future__ import annotations

import reframe as rfm
from fabric_base import FabricTest
from reframe.core.builtins import run_after, variable

from fabrictest.parsers.health import missing, parse_health


@rfm.simple_test
class NicHealthTest(FabricTest):
    descr = "NIC pre-flight health on every node: port, link, MTU, rate, GID (fabric-health)"
    scenario = variable(str, value="health")
    executable = "fabric-health"
    time_limit = "5m"
    tags = {"fabric", "health", "preflight", "acceptance"}
    requires = ("rdma",)  # it checks RDMA ports

    def placement_on(self, part):
        return self.nodes_on(part), 1  # once on every node

    @run_after("setup")
    def configure(self):
        self.nodes_checked, ppn = self.placement_on(self.current_partition)
        opts = ["--nodes", str(self.nodes_checked)]
        for key, flag in (
            ("expect_mtu", "--expect-mtu"),
            ("expect_rate", "--expect-rate"),
            ("link_layer", "--link-layer"),
            ("netdev_mtu", "--netdev-mtu"),
        ):
            if self.extra(key):
                opts += [flag, str(self.extra(key))]
        if self.extra("rdma_device"):
            opts += ["--device", str(self.extra("rdma_device"))]
        self.executable_opts = opts
        self.place(self.nodes_checked, ppn, round_robin=True)

    def parse(self, text):
        return parse_health(text)

    def result_problems(self):
        rep = self.result()
        problems = [f"no RDMA device on {node}: {why}" for node, why in rep.no_device.items()]
        problems += missing(rep, self.nodes_checked)
        failed = [f"{r.node} {r.device}/{r.port} {r.check}: {r.detail}" for r in rep.failures()]
        if failed:
            problems.append(f"failed checks: {failed}")
        elif rep.failed:
            problems.append(f"summaries count {rep.failed} failed checks")
        return problems

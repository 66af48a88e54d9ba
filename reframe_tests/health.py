"""Stage 1, the NIC pre-flight health (the Slingshot acceptance notes' checklist, as far as a
node can check itself): ``fabric-health`` once on every node. It prints ``HEALTH <node>
<dev>/<port> <check>: PASS|FAIL <detail>`` lines and ``HEALTH summary: N checks, M failed``:

* on ``+rdma`` partitions the RDMA ports (ACTIVE and link up, link layer, active MTU and rate
  at least the expected ones, a RoCE v2 GID on Ethernet ports), the port's netdev MTU and the
  ARP cache thresholds for the job's node count;
* on partitions that name their fabric NICs (``extras.fabric_nics``; ``--no-rdma`` without
  ``+rdma``) each NIC's MAC (``mac_rule``), fabric address (``fabric_subnet`` or the
  inventory's), name both ways (``fabric_hostname``), LLDP neighbour against the cabling
  (``inventory``, else the partition's ``topology``), loopback rate (``loopback_fraction``),
  and the management targets (``mgmt_targets``). docs/health.md says how a site declares them.

Sanity: every node reports (a node without an RDMA device says so and fails), no check fails;
the failure message names node, NIC and check with what was found and expected. No
performance variables. After the run the verdict per node is written for the performance
stage (:mod:`fabric_stage1`: a node that failed is left out of every other test).
"""

from __future__ import annotations

from pathlib import Path

import reframe as rfm
from fabric_base import FabricTest
from fabric_placement import job_nodes
from fabric_stage1 import write_record
from reframe.core.builtins import run_after, run_before, variable

from fabrictest.parsers import ParseError
from fabrictest.parsers.health import missing, parse_health

REPO_ROOT = Path(__file__).resolve().parents[1]
#: partition extras -> fabric-health's option (a list is joined with commas)
FABRIC_OPTIONS = (("inventory", "--inventory"), ("mac_rule", "--mac-rule"),
                  ("fabric_hostname", "--fabric-hostname"), ("fabric_subnet", "--fabric-subnet"),
                  ("lldp_socket", "--lldp-socket"), ("mgmt_targets", "--mgmt"),
                  ("loopback_fraction", "--loopback"), ("port_rate", "--port-rate"))


def _repo_path(value: str) -> str:
    """A file named relative to the repository (as extras.topology is) made absolute."""
    path = Path(value)
    return str(path if path.is_absolute() else REPO_ROOT / path)


@rfm.simple_test
class NicHealthTest(FabricTest):
    descr = "NIC pre-flight health on every node: port, link, MTU, rate, GID (fabric-health)"
    scenario = variable(str, value="health")
    executable = "fabric-health"
    time_limit = "5m"
    tags = {"fabric", "health", "preflight", "acceptance"}
    stage1_role = "check"  # this is stage 1: it leaves no node out of itself
    exclusive_access = False  # reads each node's NIC state and pings: it may share nodes

    def why_not_on(self, part):
        if "rdma" not in part.features and not part.extras.get("fabric_nics"):
            return "has no +rdma and declares no fabric_nics: no fabric NIC to check"
        return super().why_not_on(part)

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
        opts += self.fabric_options()
        self.executable_opts = opts
        self.place(self.nodes_checked, ppn, round_robin=True)

    def fabric_options(self) -> list[str]:
        """The fabric-NIC checks the partition declares (docs/health.md)."""
        nics = list(self.extra("fabric_nics") or [])
        if not nics:
            return []
        opts = [] if self.has_feature("rdma") else ["--no-rdma"]
        if self.extra("no_arp"):  # nodes that are network namespaces (the vcluster)
            opts.append("--no-arp")
        for nic in nics:
            opts += ["--nic", str(nic)]
        for key, flag in FABRIC_OPTIONS:
            value = self.extra(key)
            if value is None or value == "" or value == []:
                continue
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            opts += [flag, _repo_path(str(value)) if key == "inventory" else str(value)]
        topology = self.extra("topology")
        if topology and not self.extra("inventory"):  # the switch each node is on
            opts += ["--topology", self.topology_file(str(topology))]
        return opts

    def topology_file(self, topology: str) -> str:
        """extras.topology is a file relative to the repository, or the topology's text
        (written into the stage directory for fabric-health to read)."""
        if "\n" not in topology:
            return _repo_path(topology)
        self.topology_text = topology
        return "topology.txt"

    @run_before("run")
    def write_topology(self):
        text = getattr(self, "topology_text", None)
        if text:
            Path(self.stagedir, "topology.txt").write_text(text)

    @run_after("run")
    def record_verdicts(self):
        """Each node's verdict for the performance stage: pass, or its first failure; a node
        of the job that reported nothing is a failure too."""
        try:
            rep = self.result()
        except ParseError as err:
            rep, why = None, f"no fabric-health output ({err})"
        verdicts: dict[str, str] = {}
        if rep is not None:
            for r in rep.results:
                if r.ok:
                    verdicts.setdefault(r.node, "pass")
                elif verdicts.get(r.node, "pass") == "pass":  # the node's first failure
                    verdicts[r.node] = f"{r.device}/{r.port} {r.check}: {r.detail}"
            for node, reason in rep.no_device.items():
                verdicts[node] = f"no RDMA device: {reason}"
            why = "reported nothing"
        for node in job_nodes(self):
            verdicts.setdefault(node, why)
        if verdicts and self.outputdir:
            write_record(self, verdicts)

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

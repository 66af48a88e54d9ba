"""The fabric identity `vcluster up --preflight` gives the cluster, as a pure plan: what a
site's pre-flight checks (the Slingshot acceptance notes' list, docs/health.md) read.

* Switch ports: every node's link ends on a port of a switch: with ``--switches`` the leaf
  switches ``sw1..swN`` (ports ``p1..`` in the order the nodes are dealt), otherwise the one
  switch ``sw0``. The port's MAC is a Slingshot switch port's (``02:fe:00:0`` + 9 bits of
  group, 5 of switch, 6 of port), and lldpd on it advertises system name = the switch, port
  description = the port (``p1``).
* Each node has a fabric NIC ``hsn0`` beside its management one (``eth0``, Slurm's and MPI's):
  a macvlan on the same link, so its frames cross the same cable and switch port, with the
  algorithmic MAC (AMA) of its port (``02:00:00:0...``), a fabric address in the subnet after
  the cluster's (10.200.1.0/24 for 10.200.0.0/24) and a fabric name ``nodeNN-hsn0`` in the
  cluster's hosts file. A fault on it (a wrong MAC, no address) leaves Slurm's traffic alone,
  as a broken HSN NIC leaves a node's management network.
* ``etc/inventory``: the site's cabling inventory (``node nic switch port mac ip``).
* ``--health-check S``: Slurm runs ``etc/healthcheck.sh`` (fabric-health ``--drain``) every S
  seconds on every node (``HealthCheckProgram``).

The cable a node's link is on can move (``vcluster swap-cable``): the *port table* (node ->
its switch and port) is state, kept in ``preflight.json``; the home table is the plan's.
"""

from __future__ import annotations

import ipaddress
import shlex
from dataclasses import dataclass
from pathlib import Path

from fabrictest.parsers.inventory import InventoryEntry, inventory_text

from . import switches
from .plan import CTL_HOST, FIRST_NODE_HOST, Plan
from .shaping import NODE_DEVICE, PlanError

NIC = "hsn0"  # the fabric NIC: a macvlan on the node's link (NODE_DEVICE, eth0)
LINK = NODE_DEVICE
FABRIC_HOSTNAME = "{node}-{nic}"
SINGLE_SWITCH = "sw0"
GROUP = 0
#: lldpd: a frame a second, a neighbour held 10 s (a moved cable shows within seconds, and
#: two lost frames on a loaded machine do not drop a neighbour)
TX_INTERVAL_S = 1
TX_HOLD = 10
MGMT_PORT = 6817  # slurmctld: the management network's service every node needs
#: what Slurm allows a HealthCheckProgram (60 s) less a margin for its own start
HEALTH_TIMEOUT_S = 50
MAX_HEALTH_INTERVAL_S = 86400
SWITCH_PREFIX = "02:fe"
NODE_PREFIX = "02:00"


@dataclass(frozen=True)
class Port:
    switch: str  # sw1
    index: int  # 1-based within the switch

    @property
    def name(self) -> str:
        return f"p{self.index}"

    def switch_index(self) -> int:
        return int(self.switch[2:])

    def low_bits(self) -> int:
        """Slingshot's AMA low 20 bits: 9 of group, 5 of switch, 6 of port."""
        sw, port = self.switch_index(), self.index
        if not (0 <= sw < 32 and 0 < port < 64):
            raise PlanError(f"{self.switch} {self.name}: an AMA holds switches 0-31 and "
                            "ports 1-63")
        return GROUP << 11 | sw << 6 | port

    def _mac(self, prefix: str) -> str:
        low = self.low_bits()
        return f"{prefix}:00:{low >> 16 & 0xF:02x}:{low >> 8 & 0xFF:02x}:{low & 0xFF:02x}"

    @property
    def switch_mac(self) -> str:
        """The switch port's MAC (what LLDP reports as its port ID)."""
        return self._mac(SWITCH_PREFIX)

    @property
    def ama(self) -> str:
        """The AMA of a node cabled to this port."""
        return self._mac(NODE_PREFIX)


def home_ports(plan: Plan) -> dict[str, Port]:
    """node -> the port its cable is on by the plan (before any swap)."""
    groups = switches.members(plan) or {SINGLE_SWITCH: plan.node_list}
    return {n.name: Port(sw, i) for sw, nodes in groups.items()
            for i, n in enumerate(nodes, 1)}


def fabric_network(plan: Plan) -> ipaddress.IPv4Network:
    """The block of the management subnet's size right after it."""
    net = plan.network
    return ipaddress.ip_network((int(net.network_address) + net.num_addresses, net.prefixlen))


def fabric_address(plan: Plan, node: str) -> str:
    idx = plan.node(node).index
    return str(fabric_network(plan).network_address + FIRST_NODE_HOST + idx)


def fabric_name(node: str) -> str:
    return FABRIC_HOSTNAME.format(node=node, nic=NIC)


def bridge_fabric_address(plan: Plan) -> str:
    """The top bridge's address on the fabric subnet (what a moved cable's first frame
    goes to)."""
    return str(fabric_network(plan).network_address + 1)


def unused_fabric_address(plan: Plan) -> str:
    """An address of the fabric subnet that no node has (what `bad-dns` points a name at)."""
    return str(fabric_network(plan).broadcast_address - 1)


def hosts_lines(plan: Plan, bad_dns: set[str] = frozenset()) -> str:
    """The fabric names for the cluster's hosts file; a node in ``bad_dns`` gets a record
    that points nowhere (a DNS entry gone wrong)."""
    lines = [f"{unused_fabric_address(plan) if n.name in bad_dns else fabric_address(plan, n.name)}"
             f"\t{fabric_name(n.name)}" for n in plan.node_list]
    return "\n".join(lines) + "\n"


def inventory(plan: Plan) -> str:
    """The site's cabling inventory: every node's NIC on its home port, its AMA and address."""
    ports = home_ports(plan)
    return inventory_text(
        InventoryEntry(n.name, NIC, ports[n.name].switch, ports[n.name].name,
                       ports[n.name].ama, fabric_address(plan, n.name))
        for n in plan.node_list)


# ------------------------------------------------------------------------ paths and files
#: lldpd's sockets and start-up commands: lldpcli is set-uid to lldpd's own user, so they
#: live where that user can reach them, not under a state directory that may sit in a
#: directory only root may enter (pytest's, for one). One vcluster per machine: one place.
LLDP_DIR = Path("/run/fabrictest-vcluster-lldp")


def lldp_dir(plan: Plan) -> Path:
    return LLDP_DIR


def state_file(plan: Plan) -> Path:
    return plan.state_dir / "preflight.json"


def inventory_file(plan: Plan) -> Path:
    return plan.etc / "inventory"


def health_script(plan: Plan) -> Path:
    return plan.etc / "healthcheck.sh"


def node_socket(plan: Plan, node: str = "{node}") -> str:
    return str(lldp_dir(plan) / f"{node}.sock")


def port_socket(plan: Plan, node: str) -> str:
    """The control socket of the lldpd on the switch port of ``node``'s cable."""
    return str(lldp_dir(plan) / f"port-{node}.sock")


def lldpd_config(hostname: str, port_device: str | None = None,
                 port_name: str | None = None) -> str:
    """lldpcli commands lldpd runs at start (``-O``)."""
    lines = [f"configure system hostname {hostname}",
             f"configure lldp tx-interval {TX_INTERVAL_S}",
             f"configure lldp tx-hold {TX_HOLD}"]
    if port_device and port_name:
        lines.append(f"configure ports {port_device} lldp portdescription {port_name}")
    return "\n".join(lines) + "\n"


def check_options(plan: Plan) -> list[str]:
    """fabric-health's options for this cluster's pre-flight checks (one place: the health
    check script and the ReFrame system's extras say the same)."""
    # --no-arp: a node's network namespace shows no gc_thresh (the initial namespace's are
    # the machine's, not a node's)
    return ["--no-rdma", "--no-arp", "--nic", NIC, "--inventory", str(inventory_file(plan)),
            "--mac-rule", "slingshot-ama", "--fabric-hostname", FABRIC_HOSTNAME,
            "--fabric-subnet", str(fabric_network(plan)), "--lldp-socket", node_socket(plan),
            "--mgmt", f"{CTL_HOST}:{MGMT_PORT}"]


def reframe_extras(plan: Plan) -> dict:
    """The partition extras the ReFrame system `vcluster` reads (preflight.json)."""
    return {"fabric_nics": [NIC], "no_arp": True, "inventory": str(inventory_file(plan)),
            "mac_rule": "slingshot-ama", "fabric_hostname": FABRIC_HOSTNAME,
            "fabric_subnet": str(fabric_network(plan)), "lldp_socket": node_socket(plan),
            "mgmt_targets": [f"{CTL_HOST}:{MGMT_PORT}"]}


def health_script_text(plan: Plan, bin_dir: Path) -> str:
    """Slurm's HealthCheckProgram: fabric-health --drain in the node's own namespaces (slurmd
    runs it as root every HealthCheckInterval seconds; its output is kept per node)."""
    exe = bin_dir / "fabric-health"
    opts = " ".join(shlex.quote(o) for o in check_options(plan))
    log = plan.log_dir / "healthcheck-$node.log"
    return (
        "#!/bin/sh\n"
        "# Generated by `vcluster up --health-check`: Slurm's HealthCheckProgram "
        "(docs/health.md).\n"
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
        f"SLURM_CONF={shlex.quote(str(plan.slurm_conf))}\n"
        "export PATH SLURM_CONF\n"
        'node=${SLURMD_NODENAME:-$(hostname)}\n'
        f'exec timeout {HEALTH_TIMEOUT_S} {shlex.quote(str(exe))} --drain --node-name "$node" '
        f'{opts} > "{log}" 2>&1\n'
    )


def slurm_conf_lines(plan: Plan) -> list[str]:
    if not plan.health_check:
        return []
    return [f"HealthCheckProgram={health_script(plan)}",
            f"HealthCheckInterval={plan.health_check}",
            "HealthCheckNodeState=ANY"]


def check_health_interval(seconds: int) -> None:
    if not 0 < seconds <= MAX_HEALTH_INTERVAL_S:
        raise PlanError(f"--health-check {seconds}: seconds between runs, 1 to "
                        f"{MAX_HEALTH_INTERVAL_S}")


def parse_mac(text: str) -> str:
    """A MAC `set-mac` may give a NIC: 6 octets, unicast, not all zeros."""
    raw = str(text).strip().lower().replace("-", ":")
    octets = raw.split(":")
    if len(octets) != 6 or not all(len(o) == 2 and all(c in "0123456789abcdef" for c in o)
                                   for o in octets):
        raise PlanError(f"bad MAC {text!r}: six hexadecimal octets, e.g. 02:00:00:00:00:41")
    if int(octets[0], 16) & 1:
        raise PlanError(f"MAC {text!r} is a multicast address: a NIC's must be unicast")
    if raw == "00:00:00:00:00:00":
        raise PlanError(f"MAC {text!r} is all zeros")
    return raw


__all__ = ["NIC", "Port", "check_health_interval", "check_options", "fabric_address",
           "fabric_name", "fabric_network", "health_script_text", "home_ports", "hosts_lines",
           "inventory", "lldpd_config", "parse_mac", "reframe_extras", "slurm_conf_lines"]

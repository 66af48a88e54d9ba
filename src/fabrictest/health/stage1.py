"""``fabric-health``'s fabric-NIC checks (``--nic``): the rest of the Slingshot acceptance
notes' pre-flight list, joined from :mod:`.stage1_gather` (what the node says) and
:mod:`.stage1_checks` (what it must say). Their options, their refusal of values that make no
sense (before anything is read), and the checks in a fixed order per NIC::

    mac (with --mac-rule), ip, name_forward, name_reverse, lldp (with --inventory or
    --topology), loopback (with --loopback); then mgmt:<target> per --mgmt target.

docs/health.md says how a site declares each of them.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import string
from dataclasses import dataclass

from fabrictest.parsers import ParseError
from fabrictest.parsers.health import CheckResult
from fabrictest.parsers.ibv_devinfo import PortInfo
from fabrictest.parsers.inventory import Inventory, parse_inventory
from fabrictest.topology_source import TopologyError, read_topology

from . import stage1_checks as checks
from . import stage1_gather as gather

DEFAULT_HOSTNAME = "{node}"
MAX_MGMT_TIMEOUT_S = 60.0
MAX_PORT_RATE_GBPS = 10_000.0
TEMPLATE_FIELDS = {"node", "nic"}


def add_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("fabric NIC checks (docs/health.md)")
    g.add_argument("--nic", action="append", default=[], metavar="NIC",
                   help="a fabric NIC to check (repeatable, or comma-separated): its MAC, "
                        "address, name both ways, LLDP neighbour, loopback rate")
    g.add_argument("--no-rdma", action="store_true",
                   help="the fabric has no RDMA ports (TCP over Ethernet): check the --nic "
                        "netdevs only")
    g.add_argument("--mac-rule", choices=checks.MAC_RULES,
                   help="slingshot-ama: the AMA of the switch port LLDP reports; inventory: "
                        "the MAC the inventory lists")
    g.add_argument("--inventory", metavar="FILE",
                   help="cabling inventory: lines 'node nic switch port [mac [ip]]'")
    g.add_argument("--topology", metavar="FILE|slurm",
                   help="the switch each node is cabled to (scontrol show topology, "
                        "topology.conf or our SWITCH: NODES file); 'slurm' asks scontrol")
    g.add_argument("--fabric-hostname", default=DEFAULT_HOSTNAME, metavar="TEMPLATE",
                   help="the NIC's name, resolved both ways ({node}, {nic}; default {node})")
    g.add_argument("--fabric-subnet", metavar="CIDR",
                   help="the fabric's network: the NIC's address must be in it")
    g.add_argument("--lldp-socket", metavar="PATH",
                   help="lldpd's control socket (lldpctl -u; {node} allowed)")
    g.add_argument("--mgmt", default="", metavar="TARGETS",
                   help="management targets, comma-separated: host:port (a TCP connect) or "
                        "host (a ping); one 'mgmt:<target>' check each")
    g.add_argument("--mgmt-timeout", type=float, default=3.0, metavar="S",
                   help="seconds a management probe may take (default 3)")
    g.add_argument("--loopback", type=float, default=None, metavar="FRACTION",
                   help="a same-node transfer through each NIC must reach FRACTION of its "
                        "port's rate (e.g. 0.9): ib_write_bw on RDMA NICs, txrx otherwise")
    g.add_argument("--port-rate", type=float, default=None, metavar="GBPS",
                   help="the port rate the loopback is held to (default: the RDMA port's "
                        "rate, else the netdev's link speed)")


def nics(args: argparse.Namespace) -> list[str]:
    return [n.strip() for item in args.nic for n in item.split(",") if n.strip()]


def _template_problem(option: str, value: str, allowed: set[str]) -> str | None:
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(value) if f is not None}
    except ValueError as err:
        return f"{option} {value!r}: {err}"
    bad = fields - allowed
    if bad:
        return (f"{option} {value!r}: unknown field {{{sorted(bad)[0]}}} "
                f"(allowed: {', '.join('{' + a + '}' for a in sorted(allowed))})")
    return None


def usage_problem(args: argparse.Namespace) -> str | None:
    """Why a fabric-NIC option makes no sense, or None (before anything is read)."""
    names = nics(args)
    if any(not part.strip() for item in args.nic for part in item.split(",")) or any(
            "/" in n or n in (".", "..") for n in names):
        return "--nic needs a network interface name (e.g. hsn0)"
    if args.no_rdma and not names:
        return "--no-rdma checks the --nic netdevs: name at least one --nic"
    for option, value in (("--mac-rule", args.mac_rule), ("--inventory", args.inventory),
                          ("--topology", args.topology), ("--loopback", args.loopback)):
        if value is not None and not names:
            return f"{option} checks fabric NICs: name them with --nic"
    if args.mac_rule == "inventory" and not args.inventory:
        return "--mac-rule inventory needs --inventory FILE"
    if not args.fabric_hostname.strip():
        return "--fabric-hostname is empty"
    problem = _template_problem("--fabric-hostname", args.fabric_hostname, TEMPLATE_FIELDS)
    if problem:
        return problem
    if args.lldp_socket is not None:
        if not args.lldp_socket.strip():
            return "--lldp-socket is empty"
        problem = _template_problem("--lldp-socket", args.lldp_socket, {"node"})
        if problem:
            return problem
    if args.fabric_subnet is not None:
        try:
            ipaddress.ip_network(args.fabric_subnet, strict=False)
        except ValueError:
            return f"--fabric-subnet {args.fabric_subnet!r}: a network, e.g. 10.253.0.0/16"
    if args.mgmt.strip() and "" in [t.strip() for t in args.mgmt.split(",")]:
        return f"--mgmt {args.mgmt!r}: an empty target (host:port or host, comma-separated)"
    for target in mgmt_targets(args):
        problem = target_problem(target)
        if problem:
            return f"--mgmt {target!r}: {problem}"
    t = args.mgmt_timeout
    if not (math.isfinite(t) and 0 < t <= MAX_MGMT_TIMEOUT_S):
        return f"--mgmt-timeout {t:g}: seconds in (0, {MAX_MGMT_TIMEOUT_S:g}]"
    f = args.loopback
    if f is not None and not (math.isfinite(f) and 0 < f <= 1):
        return f"--loopback {f:g}: a fraction of the port's rate in (0, 1]"
    r = args.port_rate
    if r is not None and not (math.isfinite(r) and 0 < r <= MAX_PORT_RATE_GBPS):
        return f"--port-rate {r:g}: Gb/s in (0, {MAX_PORT_RATE_GBPS:g}]"
    if r is not None and f is None:
        return "--port-rate is what --loopback is held to: give --loopback FRACTION"
    return None


def mgmt_targets(args: argparse.Namespace) -> list[str]:
    return [t.strip() for t in args.mgmt.split(",") if t.strip()]


def target_problem(target: str) -> str | None:
    try:
        host, port = gather.split_target(target)
    except ValueError:
        return "the port is not a number (host:port)"
    if not host or any(c.isspace() for c in host):
        return "no host"
    if port is not None and not 1 <= port <= 65535:
        return f"port {port} is not 1 to 65535"
    return None


@dataclass
class Declared:
    """What the site declared, read once before the checks (a file that cannot be read or
    parsed is refused like a bad option)."""

    inventory: Inventory | None = None
    switch_of: dict[str, str] | None = None


def read_declared(args: argparse.Namespace) -> tuple[Declared, str | None]:
    declared = Declared()
    if args.inventory:
        try:
            with open(args.inventory, encoding="utf-8") as fh:
                declared.inventory = parse_inventory(fh.read())
        except OSError as err:
            return declared, f"--inventory {args.inventory}: {err.strerror or err}"
        except (UnicodeDecodeError, ParseError) as err:
            return declared, f"--inventory {args.inventory}: {err}"
    if args.topology:
        try:
            declared.switch_of = read_topology(args.topology).switch_of()
        except TopologyError as err:
            return declared, str(err)
    return declared, None


def run(args: argparse.Namespace, node: str, declared: Declared,
        ports: list[PortInfo] | None = None) -> list[CheckResult]:
    """Every fabric-NIC check for this node, then the management targets."""
    results: list[CheckResult] = []
    by_netdev = {p.netdev: p for p in ports or [] if p.netdev}
    for nic in nics(args):
        results += _nic_checks(args, node, nic, declared, by_netdev.get(nic))
    for target in mgmt_targets(args):
        ok, detail = gather.probe(target, args.mgmt_timeout)
        results.append(checks.check_mgmt(node, target, ok, detail))
    return results


def _nic_checks(args, node: str, nic: str, declared: Declared,
                rdma_port: PortInfo | None) -> list[CheckResult]:
    out: list[CheckResult] = []
    iface, problem = gather.read_interface(nic)
    entry = declared.inventory.get(node, nic) if declared.inventory else None
    expected = checks.expected_neighbor(node, nic, declared.inventory, declared.switch_of)
    needs_lldp = args.mac_rule == "slingshot-ama" or args.inventory or args.topology
    neighbors, lldp_problem = None, None
    if needs_lldp:
        sock = args.lldp_socket.format(node=node) if args.lldp_socket else None
        neighbors, _source, lldp_problem = gather.read_lldp(nic, sock)
    if args.mac_rule:
        out.append(checks.check_mac(
            node, nic, iface.mac if iface else None, args.mac_rule, neighbors,
            lldp_problem or (problem if iface is None else None),
            entry.mac if entry else None, f"line {entry.line}" if entry else "no line"))
    ip_check, address = checks.check_ip(node, nic, iface, problem,
                                        entry.ip if entry else None, args.fabric_subnet)
    out.append(ip_check)
    hostname = args.fabric_hostname.format(node=node, nic=nic)
    fwd, fwd_problem = gather.resolve_name(hostname) if address else (None, None)
    rev, rev_problem = gather.resolve_address(address) if address else (None, None)
    own = tuple(a.address for a in iface.addresses) if iface else ()
    out += checks.check_names(node, nic, hostname, address, fwd, fwd_problem, rev, rev_problem,
                              own=own)
    if args.inventory or args.topology:
        out.append(checks.check_lldp(node, nic, expected, neighbors, lldp_problem))
    if args.loopback is not None:
        out.append(_loopback(args, node, nic, rdma_port))
    return out


def _loopback(args, node: str, nic: str, port: PortInfo | None) -> CheckResult:
    through_nic = port is not None and not args.no_rdma
    if through_nic:
        rate, rate_problem = port.rate_gbps, None if port.rate_gbps else "the port reports none"
        gid = port.rocev2_gids()[0].index if port.rocev2_gids() else None
        got, problem = gather.loopback_rdma(port.device or "?", port.port, gid)
        method = f"ib_write_bw loopback on {port.device}/{port.port}"
    else:
        rate, rate_problem = gather.port_rate_gbps(nic)
        got, problem = gather.loopback_txrx(nic)
        method = f"txrx over TCP on {nic}: the kernel's loopback, not the wire"
    if args.port_rate is not None:
        rate, rate_problem = args.port_rate, None
    return checks.check_loopback(node, nic, method, got, rate, args.loopback,
                                 problem or rate_problem, through_nic=through_nic)


__all__ = ["Declared", "add_options", "mgmt_targets", "nics", "read_declared", "run",
           "usage_problem"]

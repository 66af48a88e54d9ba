"""The routed fabric of fabric.py made real: a routing namespace per switch, veth links between
them and to every node's `hsn0`, host routes, and `tbf` on a link's two ends.

Every switch namespace forwards (`ip_forward`), answers ARP for the nodes it routes to
(`proxy_arp`) and does not check the reverse path (`rp_filter` 0: destination-mod-k sends the
two directions of a pair over different spines). A node's fabric link is shaped like its
bridge link (the plan's default rate, both ends); links between switches are unshaped until
`vcluster degrade-link` shapes them.
"""

from __future__ import annotations

from .fabric import NODE_FABRIC_DEVICE, SWITCH_NETNS_PREFIX, Fabric, Link
from .network import link_exists, netns_list, qdisc_rate
from .plan import Node, Plan
from .shaping import BOTH, directions, parse_rate, tbf_args
from .shell import run

SYSCTLS = ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
           "net.ipv4.conf.default.rp_filter=0", "net.ipv4.conf.all.proxy_arp=1",
           "net.ipv4.conf.default.proxy_arp=1", "net.ipv4.conf.all.send_redirects=0",
           "net.ipv4.conf.default.send_redirects=0")


def _batch(netns: str, commands: list[str]) -> None:
    """Many `ip` commands in one namespace, in one process."""
    if commands:
        run(["ip", "-n", netns, "-batch", "-"], input="\n".join(commands) + "\n", timeout=60)


def _switch_up(f: Fabric, switch: str) -> None:
    ns = f.netns(switch)
    if ns not in netns_list():
        run(["ip", "netns", "add", ns])
    run(["nsenter", f"--net=/run/netns/{ns}", "sysctl", "-q", "-w", *SYSCTLS])
    _batch(ns, ["link set lo up", f"addr replace {f.switch_address(switch)}/32 dev lo"])


def _link_up(link: Link) -> None:
    (na, da), (nb, db) = link.ends()
    if not link_exists(da, na):
        if link_exists(db, nb):
            run(["ip", "-n", nb, "link", "del", db])
        run(["ip", "link", "add", da, "netns", na, "type", "veth", "peer", "name", db,
             "netns", nb])
    run(["ip", "-n", na, "link", "set", da, "up"])
    run(["ip", "-n", nb, "link", "set", db, "up"])


def up(plan: Plan) -> None:
    """Switch namespaces, every link, the nodes' fabric addresses and every switch's routes;
    the nodes' fabric links shaped to the plan's default rate. The node namespaces must
    exist (network.net_up)."""
    f = Fabric(plan)
    for s in f.switches:
        _switch_up(f, s)
    devices: dict[str, list[str]] = {}
    for link in f.links():
        _link_up(link)
        for netns, dev in link.ends():
            devices.setdefault(netns, []).append(dev)
    for s in f.switches:  # proxy ARP answers after 0.8 s by default: every hop of a first
        ns = f.netns(s)  # packet would wait (per device: a namespace has no neigh/default)
        run(["nsenter", f"--net=/run/netns/{ns}", "sysctl", "-q", "-w",
             *(f"net.ipv4.neigh.{d}.proxy_delay=0" for d in devices.get(ns, []))])
    prefix = plan.fabric_network.prefixlen
    for n in plan.node_list:
        run(["ip", "-n", n.netns, "addr", "replace", f"{f.node_address(n)}/{prefix}", "dev",
             NODE_FABRIC_DEVICE])
    for s in f.switches:
        _batch(f.netns(s), [f"route replace {dst} dev {dev}" for dst, dev in f.routes(s)])
    default = parse_rate(plan.default_rate) if plan.default_rate else None
    for n in plan.node_list:
        shape_node(plan, n, default)


def down(plan: Plan) -> list[str]:
    """Remove every switch namespace (with it, its links and their ends in the nodes);
    also those of a bigger fabric left behind. Returns what was removed."""
    done = []
    for ns in netns_list():
        if ns.startswith(SWITCH_NETNS_PREFIX):
            run(["ip", "netns", "del", ns], check=False)
            done.append(ns)
    return done


def shape_ends(link: Link, bits: int | None) -> None:
    """tbf at `bits` on both ends of a link (None: unshaped)."""
    for netns, dev in link.ends():
        if bits is None:
            run(["tc", "-n", netns, "qdisc", "del", "dev", dev, "root"], check=False)
        else:
            run(["tc", "-n", netns, "qdisc", "replace", "dev", dev, "root"] + tbf_args(bits))


def link_rates(link: Link) -> dict[str, str | None]:
    """The tbf rate leaving each end: {'A->B': '50Mbit', 'B->A': None}."""
    (na, da), (nb, db) = link.ends()
    return {f"{link.a}->{link.b}": qdisc_rate(da, na), f"{link.b}->{link.a}": qdisc_rate(db, nb)}


def shape_node(plan: Plan, node: Node, bits: int | None, direction: str = BOTH) -> None:
    """A node's fabric link: tx is what leaves its hsn0, rx what leaves the switch's port."""
    link = Fabric(plan).node_link(node)
    for one in directions(direction):
        netns, dev = link.ends()[0 if one == "tx" else 1]
        if bits is None:
            run(["tc", "-n", netns, "qdisc", "del", "dev", dev, "root"], check=False)
        else:
            run(["tc", "-n", netns, "qdisc", "replace", "dev", dev, "root"] + tbf_args(bits))


def node_rates(plan: Plan, node: Node) -> dict[str, str | None]:
    (nn, nd), (sn, sd) = Fabric(plan).node_link(node).ends()
    return {"tx": qdisc_rate(nd, nn), "rx": qdisc_rate(sd, sn)}


def set_node_link(plan: Plan, node: Node, is_up: bool) -> None:
    """The switch's end of a node's fabric link down or up (the node loses its carrier). The
    kernel drops the leaf's routes through a port it sets down: up again, they are put back."""
    f = Fabric(plan)
    link = f.node_link(node)
    _n, (sn, sd) = link.ends()
    run(["ip", "-n", sn, "link", "set", sd, "up" if is_up else "down"])
    if is_up:
        _batch(sn, [f"route replace {dst} dev {dev}" for dst, dev in f.routes(link.b)
                    if dev == sd])


__all__ = ["down", "link_rates", "node_rates", "set_node_link", "shape_ends", "shape_node",
           "up"]

"""The cluster's network: a bridge, one network namespace per node (and the controller), veth
links between them, and `tbf` shaping on either end of a node's link (see `shaping.py`)."""

from __future__ import annotations

import contextlib
import json
import os

from . import switches
from .plan import CTL_NETNS, NODE_NETNS_PREFIX, VETH_PREFIX, Node, Plan
from .shaping import BOTH, NODE_DEVICE, directions, parse_rate, shaped_end, tbf_args
from .shell import is_mountpoint, run

RUN_NETNS = "/run/netns"


def netns_list() -> list[str]:
    proc = run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def our_netns() -> list[str]:
    """Namespaces named like a vcluster's, node namespaces first, the controller's last."""
    ours = [ns for ns in netns_list()
            if ns == CTL_NETNS or ns.startswith(NODE_NETNS_PREFIX + "node")]
    return sorted(ours, key=lambda ns: ns == CTL_NETNS)


def netns_pids(ns: str) -> list[int]:
    proc = run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in proc.stdout.split() if x.isdigit()]


def _ip(netns: str | None) -> list[str]:
    return ["ip"] + (["-n", netns] if netns else [])


def _tc(netns: str | None) -> list[str]:
    return ["tc"] + (["-n", netns] if netns else [])


def link_exists(name: str, netns: str | None = None) -> bool:
    return run(_ip(netns) + ["link", "show", "dev", name], check=False).returncode == 0


def link_is_up(name: str) -> bool:
    proc = run(["ip", "-j", "link", "show", "dev", name], check=False)
    if proc.returncode != 0:
        return False
    try:
        return "UP" in json.loads(proc.stdout)[0].get("flags", [])
    except (ValueError, IndexError):
        return False


def qdisc_rate(dev: str, netns: str | None = None) -> str | None:
    """The tbf rate on `dev` as tc prints it ('200Mbit'), or None when unshaped."""
    out = run(_tc(netns) + ["qdisc", "show", "dev", dev, "root"], check=False).stdout.split()
    if "tbf" in out and "rate" in out:
        return out[out.index("rate") + 1]
    return None


def shape(node: Node, bits: int | None, direction: str = BOTH) -> None:
    """tbf at `bits`/s on the end(s) of `node`'s link carrying `direction` (None: unshaped)."""
    for one in directions(direction):
        netns, dev = shaped_end(one, node.netns, node.veth)
        if bits is None:
            run(_tc(netns) + ["qdisc", "del", "dev", dev, "root"], check=False)
        else:
            run(_tc(netns) + ["qdisc", "replace", "dev", dev, "root"] + tbf_args(bits))


def rates(node: Node) -> dict[str, str | None]:
    """{'tx': '50Mbit', 'rx': '200Mbit'}: the tbf rate of each direction (None: unshaped)."""
    out = {}
    for one in directions(BOTH):
        netns, dev = shaped_end(one, node.netns, node.veth)
        out[one] = qdisc_rate(dev, netns)
    return out


def set_link(node: Node, up: bool) -> None:
    run(["ip", "link", "set", node.veth, "up" if up else "down"])


def net_up(plan: Plan) -> None:
    """Bridge, namespaces and links, every node's link shaped to the plan's default rate."""
    p = plan
    if not link_exists(p.bridge):
        run(["ip", "link", "add", p.bridge, "type", "bridge"])
    run(["ip", "addr", "replace", f"{p.bridge_address}/{p.prefixlen}", "dev", p.bridge])
    run(["ip", "link", "set", p.bridge, "up"])
    leaf_of = {n.name: s for s, ns in switches.members(p).items() for n in ns}
    for s in switches.names(p):
        switch_up(p, s)
    endpoints: list[tuple[str, str, str, Node | None]] = [
        (CTL_NETNS, p.ctl_veth, p.ctl_address, None)]
    endpoints += [(n.netns, n.veth, n.address, n) for n in p.node_list]
    existing = set(netns_list())
    for ns, veth, addr, node in endpoints:
        if ns not in existing:
            run(["ip", "netns", "add", ns])
        run(["ip", "-n", ns, "link", "set", "lo", "up"])
        if not link_exists(veth):
            if link_exists(NODE_DEVICE, ns):
                run(["ip", "-n", ns, "link", "del", NODE_DEVICE])
            run(["ip", "link", "add", veth, "type", "veth", "peer", "name", NODE_DEVICE,
                 "netns", ns])
        master = switches.bridge(p, leaf_of.get(node.name)) if node else p.bridge
        run(["ip", "link", "set", veth, "master", master, "up"])
        run(["ip", "-n", ns, "addr", "replace", f"{addr}/{p.prefixlen}", "dev", NODE_DEVICE])
        run(["ip", "-n", ns, "link", "set", NODE_DEVICE, "up"])
        if node is not None and p.default_rate:
            shape(node, parse_rate(p.default_rate))


def net_down(plan: Plan, namespaces: list[str], *, unmount_run_netns: bool) -> list[str]:
    """Remove `namespaces`, every vcluster link and the bridge; return what was removed.

    `unmount_run_netns`: /run/netns was not a mount point before `up` (ip made it one), so
    unmount it again once empty.
    """
    done: list[str] = []
    for ns in namespaces:
        run(["ip", "netns", "del", ns], check=False)
        done.append(ns)
    for dev in [plan.ctl_veth] + [n.veth for n in plan.node_list]:
        if link_exists(dev):
            run(["ip", "link", "del", dev], check=False)
    # Links of a bigger cluster left in the same names.
    proc = run(["ip", "-o", "link", "show"], check=False)
    for line in proc.stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if name.startswith(VETH_PREFIX):
            run(["ip", "link", "del", name], check=False)
    for line in run(["ip", "-o", "link", "show", "type", "bridge"], check=False).stdout \
            .splitlines():  # leaf switches, also of a cluster with more of them
        name = line.split(":")[1].strip() if ":" in line else ""
        if name.startswith(switches.LEAF_BRIDGE_PREFIX):
            run(["ip", "link", "del", name], check=False)
            done.append(name)
    if link_exists(plan.bridge):
        run(["ip", "link", "del", plan.bridge], check=False)
        done.append(plan.bridge)
    if unmount_run_netns and is_mountpoint(RUN_NETNS) and not os.listdir(RUN_NETNS):
        run(["umount", RUN_NETNS], check=False)
        with contextlib.suppress(OSError):
            os.rmdir(RUN_NETNS)
    return done


def switch_up(plan: Plan, switch: str) -> None:
    """A leaf switch's bridge and its uplink to the top bridge (unshaped until degraded)."""
    br = switches.bridge(plan, switch)
    if not link_exists(br):
        run(["ip", "link", "add", br, "type", "bridge"])
    run(["ip", "link", "set", br, "up"])
    leaf_end, top_end = switches.uplink(switch)
    if not link_exists(leaf_end):
        if link_exists(top_end):
            run(["ip", "link", "del", top_end])
        run(["ip", "link", "add", leaf_end, "type", "veth", "peer", "name", top_end])
    run(["ip", "link", "set", leaf_end, "master", br, "up"])
    run(["ip", "link", "set", top_end, "master", plan.bridge, "up"])


def shape_uplink(switch: str, bits: int | None) -> None:
    """tbf on both ends of a switch's uplink (None: unshaped): up on the leaf end, down on
    the top end."""
    for dev in switches.uplink(switch):
        if bits is None:
            run(["tc", "qdisc", "del", "dev", dev, "root"], check=False)
        else:
            run(["tc", "qdisc", "replace", "dev", dev, "root"] + tbf_args(bits))


def uplink_rates(switch: str) -> dict[str, str | None]:
    leaf_end, top_end = switches.uplink(switch)
    return {"up": qdisc_rate(leaf_end), "down": qdisc_rate(top_end)}

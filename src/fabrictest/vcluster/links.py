"""`vcluster degrade-link A B RATE`: any link of the cluster, by its two ends.

* one bridge per switch (`up --switches`): a node's link to its switch (`degrade` of the node,
  both ways) or a switch's uplink to the top (`degrade-uplink`);
* a routed fabric (`up --fat-tree`, `--dragonfly`): a node's fabric link, a leaf-spine link, a
  local or a global link: `tbf` at RATE on both ends (fabric_net.py).

`none` leaves a switch's link unshaped again and a node's at the cluster's default rate.
"""

from __future__ import annotations

from . import fabric_net, switches
from .cluster import Cluster
from .fabric import Fabric
from .shaping import PlanError, format_rate, parse_rate


def _node(cluster: Cluster, node: str, rate: str, bits: int | None) -> str:
    """A node's link: `degrade` both ways, or (`none`) back to the cluster's default."""
    if bits is None:
        return cluster.restore(node)
    return cluster.degrade(node, rate)


def degrade_link(cluster: Cluster, a: str, b: str, rate: str) -> str:
    """Shape any link both ways to `rate`: a node's (to its switch), a leaf's uplink
    (`--switches`), a fat tree's leaf-spine link, a dragonfly's local or global link
    (`none`: unshaped again; a node's link: back to the default rate)."""
    p = cluster.plan
    bits = None if str(rate).lower() == "none" else parse_rate(rate)
    if not p.fabric:  # one bridge per switch: a node's link or a switch's uplink
        pair = {a, b}
        node = next((x for x in pair if x.startswith("node")), None)
        if node is not None and (pair - {node}) == {switches.switch_of(p, node)}:
            return _node(cluster, node, rate, bits)
        sw = next(iter(pair - {switches.TOP}), "")
        if switches.TOP in pair and len(pair) == 2:
            return cluster.degrade_uplink(sw, rate)
        raise PlanError(f"no link between {a} and {b} (links: nodeNN<->its switch, "
                        f"swK<->{switches.TOP}; switches: "
                        f"{', '.join(switches.names(p)) or 'none'})")
    f = Fabric(p)
    link = f.link(a, b)
    if link.kind == "edge":
        return _node(cluster, link.a, rate, bits)
    cluster._require_up()  # noqa: SLF001 - the cluster's own checks and record
    fabric_net.shape_ends(link, bits)
    links = cluster._links()  # noqa: SLF001
    mine = links.setdefault("fabric_links", {})
    if bits is None:
        mine.pop(link.name, None)
    else:
        mine[link.name] = format_rate(bits)
    cluster._save_links(links)  # noqa: SLF001
    what = "unshaped" if bits is None else f"shaped to {format_rate(bits)} both ways"
    return f"{link.kind} link {link.name}: {what}"


__all__ = ["degrade_link"]

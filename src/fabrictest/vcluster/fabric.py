"""A routed fabric for the vcluster, as a plan (pure): `vcluster up --fat-tree LEAVESxSPINES`
or `--dragonfly GROUPSxSWITCHES`.

Every switch is a network namespace that routes (`vc-sw-leaf1`, `vc-sw-g1s2`); every node gets
a second link, `hsn0` (the high-speed network, on the fabric's own subnet, 10.201.0.0/24 by
default) to its leaf switch's port `p-nodeNN`, beside its `eth0` on the bridge, which keeps
Slurm's own traffic (slurmctld, srun, munge) off the fabric. MPI goes over the fabric
(`OMPI_MCA_btl_tcp_if_include` is the fabric's subnet). Switches are joined by veth links
named after the switch at the other end (`l-spine1` in leaf1, `l-leaf1` in spine1):

* fat tree: every leaf to every spine. Routing is InfiniBand's destination-mod-k, as OpenSM's
  ftree routing does it with LIDs in node order: a leaf sends traffic for node number i
  (node01 is 0) up to spine number i mod SPINES, so traffic to different nodes spreads over
  the spines and which link a run takes can be told from the topology;
* dragonfly (the Slingshot acceptance notes' example: 2 groups of 2 switches): every two
  switches of a group joined by a local link, switch k of every group joined to switch k of
  every other group by a global link (SWITCHES global links per group pair). Minimal routing,
  destination-mod-k over a group pair's global links: traffic for node i goes over the pair's
  global link number i mod SWITCHES, reached by a local link when it starts on another switch,
  and a local link at the far end to the node's switch.

Host routes (/32) with proxy ARP on every switch port: no addresses on the links between
switches. `topology_conf_text` is Slurm's view (a dragonfly's groups as switches, slurm.conf
says `TopologyParam=dragonfly`), `own_topology_text` ours, with the routing rule and the
global wiring, so that fabric-sweep and fabric-report can name a single global link.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..parsers.hostlists import compress
from .fabric_spec import DRAGONFLY, FAT_TREE, parse_fabric
from .plan import FIRST_NODE_HOST, FIRST_SWITCH_HOST, NODE_NETNS_PREFIX, Node, Plan
from .shaping import PlanError

SWITCH_NETNS_PREFIX = f"{NODE_NETNS_PREFIX}sw-"  # vc-sw-leaf1
NODE_FABRIC_DEVICE = "hsn0"  # the node's end of its fabric link
PORT_PREFIX = "p-"  # a switch's port to a node: p-node01
LINK_PREFIX = "l-"  # a switch's end of a link to another switch: l-spine1
TOP = "top"  # Slurm's switch above a dragonfly's groups


@dataclass(frozen=True)
class Link:
    """One link: its two ends (node or switch names, the lower or the node first), its kind,
    and the namespace and device of each end."""

    a: str
    b: str
    kind: str  # edge (node-switch) | leaf-spine | local | global
    a_netns: str
    a_dev: str
    b_netns: str
    b_dev: str

    @property
    def name(self) -> str:
        return f"{self.a}<->{self.b}"

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.a_netns, self.a_dev), (self.b_netns, self.b_dev)


class Fabric:
    """The switches, links and routes of `plan`'s routed fabric."""

    def __init__(self, plan: Plan):
        shape = parse_fabric(plan.fabric)
        if shape is None:
            raise PlanError("this cluster has no routed fabric (vcluster up --fat-tree LxS "
                            "or --dragonfly GxS)")
        self.plan = plan
        self.kind, self.a, self.b = shape
        if self.kind == FAT_TREE:
            self.leaves = [f"leaf{k}" for k in range(1, self.a + 1)]
            self.spines = [f"spine{k}" for k in range(1, self.b + 1)]
            self.groups: dict[str, list[str]] = {}
        else:
            self.groups = {f"g{g}": [f"g{g}s{s}" for s in range(1, self.b + 1)]
                           for g in range(1, self.a + 1)}
            self.leaves = [s for sws in self.groups.values() for s in sws]
            self.spines = []
        self.switches = self.leaves + self.spines
        self.members = self._deal(plan.node_list)
        self.leaf_of = {n.name: s for s, ns in self.members.items() for n in ns}

    def _deal(self, nodes: list[Node]) -> dict[str, list[Node]]:
        """Nodes dealt to the leaves in order, as even as the count allows."""
        per, extra = divmod(len(nodes), len(self.leaves))
        out, i = {}, 0
        for k, s in enumerate(self.leaves):
            take = per + (1 if k < extra else 0)
            out[s] = nodes[i:i + take]
            i += take
        return out

    # --- names and addresses ----------------------------------------------------------
    @staticmethod
    def netns(switch: str) -> str:
        return f"{SWITCH_NETNS_PREFIX}{switch}"

    def switch_address(self, switch: str) -> str:
        return self.plan.fabric_address(FIRST_SWITCH_HOST + 1 + self.switches.index(switch))

    def node_address(self, node: Node) -> str:
        return self.plan.fabric_address(FIRST_NODE_HOST + node.index)

    def group_of(self, switch: str) -> str | None:
        return next((g for g, sws in self.groups.items() if switch in sws), None)

    # --- links --------------------------------------------------------------------------
    def _between(self, x: str, y: str, kind: str) -> Link:
        return Link(x, y, kind, self.netns(x), f"{LINK_PREFIX}{y}", self.netns(y),
                    f"{LINK_PREFIX}{x}")

    def node_link(self, node: Node) -> Link:
        leaf = self.leaf_of[node.name]
        return Link(node.name, leaf, "edge", node.netns, NODE_FABRIC_DEVICE, self.netns(leaf),
                    f"{PORT_PREFIX}{node.name}")

    def switch_links(self) -> list[Link]:
        if self.kind == FAT_TREE:
            return [self._between(leaf, sp, "leaf-spine")
                    for leaf in self.leaves for sp in self.spines]
        out = []
        for sws in self.groups.values():  # local: every two switches of a group
            out += [self._between(x, y, "local") for i, x in enumerate(sws) for y in sws[i + 1:]]
        names = list(self.groups)
        for gi, g in enumerate(names):  # global: switch k of g to switch k of every later h
            for h in names[gi + 1:]:
                out += [self._between(x, y, "global")
                        for x, y in zip(self.groups[g], self.groups[h], strict=True)]
        return out

    def links(self) -> list[Link]:
        return [self.node_link(n) for n in self.plan.node_list] + self.switch_links()

    def link(self, a: str, b: str) -> Link:
        """The link between a and b (either order); PlanError naming the ones there are."""
        for link in self.links():
            if {link.a, link.b} == {a, b}:
                return link
        raise PlanError(f"no link between {a} and {b} in this {self.kind} (links: "
                        f"node-leaf, {'leaf-spine' if self.kind == FAT_TREE else 'local, global'}"
                        f"; switches: {', '.join(self.switches)})")

    # --- routes -------------------------------------------------------------------------
    def _global_links(self, g: str, h: str) -> list[tuple[str, str]]:
        """(end in g, end in h) of the group pair's global links, in name order."""
        pairs = [(x, y) if self.group_of(x) == g else (y, x)
                 for link in self.switch_links() if link.kind == "global"
                 for x, y in [(link.a, link.b)] if {self.group_of(x), self.group_of(y)} == {g, h}]
        return sorted(pairs)

    def next_hop(self, switch: str, node: Node) -> str:
        """Where `switch` sends traffic for `node`: its port (`p-nodeNN`) or the link to the
        next switch (`l-NAME`)."""
        dest = self.leaf_of[node.name]
        i = node.index - 1  # the node's position in name order
        if switch == dest:
            return f"{PORT_PREFIX}{node.name}"
        if self.kind == FAT_TREE:
            if switch in self.spines:
                return f"{LINK_PREFIX}{dest}"
            return f"{LINK_PREFIX}{self.spines[i % len(self.spines)]}"
        g, h = self.group_of(switch), self.group_of(dest)
        if g == h:
            return f"{LINK_PREFIX}{dest}"
        x, y = self._global_links(g, h)[i % self.b]
        return f"{LINK_PREFIX}{y if switch == x else x}"

    def routes(self, switch: str) -> list[tuple[str, str]]:
        """(node's fabric address/32, device) of every node, for `switch`'s routing table."""
        return [(f"{self.node_address(n)}/32", self.next_hop(switch, n))
                for n in self.plan.node_list]

    def switches_on(self, src: Node, dst: Node) -> list[str]:
        """The switches a packet from src to dst goes through, in order (the routing tables)."""
        out = [self.leaf_of[src.name]]
        for _ in range(len(self.switches) + 1):
            hop = self.next_hop(out[-1], dst)
            if hop.startswith(PORT_PREFIX):
                return out
            out.append(hop[len(LINK_PREFIX):])
        raise PlanError(f"routing loop from {src.name} to {dst.name}")

    def path(self, src: Node, dst: Node) -> list[str]:
        """The links (their names) a packet from src to dst crosses, by the routing tables."""
        sws = self.switches_on(src, dst)
        return ([self.node_link(src).name]
                + [self.link(x, y).name for x, y in zip(sws, sws[1:], strict=False)]
                + [self.node_link(dst).name])

    # --- what Slurm and the tools read --------------------------------------------------
    def topology_conf_text(self) -> str:
        """Slurm's topology.conf (topology/tree): a fat tree's leaves under every spine (the
        Slurm topology guide's form), a dragonfly's switches under their groups under a top."""
        lines = [f"# Generated by `vcluster up --{self.kind} {self.a}x{self.b}`: do not edit."]
        for leaf, nodes in self.members.items():
            lines.append(f"SwitchName={leaf} Nodes={compress(n.name for n in nodes)}")
        if self.kind == FAT_TREE:
            lines += [f"SwitchName={sp} Switches={compress(self.leaves)}" for sp in self.spines]
        else:
            lines += [f"SwitchName={g} Switches={compress(sws)}" for g, sws in self.groups.items()]
            lines.append(f"SwitchName={TOP} Switches={compress(self.groups)}")
        return "\n".join(lines) + "\n"

    def own_topology_text(self) -> str:
        """Our own topology file: the same switches, the routing rule and (a dragonfly) the
        global wiring, which Slurm's topology cannot say."""
        lines = [f"# `vcluster up --{self.kind} {self.a}x{self.b}`: the fabric with its "
                 "routing (fabric-sweep / fabric-report attribute --topology THIS)",
                 "routing=dmodk"]
        wires: dict[str, list[str]] = {}
        for link in self.switch_links():
            if link.kind == "global":
                wires.setdefault(link.a, []).append(link.b)
        for leaf, nodes in self.members.items():
            up = (f" parent={','.join(self.spines)}" if self.kind == FAT_TREE
                  else f" parent={self.group_of(leaf)}")
            glob = f" global={','.join(wires[leaf])}" if leaf in wires else ""
            lines.append(f"{leaf}: {compress(n.name for n in nodes)}{up}{glob}")
        if self.kind == DRAGONFLY:
            lines.append("shape=dragonfly")
        return "\n".join(lines) + "\n"


__all__ = ["Fabric", "Link", "NODE_FABRIC_DEVICE", "SWITCH_NETNS_PREFIX"]

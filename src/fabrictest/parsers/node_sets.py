"""Node sets from a topology: the Slingshot acceptance notes' edge, local and global scopes.

The notes test links at three scopes and build each node list by hand: edge (the nodes of one
switch), local (the nodes of one group) and global (nodes spanning two groups); bisection runs
its first half of the nodes against its second half across the top of the tree. Given a
`Topology` (topology.py) this module derives those lists, so a system with a topology needs no
hand-written node sets:

* ``switch`` (edge): the nodes of the first leaf switch (an even number of them: pairs); none
  for Slurm's topology/block, which names blocks, not switches;
* ``group`` (local): the nodes of the first group: a dragonfly's group, the switch just below
  the top of a tree, a fat tree's pod (leaves under the same aggregation switches), a block of
  topology/block; a leaf directly under the top (a two-level fat tree's leaf under its spines)
  is its own group (an even number of nodes, as for a switch);
* ``global`` (global): the first two groups, as many nodes from each (the smaller group's size);
* ``bisection``: as many nodes from each side of the top of the tree (its groups split in two
  halves, in order), so that rank blocks placed in node-name order (Slurm's order) pair the
  first half with the second across the top.

"First" is by node name (natural order), so a derivation is stable. A scope the topology
cannot hold (one switch with one node, one group, nodes whose names interleave across the top)
is left out with the reason in ``NodeSets.missing``. Hand-written sets win: `merge` keeps
every scope a partition writes by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ParseError
from .hostlists import compress, expand
from .topology import Topology, natural, parse_any_topology

#: the Slingshot acceptance notes' name for each scope
LABELS = {"switch": "edge", "group": "local", "global": "global", "bisection": "global"}
SCOPES = tuple(LABELS)


_natural = natural


def compress_hostlist(nodes: list[str]) -> str:
    """Slurm's hostlist form (`nid[001-032,063-094]`) of ``nodes`` (python-hostlist)."""
    return compress(nodes)


@dataclass
class NodeSets:
    sets: dict[str, list[str]] = field(default_factory=dict)  # scope -> nodes, in name order
    missing: dict[str, str] = field(default_factory=dict)  # scope -> why it is not listed

    def hostlist(self, scope: str) -> str:
        return compress_hostlist(self.sets[scope])


def _groups(topo: Topology) -> list[tuple[str, list[str]]]:
    """(group, its nodes) in the order of their first node, leaving out empty ones: a
    dragonfly's groups, a tree's switches just below the top, a fat tree's pods (a leaf under
    spines that are tops is its own group), topology/block's blocks."""
    groups: dict[str, list[str]] = {}
    for leaf in topo.leaves():
        groups.setdefault(topo.group_of(leaf), []).extend(topo.switches[leaf].nodes)
    out = [(g, sorted(ns, key=_natural)) for g, ns in groups.items() if ns]
    return sorted(out, key=lambda g: _natural(g[1][0]))


def _roots(topo: Topology, leaf: str) -> frozenset[str]:
    return frozenset(s for s in topo.ancestors(leaf) if not topo.switches[s].parents)


def _joined(topo: Topology, groups: list[tuple[str, list[str]]]):
    """The groups under the first group's top switch (Slurm runs no job across switches
    without a common parent: those are other fabrics). Blocks all count as joined."""
    if topo.shape == "blocks" or not groups:
        return groups
    where = topo.switch_of()
    tops = [_roots(topo, where[ns[0]]) for _g, ns in groups]
    first = next((i for i, t in enumerate(tops) if any(t & u for j, u in enumerate(tops)
                                                       if j != i)), 0)
    return [g for g, t in zip(groups, tops, strict=True) if t & tops[first]]


def derive_node_sets(topo: Topology) -> NodeSets:
    """The edge/local/global node sets and the bisection set of ``topo``."""
    out = NodeSets()
    leaves = sorted(((s, sorted(topo.switches[s].nodes, key=_natural)) for s in topo.leaves()),
                    key=lambda x: _natural(x[1][0]))
    # pairs of nodes: an odd switch or group gives all its nodes but its last
    switch = next((nodes for _s, nodes in leaves if len(nodes) >= 2), None)
    if topo.shape == "blocks":
        out.missing["switch"] = "topology/block names blocks of nodes, not switches"
    elif switch is None:
        out.missing["switch"] = "no switch has 2 nodes"
    else:
        out.sets["switch"] = switch[: len(switch) - len(switch) % 2]
    groups = _groups(topo)
    group = next((nodes for _g, nodes in groups if len(nodes) >= 2), None)
    if group is None:
        out.missing["group"] = "no group has 2 nodes"
    else:
        out.sets["group"] = group[: len(group) - len(group) % 2]
    joined = _joined(topo, groups)
    if len(joined) < 2:
        why = (f"{len(groups)} groups under no common top switch" if len(groups) > 1 else
               f"one group ({groups[0][0]})" if groups else "no group")
        groups = joined
        out.missing["global"] = f"{why}: nothing spans two groups"
        out.missing["bisection"] = f"{why}: nothing crosses the top of the tree"
        return out
    groups = joined
    (_a, first), (_b, second) = groups[0], groups[1]
    m = min(len(first), len(second))
    out.sets["global"] = sorted(first[:m] + second[:m], key=_natural)
    half = len(groups) // 2
    side_a = sorted([n for _g, ns in groups[:half] for n in ns], key=_natural)
    side_b = sorted([n for _g, ns in groups[half:] for n in ns], key=_natural)
    m = min(len(side_a), len(side_b))
    nodes = sorted(side_a[:m] + side_b[:m], key=_natural)
    if set(nodes[:m]) != set(side_a[:m]):
        out.missing["bisection"] = ("node names interleave across the top of the tree: ranks "
                                    "placed in name order would not pair across it")
    else:
        out.sets["bisection"] = nodes
    return out


def merge(hand_written: dict[str, str], derived: NodeSets) -> dict[str, str]:
    """scope -> Slurm hostlist: the derived sets, with every hand-written one kept as written."""
    out = {scope: derived.hostlist(scope) for scope in derived.sets}
    out.update(hand_written)
    return out


def sizes(hand_written: dict[str, int], derived: NodeSets,
          hand_written_sets: dict[str, str] | None = None) -> dict[str, int]:
    """scope -> nodes: every hand-written size, else the nodes of the hand-written set (so the
    node count and the node list agree), else the derived set's."""
    out = {scope: len(nodes) for scope, nodes in derived.sets.items()}
    out.update({scope: len(expand(text, f"node set {scope}"))
                for scope, text in (hand_written_sets or {}).items()})
    out.update(hand_written)
    return out


__all__ = ["LABELS", "SCOPES", "NodeSets", "ParseError", "compress_hostlist",
           "derive_node_sets", "merge", "parse_any_topology", "sizes"]

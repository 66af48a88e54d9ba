"""Node sets from a topology: the Slingshot acceptance notes' edge, local and global scopes.

The notes test links at three scopes and build each node list by hand: edge (the nodes of one
switch), local (the nodes of one group) and global (nodes spanning two groups); bisection runs
its first half of the nodes against its second half across the top of the tree. Given a
`Topology` (topology.py) this module derives those lists, so a system with a topology needs no
hand-written node sets:

* ``switch`` (edge): the nodes of the first leaf switch (an even number of them: pairs);
* ``group`` (local): the nodes of the first group, a group being the switch just below the top
  of the tree (a dragonfly group, a fat tree's pod); a leaf directly under the top is its own
  group (an even number of nodes, as for a switch);
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

import re
from dataclasses import dataclass, field

from .errors import ParseError
from .sinfo import expand_hostlist
from .topology import Topology, parse_scontrol_topology, parse_topology_file

#: the Slingshot acceptance notes' name for each scope
LABELS = {"switch": "edge", "group": "local", "global": "global", "bisection": "global"}
SCOPES = tuple(LABELS)

_NUM = re.compile(r"^(?P<prefix>.*?)(?P<num>\d+)$")


def _natural(name: str):
    m = _NUM.match(name)
    return (m.group("prefix"), int(m.group("num")), name) if m else (name, -1, name)


def compress_hostlist(nodes: list[str]) -> str:
    """Slurm's hostlist form (`nid[001-032,063-094]`) of ``nodes``, in natural order; names
    whose numbers differ in width, or without a number, are listed as they are."""
    runs: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for n in sorted(set(nodes), key=_natural):
        m = _NUM.match(n)
        if m:
            runs.setdefault((m.group("prefix"), len(m.group("num"))), []).append(
                int(m.group("num")))
        else:
            plain.append(n)
    parts = []
    for (prefix, width), nums in runs.items():
        ranges, start = [], nums[0]
        for prev, cur in zip(nums, nums[1:] + [None], strict=True):
            if cur is None or cur != prev + 1:
                ranges.append(f"{start:0{width}d}" if start == prev
                              else f"{start:0{width}d}-{prev:0{width}d}")
                start = cur
        parts.append(f"{prefix}{ranges[0]}" if len(nums) == 1 else f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts + plain)


def parse_any_topology(text: str) -> Topology:
    """`scontrol show topology` / `topology.conf` lines (they say `SwitchName=`), else our own
    `SWITCH: NODES parent=SWITCH` file."""
    if "SwitchName=" in text:
        return parse_scontrol_topology(text)
    return parse_topology_file(text)


@dataclass
class NodeSets:
    sets: dict[str, list[str]] = field(default_factory=dict)  # scope -> nodes, in name order
    missing: dict[str, str] = field(default_factory=dict)  # scope -> why it is not listed

    def hostlist(self, scope: str) -> str:
        return compress_hostlist(self.sets[scope])


def _below(topo: Topology, switch: str) -> list[str]:
    """Every node under ``switch``, in name order."""
    out, todo = [], [switch]
    while todo:
        s = topo.switches[todo.pop()]
        out += s.nodes
        todo += s.children
    return sorted(out, key=_natural)


def _groups(topo: Topology) -> list[tuple[str, list[str]]]:
    """(group switch, its nodes) in the order of their first node, leaving out empty ones."""
    groups: dict[str, None] = {}
    for leaf in topo.leaves():
        path = topo.path(leaf)
        groups[path[-2] if len(path) >= 2 else path[-1]] = None
    out = [(g, _below(topo, g)) for g in groups]
    return sorted([g for g in out if g[1]], key=lambda g: _natural(g[1][0]))


def derive_node_sets(topo: Topology) -> NodeSets:
    """The edge/local/global node sets and the bisection set of ``topo``."""
    out = NodeSets()
    leaves = sorted(((s, sorted(topo.switches[s].nodes, key=_natural)) for s in topo.leaves()),
                    key=lambda x: _natural(x[1][0]))
    # pairs of nodes: an odd switch or group gives all its nodes but its last
    switch = next((nodes for _s, nodes in leaves if len(nodes) >= 2), None)
    if switch is None:
        out.missing["switch"] = "no switch has 2 nodes"
    else:
        out.sets["switch"] = switch[: len(switch) - len(switch) % 2]
    groups = _groups(topo)
    group = next((nodes for _g, nodes in groups if len(nodes) >= 2), None)
    if group is None:
        out.missing["group"] = "no group has 2 nodes"
    else:
        out.sets["group"] = group[: len(group) - len(group) % 2]
    if len(groups) < 2:
        why = f"one group ({groups[0][0]})" if groups else "no group"
        out.missing["global"] = f"{why}: nothing spans two groups"
        out.missing["bisection"] = f"{why}: nothing crosses the top of the tree"
        return out
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
    out.update({scope: len(expand_hostlist(text))
                for scope, text in (hand_written_sets or {}).items()})
    out.update(hand_written)
    return out


__all__ = ["LABELS", "SCOPES", "NodeSets", "ParseError", "compress_hostlist",
           "derive_node_sets", "merge", "parse_any_topology", "sizes"]

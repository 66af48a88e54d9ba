"""The links some run between two of a case's nodes crosses, by route class, linear in nodes.

A case of many nodes without per-link figures (a bisection, an all-to-all) implicates every
link some pair of its nodes crosses. Every pair is quadratic, and so is one route per source
leaf and destination (leaf, residue): 10,000 nodes on a fat tree with destination-mod-k took
124 s of CPU. A route splits into a part up from the source leaf and a part down to the
destination leaf, and each part depends on little:

* up from leaf la: on la, the destination leaf's ancestors above it (its *pod*: on a two-level
  fat tree every leaf has the same spines) and the destination's index modulo the period of
  the choices on the way (lcm of the parents counts met);
* down to leaf lb: on the switch the up part reached, lb and the index modulo the period of
  the children counts met on the way down.

So the routes are computed per (source leaf, pod, residue) and per (top, destination leaf,
residue), and cached across the cases (`HopFinder`, one per attribution). A leaf that has
switches below it (a pod is then not enough) is keyed by itself (exact, quadratic in such
leaves only). Without a routing rule the same split holds with the bundle of a leaf's uplinks.
Trees, blocks and dragonflies are handled by their own rules (`elements`). The answer is the
union of `Topology.route(a, b)` over every ordered pair of the nodes (tested against it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from fabrictest.parsers.topology import Hop, Topology
from fabrictest.parsers.topology_model import natural


class HopFinder:
    """`elements(nodes)`: what runs among the nodes cross; `route(a, b)`: one run's hops;
    the classes' routes are kept for every later case."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self.where = topo.switch_of()
        self.idx = topo.index()
        self.shape = topo.shape
        self.dmodk = topo.routing == "dmodk"
        sw = topo.switches
        #: every leaf is below its pod only (no leaf has switches below it)
        self._pods_exact = not any(s.nodes and s.children for s in sw.values())
        self._pod: dict[str, object] = {}
        self._up: dict[tuple, tuple[tuple[Hop, ...], str | None]] = {}
        self._down: dict[tuple, tuple[Hop, ...]] = {}
        self._side: dict[tuple, tuple[Hop, ...]] = {}
        self._period_up: dict[tuple, int] = {}
        self._period_down: dict[tuple, int] = {}
        self._routes: dict[tuple, tuple[Hop, ...]] = {}
        self._key: dict[str, tuple] = {}

    # --- one run ------------------------------------------------------------------------
    def route(self, a: str, b: str) -> tuple[Hop, ...]:
        """`Topology.route(a, b)`, cached by (leaf of a, leaf of b, b's residue)."""
        la, lb = self.where[a], self.where[b]
        if la == lb:
            return ()
        if self.shape in ("fat-tree", "dragonfly") and self.dmodk:
            key = (la, lb, self.idx[b] % self._route_period(la, lb))
        else:
            key = (la, lb, 0)
        if key not in self._routes:
            self._routes[key] = tuple(self.topo.route(a, b))
        return self._routes[key]

    def _route_period(self, la: str, lb: str) -> int:
        if self.shape == "dragonfly":
            ga, gb = self.topo.group_of(la), self.topo.group_of(lb)
            return max(1, len(self.topo.global_links(ga, gb))) if ga != gb else 1
        return self._dest_period(lb)

    # --- the pieces of a route ----------------------------------------------------------
    def pod(self, leaf: str):
        """What the part of a route up to `leaf` depends on besides the source: the leaf's
        ancestors above it (the leaf itself when switches hang below it)."""
        if leaf not in self._pod:
            anc = self.topo.ancestors(leaf)
            self._pod[leaf] = (frozenset(anc - {leaf}) if self._pods_exact
                               else ("leaf", leaf))
        return self._pod[leaf]

    def _in(self, switch: str, pod) -> bool:
        """Is `switch` (a source leaf or above it) among the destination leaf's ancestors?"""
        if self._pods_exact:  # no leaf has switches below it: never the destination leaf
            return switch in pod
        return switch in self.topo.ancestors(pod[1])

    def _up_period(self, cur: str, pod) -> int:
        """lcm of the parent choices' sizes on every way up from `cur` into the pod."""
        key = (cur, pod)
        if key not in self._period_up:
            m = 1
            if not self._in(cur, pod):
                ps = self.topo.switches[cur].parents
                good = [p for p in ps if self._in(p, pod)] or ps
                m = max(1, len(good))
                for p in good:
                    m = math.lcm(m, self._up_period(p, pod))
            self._period_up[key] = m
        return self._period_up[key]

    def _down_period(self, cur: str, lb: str) -> int:
        """lcm of the children choices' sizes on the way down from `cur` to lb."""
        key = (cur, lb)
        if key not in self._period_down:
            m = 1
            if cur != lb:
                cs = self.topo.children_toward(cur, self.topo.ancestors(lb))
                m = max(1, len(cs))
                for c in cs:
                    m = math.lcm(m, self._down_period(c, lb))
            self._period_down[key] = m
        return self._period_down[key]

    def _dest_period(self, lb: str) -> int:
        """The residues destinations on lb differ by: every way up to its pod, every way
        down from one of its ancestors."""
        key = ("dest", lb)
        if key not in self._period_down:
            m = self._pod_period(self.pod(lb))
            for s in self.topo.ancestors(lb):
                m = math.lcm(m, self._down_period(s, lb))
            self._period_down[key] = m
        return self._period_down[key]

    def _climb_up(self, la: str, lb: str, i: int) -> tuple[tuple[Hop, ...], str | None]:
        pod = self.pod(lb)
        key = (la, pod, i % self._up_period(la, pod))
        if key not in self._up:
            hops, top = self.topo.route_up(la, self.topo.ancestors(lb), i)
            self._up[key] = (tuple(hops), top)
        return self._up[key]

    def _climb_down(self, top: str, lb: str, i: int) -> tuple[Hop, ...]:
        key = (top, lb, i % self._down_period(top, lb))
        if key not in self._down:
            self._down[key] = tuple(self.topo.route_down(top, lb, self.topo.ancestors(lb), i))
        return self._down[key]

    def _side_of(self, leaf: str, other: str) -> tuple[Hop, ...]:
        """The hops up from `leaf` toward the other leaf's ancestors (no routing rule)."""
        key = (leaf, self.pod(other))
        if key not in self._side:
            self._side[key] = tuple(self.topo.side(leaf, self.topo.ancestors(other)))
        return self._side[key]

    # --- every pair of a case's nodes ------------------------------------------------------
    def elements(self, nodes: Iterable[str]) -> set[Hop]:
        """Every hop a run between two of `nodes` (either way) crosses."""
        inside = [n for n in dict.fromkeys(nodes) if n in self.where]
        leaves = list(dict.fromkeys(self.where[n] for n in inside))
        if len(leaves) < 2:
            return set()
        if self.shape == "tree":
            return self._tree(inside)
        if self.shape == "blocks":
            order = sorted(leaves, key=natural)
            return {Hop("blocks", x, y) for k, x in enumerate(order) for y in order[k + 1:]}
        if self.shape == "dragonfly":
            return self._dragonfly(inside, leaves)
        if not self.dmodk:
            return self._unrouted(leaves)
        return self._fat_tree(inside, leaves)

    def _tree(self, nodes: list[str]) -> set[Hop]:
        count: dict[str, int] = {}
        for n in nodes:
            for s in self.topo.path(self.where[n]):
                count[s] = count.get(s, 0) + 1
        total = len(nodes)
        sw = self.topo.switches
        return {self.topo.uplink_hop(s, sw[s].parent) for s, c in count.items()
                if 0 < c < total and sw[s].parent is not None}

    def _unrouted(self, leaves: list[str]) -> set[Hop]:
        """A fat tree without a routing rule: each side up to its bundle, per (leaf, pod)."""
        out: set[Hop] = set()
        pods: dict[object, list[str]] = {}
        for lb in leaves:
            pods.setdefault(self.pod(lb), []).append(lb)
        for la in leaves:
            for members in pods.values():
                other = next((lb for lb in members if lb != la), None)
                if other is not None:
                    out.update(self._side_of(la, other))
        return out

    def _dragonfly(self, inside: list[str], leaves: list[str]) -> set[Hop]:
        """Within a group, a local link per leaf pair (the output is that size); between
        groups ga and gb the global link is the destination's residue modulo their links
        (m): the hops up to it per (source leaf, gb, residue), the local link down from it
        per (destination leaf, ga, residue), each from one route of a real pair."""
        topo = self.topo
        group = {leaf: topo.group_of(leaf) for leaf in leaves}
        first = {la: next(n for n in inside if self.where[n] == la) for la in leaves}
        by_group: dict[str, list[str]] = {}
        for leaf in leaves:
            by_group.setdefault(group[leaf], []).append(leaf)
        out: set[Hop] = set()
        for members in by_group.values():
            for la in members:
                for lb in members:
                    if la != lb:
                        out.update(self.route(first[la], first[lb]))
        groups = list(by_group)
        for gb in groups:
            dests = [b for b in inside if group[self.where[b]] == gb]
            for ga in groups:
                if ga == gb:
                    continue
                m = max(1, len(topo.global_links(ga, gb))) if self.dmodk else 1
                per_class: dict[int, str] = {}
                per_leaf: dict[tuple[str, int], str] = {}
                for b in dests:
                    r = self.idx[b] % m
                    per_class.setdefault(r, b)
                    per_leaf.setdefault((self.where[b], r), b)
                src = first[by_group[ga][0]]
                for la in by_group[ga]:
                    for b in per_class.values():
                        out.update(self.route(first[la], b))
                for b in per_leaf.values():
                    out.update(self.route(src, b))
        return out

    def _fat_tree(self, inside: list[str], leaves: list[str]) -> set[Hop]:
        """Destination-mod-k: up per (source leaf, pod, residue), down per (top reached,
        destination leaf, residue)."""
        dests: dict[tuple[str, int], int] = {}  # (leaf, residue) -> an index of that class
        for b in inside:
            lb, i = self.where[b], self.idx[b]
            dests.setdefault((lb, i % self._dest_period(lb)), i)
        up_classes: dict[tuple, dict[str, int]] = {}  # (pod, up residue) -> leaf -> index
        for (lb, _q), i in dests.items():
            pod = self.pod(lb)
            r = i % self._pod_period(pod)
            up_classes.setdefault((pod, r), {}).setdefault(lb, i)
        out: set[Hop] = set()
        reached: dict[tuple, dict[str | None, set[str]]] = {}
        for la in leaves:
            for ck, members in up_classes.items():
                lb = next((x for x in members if x != la), None)
                if lb is None:
                    continue
                hops, top = self._climb_up(la, lb, members[lb])
                out.update(hops)
                reached.setdefault(ck, {}).setdefault(top, set()).add(la)
        for (lb, _q), i in dests.items():
            pod = self.pod(lb)
            ck = (pod, i % self._pod_period(pod))
            for top, sources in reached.get(ck, {}).items():
                if not sources - {lb}:
                    continue
                if top is None:  # no common switch: lb's side up to its top, per source
                    for la in sources - {lb}:
                        out.update(self.topo.side(lb, self.topo.ancestors(la)))
                else:
                    out.update(self._climb_down(top, lb, i))
        return out

    def _pod_period(self, pod) -> int:
        """lcm over every source leaf of the up choices' period toward this pod."""
        key = ("pod", pod)
        if key not in self._period_up:
            m = 1
            for la in self.topo.leaves():
                m = math.lcm(m, self._up_period(la, pod))
            self._period_up[key] = m
        return self._period_up[key]


__all__ = ["HopFinder"]

"""A fabric's topology as data, and the links a run between two nodes crosses.

Shapes (`Topology.shape`):

* ``tree``: every switch has at most one parent (Slurm's tree as most sites write it). A run
  crosses the uplink (switch to parent) of every switch on either side below the two nodes'
  lowest common switch.
* ``fat-tree``: a switch has several parents (the Slurm topology guide's two-level fat tree:
  every leaf listed under each of four spines). Which parent a run goes up to is the fabric's
  routing: with a known rule (``routing="dmodk"``, InfiniBand's destination-mod-k: the parent
  number ``i mod k`` of the k parents in name order, i being the destination node's position
  in name order among the topology's nodes) the links are named one by one; without one, a
  run crosses "the uplinks of leaf s0 (4 links; cannot tell which)".
* ``dragonfly``: leaf switches in groups (a leaf's parent is its group), every two switches of
  a group joined by a local link, groups joined by global links (the Slingshot acceptance
  notes' edge/local/global). With the global wiring known (which switch's global link goes to
  which) and a routing rule, a run between groups crosses one global link (number i mod m of
  the pair's m links), reached and left by local links; without them, "the global links
  between groups g1 and g2" (the notes' global bundle).
* ``blocks``: Slurm's topology/block: base blocks of nodes; a run between two blocks crosses
  "the links between blocks b1 and b2" (which ones cannot be told).

`Hop` is one element a run crosses: a single link, or a bundle whose members cannot be told
apart. Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from .errors import ParseError

ROUTINGS = ("dmodk",)
_NUM = re.compile(r"(\d+)")


def natural(name: str):
    """Sort key: node02 before node10."""
    return [int(p) if p.isdigit() else p for p in _NUM.split(name)]


@dataclass
class Switch:
    name: str
    level: int | None = None  # Slurm's level: 0 for a leaf switch
    nodes: list[str] = field(default_factory=list)  # nodes attached directly
    children: list[str] = field(default_factory=list)  # switches below it
    parents: list[str] = field(default_factory=list)  # switches above it (several: fat tree)
    link_speed: int | None = None  # Slurm's LinkSpeed: the relative rate of its links
    globals: list[str] = field(default_factory=list)  # dragonfly: the ends of its global links

    @property
    def parent(self) -> str | None:
        """Its one parent (None for a top switch, and for a switch with several)."""
        return self.parents[0] if len(self.parents) == 1 else None


@dataclass(frozen=True)
class Hop:
    """One thing a run crosses: a link (`uplink`, `local`, `global`) or a bundle whose member
    cannot be told (`uplinks` of one switch, `globals` between two groups, `blocks`)."""

    kind: str  # uplink | uplinks | local | global | globals | blocks
    a: str  # uplink(s): the lower switch; the others: one end (name order)
    b: str = ""  # uplink: the parent; the others: the other end; uplinks: ""
    count: int | None = None  # links in a bundle (None: not known)
    speed: float | None = None  # LinkSpeed of the link (the lower of its ends'), if given

    @property
    def name(self) -> str:
        if self.kind == "uplinks":
            return self.a
        return f"{self.a}<->{self.b}"

    @property
    def bundle(self) -> bool:
        return self.kind in ("uplinks", "globals", "blocks")

    @property
    def label(self) -> str:
        n = "" if self.count is None else f"{self.count} links; "
        return {
            "uplink": f"uplink {self.name}",
            "uplinks": f"the uplinks of leaf {self.a} ({n}cannot tell which)",
            "local": f"local link {self.name}",
            "global": f"global link {self.name}",
            "globals": f"the global links between groups {self.a} and {self.b} "
                       f"({n}cannot tell which)",
            "blocks": f"the links between blocks {self.a} and {self.b} (cannot tell which)",
        }[self.kind]


@dataclass
class Topology:
    switches: dict[str, Switch]
    source: str  # "scontrol" | "file" | "xname" | "block"
    dragonfly: bool = False
    routing: str | None = None  # "dmodk", or None: not known
    block_sizes: list[int] = field(default_factory=list)  # topology/block's BlockSizes
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def configured(self, *, routing: str | None = None,
                   dragonfly: bool | None = None) -> Topology:
        """The same topology with a routing rule and/or as a dragonfly (what a text alone
        does not say: Slurm's `TopologyParam=dragonfly`, the fabric's routing)."""
        if routing is not None and routing not in ROUTINGS:
            raise ParseError(f"routing {routing!r}: one of {', '.join(ROUTINGS)}")
        return replace(self, routing=self.routing if routing is None else routing,
                       dragonfly=self.dragonfly if dragonfly is None else dragonfly,
                       _cache={})

    # --- what hangs where ---------------------------------------------------------------
    @property
    def shape(self) -> str:
        if self.source == "block":
            return "blocks"
        if self.dragonfly:
            return "dragonfly"
        if any(len(s.parents) > 1 for s in self.switches.values()):
            return "fat-tree"
        return "tree"

    def switch_of(self) -> dict[str, str]:
        """node -> the leaf switch (or block) it hangs from."""
        if "where" not in self._cache:
            self._cache["where"] = {n: s.name for s in self.switches.values() for n in s.nodes}
        return self._cache["where"]

    def leaves(self) -> list[str]:
        return [s.name for s in self.switches.values() if s.nodes]

    def index(self) -> dict[str, int]:
        """node -> its position in name order among every node of the topology (the i of
        destination-mod-k)."""
        if "index" not in self._cache:
            self._cache["index"] = {n: i for i, n in
                                    enumerate(sorted(self.switch_of(), key=natural))}
        return self._cache["index"]

    def path(self, switch: str) -> list[str]:
        """The switch and its ancestors up to the top, by first parent (a tree's one path)."""
        out, seen = [], set()
        cur: str | None = switch
        while cur is not None and cur not in seen and cur in self.switches:
            out.append(cur)
            seen.add(cur)
            ps = self.switches[cur].parents
            cur = ps[0] if ps else None
        return out

    def ancestors(self, switch: str) -> set[str]:
        """The switch and every switch above it (all parents)."""
        key = ("anc", switch)
        if key not in self._cache:
            out, todo = set(), [switch]
            while todo:
                s = todo.pop()
                if s in out or s not in self.switches:
                    continue
                out.add(s)
                todo += self.switches[s].parents
            self._cache[key] = out
        return self._cache[key]

    def group_of(self, leaf: str) -> str:
        """A leaf's group: a dragonfly's leaf's parent; a tree's switch just below the top; a
        fat tree's pod (the aggregation switches its leaves share, named `a1+a2`); itself for
        a block, for a leaf directly under the top and for a leaf under spines that are tops."""
        sw = self.switches[leaf]
        if self.shape == "blocks":
            return leaf
        if self.shape == "dragonfly":
            return sw.parents[0] if sw.parents else leaf
        if len(sw.parents) > 1:  # fat tree: a pod when the parents have parents of their own
            ups = {p for p in sw.parents if self.switches[p].parents}
            return "+".join(sorted(ups, key=natural)) if ups else leaf
        path = self.path(leaf)
        return path[-2] if len(path) >= 2 else path[-1]

    def speed(self, a: str, b: str) -> float | None:
        """A link's LinkSpeed: the lower of its two ends' (None when neither gives one)."""
        got = [self.switches[s].link_speed for s in (a, b)
               if s in self.switches and self.switches[s].link_speed is not None]
        return float(min(got)) if got else None

    # --- dragonfly wiring ---------------------------------------------------------------
    def global_links(self, ga: str, gb: str) -> list[tuple[str, str]]:
        """The global links between groups ga and gb as (end in ga, end in gb), in name
        order ([] when the wiring is not known)."""
        key = ("glob", ga, gb)
        if key not in self._cache:
            out = set()
            for s in self.switches.values():
                for other in s.globals:
                    if other not in self.switches:
                        continue
                    x, y = s.name, other
                    if self.group_of(x) == gb and self.group_of(y) == ga:
                        x, y = y, x
                    if self.group_of(x) == ga and self.group_of(y) == gb:
                        out.add((x, y))
            self._cache[key] = sorted(out, key=lambda p: (natural(p[0]), natural(p[1])))
        return self._cache[key]

    # --- routes ---------------------------------------------------------------------------
    def route(self, a: str, b: str) -> list[Hop]:
        """What a run from node a to node b crosses (nothing when both hang from one switch);
        KeyError for a node outside the topology."""
        where = self.switch_of()
        la, lb = where[a], where[b]
        if la == lb:
            return []
        shape = self.shape
        if shape == "blocks":
            x, y = sorted((la, lb), key=natural)
            return [Hop("blocks", x, y)]
        if shape == "dragonfly":
            return self._dragonfly(la, lb, b)
        return self._climb(la, lb, b)

    def uplink_hop(self, child: str, parent: str) -> Hop:
        """The link from a switch up to one of its parents."""
        return Hop("uplink", child, parent, speed=self.speed(child, parent))

    def side(self, start: str, other: set[str]) -> list[Hop]:
        """Up from `start` by its one parent until a switch in `other` (the other end's
        ancestors); a switch with several parents ends it with the bundle of its uplinks."""
        hops, cur = [], start
        while cur not in other:
            ps = self.switches[cur].parents
            if not ps:
                break  # no common switch (Slurm allows it): the links up to the top
            if len(ps) > 1:
                hops.append(Hop("uplinks", cur, count=len(ps)))
                break
            hops.append(self.uplink_hop(cur, ps[0]))
            cur = ps[0]
        return hops

    def _sorted(self, what: str, switch: str) -> list[str]:
        """A switch's parents or children in name order (sorted once, not per route)."""
        key = (what, switch)
        if key not in self._cache:
            self._cache[key] = sorted(getattr(self.switches[switch], what), key=natural)
        return self._cache[key]

    def children_toward(self, switch: str, target: set[str]) -> list[str]:
        """The switch's children among `target` (a leaf's few ancestors), in name order:
        looked up from the target's side, so a spine of 3,000 leaves costs nothing."""
        key = ("pos", switch)
        if key not in self._cache:
            self._cache[key] = {c: i for i, c in enumerate(self._sorted("children", switch))}
        pos = self._cache[key]
        return sorted((c for c in target if c in pos), key=pos.__getitem__)

    def _climb(self, la: str, lb: str, dst: str) -> list[Hop]:
        """Up from la to a switch above lb and down to it: the uplinks on la's side, then
        lb's (from lb up). Where a switch has several parents the routing rule picks one;
        without a rule each side stops at the bundle of that switch's uplinks."""
        if self.routing != "dmodk" or self.shape == "tree":
            return (self.side(la, self.ancestors(lb))
                    + self.side(lb, self.ancestors(la)))
        target, i = self.ancestors(lb), self.index()[dst]
        up, top = self.route_up(la, target, i)
        if top is None:  # no common switch: lb's side up to its top
            return up + self.side(lb, self.ancestors(la))
        return up + self.route_down(top, lb, target, i)

    def route_up(self, la: str, target: set[str], i: int) -> tuple[list[Hop], str | None]:
        """Destination-mod-k up from la to the first switch in `target` (the destination
        leaf's ancestors), i the destination's index: the uplinks and the switch reached
        (None: a top outside `target`, no common switch)."""
        up: list[Hop] = []
        cur = la
        while cur not in target:
            ps = self._sorted("parents", cur)
            if not ps:
                return up, None
            good = [p for p in ps if p in target] or ps
            nxt = good[i % len(good)]
            up.append(self.uplink_hop(cur, nxt))
            cur = nxt
        return up, cur

    def route_down(self, top: str, lb: str, target: set[str], i: int) -> list[Hop]:
        """Destination-mod-k down from `top` to leaf lb (`target`: lb's ancestors), as the
        uplinks crossed, lowest first."""
        down: list[Hop] = []
        cur = top
        while cur != lb:
            cs = self.children_toward(cur, target)
            if not cs:
                break
            c = cs[i % len(cs)]
            down.append(self.uplink_hop(c, cur))
            cur = c
        return down[::-1]

    def _dragonfly(self, la: str, lb: str, dst: str) -> list[Hop]:
        ga, gb = self.group_of(la), self.group_of(lb)
        if ga == gb:
            x, y = sorted((la, lb), key=natural)
            return [Hop("local", x, y, speed=self.speed(x, y))]
        links = self.global_links(ga, gb)
        if not links or self.routing != "dmodk":
            x, y = sorted((ga, gb), key=natural)
            return [Hop("globals", x, y, count=len(links) or None)]
        x, y = links[self.index()[dst] % len(links)]
        hops = []
        if la != x:
            hops.append(Hop("local", *sorted((la, x), key=natural), speed=self.speed(la, x)))
        hops.append(Hop("global", *sorted((x, y), key=natural), speed=self.speed(x, y)))
        if y != lb:
            hops.append(Hop("local", *sorted((y, lb), key=natural), speed=self.speed(y, lb)))
        return hops

    def residues(self) -> int:
        """How many destination classes routes can differ by (1 without a routing rule)."""
        if self.routing != "dmodk":
            return 1
        ks = [len(s.parents) for s in self.switches.values()] + [
            len(s.children) for s in self.switches.values()]
        if self.dragonfly:
            groups = sorted({self.group_of(x) for x in self.leaves()})
            ks += [len(self.global_links(g, h)) for g in groups for h in groups if g != h]
        m = 1
        for k in ks:
            if k > 1:
                m = math.lcm(m, k)
        return m


def finish(topo: dict[str, Switch], what: str) -> None:
    """Parents from children lists and children from parents, in place; a node under two
    switches or a cycle is refused."""
    for s in list(topo.values()):
        for c in s.children:
            if c not in topo:
                topo[c] = Switch(name=c)
            if s.name not in topo[c].parents:
                topo[c].parents.append(s.name)
    for s in list(topo.values()):
        for p in s.parents:
            if p not in topo:
                topo[p] = Switch(name=p)
            if s.name not in topo[p].children:
                topo[p].children.append(s.name)
    owner: dict[str, str] = {}
    for s in topo.values():
        for n in s.nodes:
            if n in owner:
                raise ParseError(f"{what}: node {n} is under two switches ({owner[n]}, "
                                 f"{s.name})")
            owner[n] = s.name
        if s.name in s.parents:
            raise ParseError(f"{what}: switch {s.name} is its own parent")
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in topo:
        stack = [(start, iter(topo[start].parents))]
        if state.get(start):
            continue
        state[start] = 1
        while stack:
            name, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[name] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                raise ParseError(f"{what}: switches form a cycle through {nxt}")
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(topo[nxt].parents)))


__all__ = ["ROUTINGS", "Hop", "Switch", "Topology", "finish", "natural"]

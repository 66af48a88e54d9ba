"""Which runs cross which links of a topology, and each link's report against the level: the
incidence of runs on links (a tree's uplinks vectorised, any other shape by each run's route),
the runs inside a link's ends, and the per-link figures the sweep names links by
(topology.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..parsers.topology import Hop, Topology
from .runs import OK, RunTable

BUNDLES = ("uplinks", "globals", "blocks")  # links a run takes one of, which one not known


@dataclass
class UplinkReport:
    switch: str  # the lower switch (uplinks), one end (links between peers)
    parent: str  # the parent (uplinks), the other end; "" for a leaf's bundle
    name: str  # "sw1<->top", "sw1<->sw2" for the path between two leaves, "s0" for a bundle
    crossing: int  # OK runs crossing it
    slow: int  # of them below the cut
    ratio: float | None  # median crossing run / level
    inside: int  # OK runs between nodes at its ends (the switches or groups it joins)
    inside_ratio: float | None
    failed: int  # failed runs crossing it
    suspect: bool = False
    kind: str = "uplink"  # Hop.kind
    label: str = ""  # "uplink sw1<->top", "the uplinks of leaf s0 (4 links; ...)"
    expected: float = 1.0  # its share of the level (LinkSpeed over the highest)
    inside_of: str = ""  # "sw1 and sw2": where its inside runs are
    links: int | None = None  # a bundle's links (None: not known)
    slow_ratio: float | None = None  # median of its slow crossing runs / level

    @property
    def bundle(self) -> bool:
        return self.kind in BUNDLES

    def line(self, other_inside: str = "") -> str:
        where = self.inside_of or f"{self.switch}{other_inside}"
        share = ("" if self.expected >= 1 else
                 f" (expected {self.expected:.2f} of it: its LinkSpeed)")
        bundle = ("; the group pair's global links carry less than their share (the "
                  "Slingshot notes' global bundle sizing)" if self.kind == "globals" else "")
        if self.bundle:  # one of its links slow: about 1/k of the runs that cross it
            k = f"{self.links}" if self.links else "several"
            return (f"suspect: {self.label}: {self.slow}/{self.crossing} crossing runs slow, "
                    f"at {self.slow_ratio:.2f} of the cluster level{share} (about the share "
                    f"one of its {k} links carries); runs inside {where} healthy{bundle}")
        return (f"suspect: {self.label or 'uplink ' + self.name}: {self.slow}/{self.crossing} "
                f"crossing runs at {self.ratio:.2f} of the cluster level{share}; runs inside "
                f"{where} healthy{bundle}")


def leaf_index(topo: Topology, nodes: list[str]) -> tuple[list[str], np.ndarray]:
    """Switch names, and per node the index of its leaf switch (-1: not in the topology)."""
    names = list(topo.switches)
    pos = {s: i for i, s in enumerate(names)}
    where = topo.switch_of()
    return names, np.array([pos.get(where.get(n, ""), -1) for n in nodes], dtype=np.int64)


# --- which runs cross what -----------------------------------------------------------------


def _chains(topo: Topology, nodes: list[str]):
    """Switch names, and per node its leaf's path to the root as switch indices (a row of
    -1 for a node outside the topology): a tree's routes, vectorised."""
    names, leaf = leaf_index(topo, nodes)
    pos = {s: i for i, s in enumerate(names)}
    paths = [[pos[x] for x in topo.path(s)] for s in names]
    depth = max((len(p) for p in paths), default=1)
    chain = np.full((len(names) + 1, depth), -1, dtype=np.int64)  # last row: no switch
    for i, p in enumerate(paths):
        chain[i, :len(p)] = p
    return names, chain[leaf]


def _tree_incidence(table: RunTable, topo: Topology):
    """A tree: (hops, (hop, run) crossing pairs, (hop, run) inside pairs), vectorised: a run
    crosses the uplinks of the switches on one end's path and not on the other's."""
    names, chain = _chains(topo, table.nodes)
    A, B = chain[table.src], chain[table.dst]
    a_in_b = (A[:, :, None] == B[:, None, :]).any(axis=2) & (A >= 0)
    b_in_a = (B[:, :, None] == A[:, None, :]).any(axis=2) & (B >= 0)
    known = (A[:, 0] >= 0) & (B[:, 0] >= 0)
    up_a = np.where((A >= 0) & ~a_in_b & known[:, None], A, -1)
    up_b = np.where((B >= 0) & ~b_in_a & known[:, None], B, -1)
    both = np.where(a_in_b & known[:, None], A, -1)
    run = np.arange(len(table))[:, None]

    def flat(m):  # (switch, run) of every entry >= 0
        sel = m >= 0
        return m[sel], np.broadcast_to(run, m.shape)[sel]

    cs, cr = (np.concatenate(p) for p in zip(flat(up_a), flat(up_b), strict=True))
    is_, ir = flat(both)
    hops = [topo.uplink_hop(s, topo.switches[s].parent) if topo.switches[s].parent else None
            for s in names]
    return hops, (cs, cr), (is_, ir), [[s] for s in names]


def _route_incidence(table: RunTable, topo: Topology):
    """Any shape: each run's route (one per source leaf, destination leaf and destination
    class), the hops numbered as they are met; inside runs: both ends in one region of the
    hop (its lower switch, or either end's switch or group)."""
    where = topo.switch_of()
    idx = topo.index()
    m = topo.residues()
    leaf_of = [where.get(n) for n in table.nodes]
    cls = [idx[n] % m if n in idx else -1 for n in table.nodes]
    hop_id: dict[Hop, int] = {}
    hops: list[Hop] = []
    cache: dict[tuple, list[int]] = {}
    ce, cr = [], []
    src, dst = table.src.tolist(), table.dst.tolist()
    for j, (a, b) in enumerate(zip(src, dst, strict=True)):
        la, lb = leaf_of[a], leaf_of[b]
        if la is None or lb is None or la == lb:
            continue
        key = (la, lb, cls[b])
        ids = cache.get(key)
        if ids is None:
            ids = []
            for h in topo.route(table.nodes[a], table.nodes[b]):
                if h not in hop_id:
                    hop_id[h] = len(hops)
                    hops.append(h)
                ids.append(hop_id[h])
            cache[key] = ids
        ce += ids
        cr += [j] * len(ids)
    regions = [_regions(topo, h) for h in hops]
    leaves = {s: i for i, s in enumerate(topo.switches)}
    lidx = np.array([leaves.get(x, -1) if x else -1 for x in leaf_of], dtype=np.int64)
    ls, ld = lidx[table.src], lidx[table.dst]
    ie, ir = [], []
    for k, regs in enumerate(regions):
        for reg in regs:
            sel = np.array(sorted(leaves[x] for x in reg if x in leaves), dtype=np.int64)
            hit = np.flatnonzero(np.isin(ls, sel) & np.isin(ld, sel) & (ls >= 0))
            ie += [k] * hit.size
            ir += hit.tolist()
    return (hops, (np.array(ce, dtype=np.int64), np.array(cr, dtype=np.int64)),
            (np.array(ie, dtype=np.int64), np.array(ir, dtype=np.int64)),
            [[h.a, h.b] if h.kind == "globals" else [", ".join(sorted(r)) for r in regs]
             for h, regs in zip(hops, regions, strict=True)])


def reverse_crossing(table: RunTable, topo: Topology, named: set[tuple[str, str]]):
    """Per run: whether its reverse route (dst to src) crosses one of the `named` hops."""
    out = np.zeros(len(table), dtype=bool)
    if not named:
        return out
    where = topo.switch_of()
    idx = topo.index()
    m = topo.residues()
    cache: dict[tuple, bool] = {}
    for j, (a, b) in enumerate(zip(table.src.tolist(), table.dst.tolist(), strict=True)):
        na, nb = table.nodes[a], table.nodes[b]
        if na not in where or nb not in where or where[na] == where[nb]:
            continue
        key = (where[nb], where[na], idx[na] % m)
        if key not in cache:
            cache[key] = any((h.kind, h.name) in named for h in topo.route(nb, na))
        out[j] = cache[key]
    return out


def _regions(topo: Topology, hop: Hop) -> list[set[str]]:
    """The leaves whose inside runs show the nodes at a hop's ends healthy."""
    if hop.kind in ("uplink", "uplinks"):
        below = [s for s in topo.leaves() if hop.a in topo.ancestors(s)]
        return [set(below)]
    if hop.kind in ("local", "global", "blocks"):
        return [{hop.a}, {hop.b}]
    groups = {g: {x for x in topo.leaves() if topo.group_of(x) == g} for g in (hop.a, hop.b)}
    return list(groups.values())  # globals: inside either group


def _group_median(groups: np.ndarray, x: np.ndarray, n: int) -> np.ndarray:
    out = np.full(n, np.nan)
    if groups.size == 0:
        return out
    order = np.lexsort((x, groups))
    g, v = groups[order], x[order]
    start = np.searchsorted(g, np.arange(n))
    count = np.bincount(g, minlength=n)
    has = count > 0
    lo = start[has] + (count[has] - 1) // 2
    hi = start[has] + count[has] // 2
    out[has] = (v[lo] + v[hi]) / 2
    return out


def incidence(table: RunTable, topo: Topology):
    if topo.shape == "tree":
        return _tree_incidence(table, topo)
    return _route_incidence(table, topo)


def shares(hops: list[Hop | None]) -> list[float]:
    """Each hop's expected share of the level: its LinkSpeed over the highest given."""
    speeds = [h.speed for h in hops if h is not None and h.speed]
    top = max(speeds, default=None)
    return [1.0 if h is None or not h.speed or not top else min(1.0, h.speed / top)
            for h in hops]


def uplinks(table: RunTable, topo: Topology, center: float | None, cut: float,
            inc=None) -> list[UplinkReport]:
    """Every link's crossing and inside runs, against the level."""
    hops, (cs, cr), (is_, ir), regions = inc or incidence(table, topo)
    n = len(hops)
    share = np.array(shares(hops)) if n else np.zeros(0)
    ok = (table.status == OK) & (table.value > 0)
    x = np.full(len(table), np.nan)
    if center:
        x[ok] = np.log(table.value[ok] / center)
    cok, iok = ok[cr], ok[ir]
    crossing = np.bincount(cs[cok], minlength=n)
    # a run is held against the lowest LinkSpeed share on its route (a link slower by its
    # LinkSpeed slows every run across it, on every other link of its route too)
    run_share = np.ones(len(table))
    if n:
        np.minimum.at(run_share, cr, share[cs])
    xs = x[cr] - np.log(run_share[cr])
    slow = np.bincount(cs[cok & (xs < cut)], minlength=n)
    failed = np.bincount(cs[~ok[cr] & (table.status[cr] != OK)], minlength=n)
    inside = np.bincount(is_[iok], minlength=n)
    cmed = _group_median(cs[cok], x[cr][cok], n)
    sel = cok & (xs < cut)
    smed = _group_median(cs[sel], x[cr][sel], n)
    imed = _group_median(is_[iok], x[ir][iok], n)
    out = []
    for k, h in enumerate(hops):
        if h is None or (topo.shape != "tree" and crossing[k] + failed[k] == 0):
            continue
        regs = regions[k]
        out.append(UplinkReport(
            switch=h.a, parent=h.b, name=h.name, crossing=int(crossing[k]), slow=int(slow[k]),
            ratio=None if crossing[k] == 0 else float(math.exp(cmed[k])),
            inside=int(inside[k]),
            inside_ratio=None if inside[k] == 0 else float(math.exp(imed[k])),
            failed=int(failed[k]), kind=h.kind, label=h.label, expected=float(share[k]),
            inside_of="" if topo.shape == "tree" else " and ".join(regs), links=h.count,
            slow_ratio=None if slow[k] == 0 else float(math.exp(smed[k]))))
    return out


def below_mask(topo: Topology, nodes: list[str], switch: str) -> np.ndarray:
    """Per node: whether it hangs below `switch` (the simulation's slow uplinks)."""
    if topo is None or switch not in topo.switches:
        raise ValueError(f"{switch!r} is not a switch of the topology")
    where = topo.switch_of()
    return np.array([n in where and switch in topo.ancestors(where[n]) for n in nodes],
                    dtype=bool)


def crossing(topo: Topology, nodes: list[str], name: str):
    """f(src, dst) -> per run whether it crosses `name`: a switch's uplink (the switch's
    name) or a link or bundle as the sweep names it (`s0<->s4`, `g1<->g2`). ValueError when
    the topology has no such thing."""
    if name in topo.switches:
        below = below_mask(topo, nodes, name)
        return lambda src, dst: below[src] != below[dst]
    where = topo.switch_of()
    known = {h.name for a in topo.leaves() for b in topo.leaves() if a != b
             for h in _sample_routes(topo, a, b)}
    if name not in known:
        raise ValueError(f"{name} is not a switch with an uplink nor a link of the topology")
    cache: dict[tuple[int, int], bool] = {}

    def f(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        out = np.zeros(len(src), dtype=bool)
        for j, (a, b) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
            if (a, b) not in cache:
                na, nb = nodes[a], nodes[b]
                cache[(a, b)] = (na in where and nb in where
                                 and any(h.name == name for h in topo.route(na, nb)))
            out[j] = cache[(a, b)]
        return out

    return f


def _sample_routes(topo: Topology, la: str, lb: str) -> list[Hop]:
    """Every hop between two leaves, over every destination on lb."""
    a = topo.switches[la].nodes[0]
    out: list[Hop] = []
    for b in topo.switches[lb].nodes:
        out += topo.route(a, b)
    return out

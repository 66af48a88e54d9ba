"""The sweep with a topology: per switch and per uplink, and a slow uplink named as such.

A run from a to b crosses the uplink of switch c (the link from c to its parent) when exactly
one of a and b hangs below c. When nearly every run crossing an uplink is slow while the runs
between nodes *inside* the switch (and inside the switches on the other side) are healthy,
the suspect is the uplink, not the nodes on either side:

    suspect: uplink sw1<->sw2: 6/6 crossing runs at 0.48 of the cluster level; runs inside sw1 and sw2 healthy

(with two leaf switches under one top switch the two uplinks carry the same runs, so the
path between the leaves is named). Its crossing runs are then left out of the nodes'
evidence, so that the nodes behind it are not named for it. Screening matchings are random
and mostly cross switches, so with a topology the first extra round pairs every switch's
nodes with each other (`inside_round`): an uplink is told from its nodes within 3 rounds, and
every node keeps evidence no uplink explains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..parsers.topology import Topology
from .runs import OK, Round, RoundRuns, RunTable

MIN_CROSSING = 3  # runs crossing an uplink before it can be named
SLOW_SHARE = 0.8  # of its crossing runs below the cut
TOO_SLOW_INSIDE = 0.9  # inside runs at or above this x the level count as healthy


@dataclass
class UplinkReport:
    switch: str
    parent: str
    name: str  # "sw1<->top", or "sw1<->sw2" for the path between two leaves
    crossing: int  # OK runs crossing it
    slow: int  # of them below the cut
    ratio: float | None  # median crossing run / level
    inside: int  # OK runs between nodes below the switch
    inside_ratio: float | None
    failed: int  # failed runs crossing it
    suspect: bool = False

    def line(self, other_inside: str = "") -> str:
        ins = f"runs inside {self.switch}{other_inside} healthy"
        return (f"suspect: uplink {self.name}: {self.slow}/{self.crossing} crossing runs at "
                f"{self.ratio:.2f} of the cluster level; {ins}")


def leaf_index(topo: Topology, nodes: list[str]) -> tuple[list[str], np.ndarray]:
    """Switch names, and per node the index of its leaf switch (-1: not in the topology)."""
    names = list(topo.switches)
    pos = {s: i for i, s in enumerate(names)}
    where = topo.switch_of()
    return names, np.array([pos.get(where.get(n, ""), -1) for n in nodes], dtype=np.int64)


def _chains(topo: Topology, nodes: list[str]):
    """Switch names, and per node its leaf's path to the root as switch indices (a row of
    -1 for a node outside the topology)."""
    names, leaf = leaf_index(topo, nodes)
    pos = {s: i for i, s in enumerate(names)}
    paths = [[pos[x] for x in topo.path(s)] for s in names]
    depth = max((len(p) for p in paths), default=1)
    chain = np.full((len(names) + 1, depth), -1, dtype=np.int64)  # last row: no switch
    for i, p in enumerate(paths):
        chain[i, :len(p)] = p
    return names, chain[leaf]


def _sides_of_runs(table: RunTable, topo: Topology):
    """Per run and chain level: the switch whose uplink the run crosses going up from the
    sender's side (-1: none) and from the receiver's side, and the switches both ends are
    below (inside runs)."""
    names, chain = _chains(topo, table.nodes)
    A, B = chain[table.src], chain[table.dst]
    a_in_b = (A[:, :, None] == B[:, None, :]).any(axis=2) & (A >= 0)
    b_in_a = (B[:, :, None] == A[:, None, :]).any(axis=2) & (B >= 0)
    known = (A[:, 0] >= 0) & (B[:, 0] >= 0)
    up_a = np.where((A >= 0) & ~a_in_b & known[:, None], A, -1)
    up_b = np.where((B >= 0) & ~b_in_a & known[:, None], B, -1)
    both = np.where(a_in_b & known[:, None], A, -1)
    return names, up_a, up_b, both


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


def uplinks(table: RunTable, topo: Topology, center: float | None,
            cut: float) -> list[UplinkReport]:
    """Every uplink's crossing and inside runs, against the level (vectorised: a run
    crosses the uplinks of the switches on one end's path and not on the other's)."""
    names, up_a, up_b, both = _sides_of_runs(table, topo)
    n = len(names)
    ok = (table.status == OK) & (table.value > 0)
    x = np.full(len(table), np.nan)
    if center:
        x[ok] = np.log(table.value[ok] / center)
    run = np.arange(len(table))[:, None]

    def flat(m):  # (switch, run) of every entry >= 0
        sel = m >= 0
        return m[sel], np.broadcast_to(run, m.shape)[sel]

    cs, cr = (np.concatenate(p) for p in zip(flat(up_a), flat(up_b), strict=True))
    is_, ir = flat(both)
    cok, iok = ok[cr], ok[ir]
    crossing = np.bincount(cs[cok], minlength=n)
    slow = np.bincount(cs[cok & (x[cr] < cut)], minlength=n)
    failed = np.bincount(cs[~ok[cr] & (table.status[cr] != OK)], minlength=n)
    inside = np.bincount(is_[iok], minlength=n)
    cmed = _group_median(cs[cok], x[cr][cok], n)
    imed = _group_median(is_[iok], x[ir][iok], n)
    out = []
    for k, s in enumerate(names):
        parent = topo.switches[s].parent
        if parent is None:
            continue
        out.append(UplinkReport(
            switch=s, parent=parent, name=f"{s}<->{parent}", crossing=int(crossing[k]),
            slow=int(slow[k]), ratio=None if crossing[k] == 0 else float(math.exp(cmed[k])),
            inside=int(inside[k]),
            inside_ratio=None if inside[k] == 0 else float(math.exp(imed[k])),
            failed=int(failed[k])))
    return out


def below_mask(topo: Topology, nodes: list[str], switch: str) -> np.ndarray:
    """Per node: whether it hangs below `switch` (the simulation's slow uplinks)."""
    if topo is None or switch not in topo.switches:
        raise ValueError(f"{switch!r} is not a switch of the topology")
    names, chain = _chains(topo, nodes)
    return (chain == names.index(switch)).any(axis=1)


def _crossing_mask(table: RunTable, topo: Topology, switch: str) -> np.ndarray:
    below = below_mask(topo, table.nodes, switch)
    return below[table.src] != below[table.dst]


def attribute(table: RunTable, topo: Topology, center: float | None, cut: float):
    """(every uplink's report, the suspect uplinks' lines, mask of the runs they explain)."""
    reports = uplinks(table, topo, center, cut)
    # the level the uplinks are held against: the runs inside switches when there are some
    # (crossing runs of a slow uplink may be most of the runs of a small cluster)
    names, leaf = leaf_index(topo, table.nodes)
    ok = (table.status == OK) & (table.value > 0)
    same = (leaf[table.src] == leaf[table.dst]) & (leaf[table.src] >= 0) & ok
    if same.sum() >= 2 and center:
        inner = float(np.exp(np.median(np.log(table.value[same]))))
        reports = uplinks(table, topo, inner, cut)
    flagged = [r for r in reports
               if r.crossing >= MIN_CROSSING and r.slow >= SLOW_SHARE * r.crossing
               and r.ratio is not None and r.ratio < math.exp(cut)
               and r.inside_ratio is not None and r.inside_ratio >= TOO_SLOW_INSIDE]
    # a slow uplink high in the tree makes the uplinks below it look slow too (most of their
    # crossing runs go on through it): the highest one is named
    names_flagged = {r.switch for r in flagged}
    flagged = [r for r in flagged
               if not any(a in names_flagged for a in topo.path(r.switch)[1:])]
    masks = {r.switch: _crossing_mask(table, topo, r.switch) for r in flagged}
    lines: list[str] = []
    done: set[str] = set()
    explained = np.zeros(len(table), dtype=bool)
    for r in flagged:
        if r.switch in done:
            continue
        r.suspect = True
        twin = next((o for o in flagged if o.switch != r.switch and o.switch not in done
                     and np.array_equal(masks[o.switch], masks[r.switch])), None)
        if twin is not None:  # two leaves under one parent: the path between them
            r.name = twin.name = f"{r.switch}<->{twin.switch}"
            twin.suspect = True
            done.add(twin.switch)
            lines.append(r.line(f" and {twin.switch}"))
        else:
            lines.append(r.line())
        done.add(r.switch)
        explained |= masks[r.switch]
    return reports, lines, explained


def uplink_regions(topo: Topology | None, nodes: list[str],
                   reports: list[UplinkReport]) -> np.ndarray | None:
    """Per node, the suspect uplink it hangs below (its index), -1 for none; None when no
    uplink is a suspect. Two nodes of one region: their runs cross no suspect uplink."""
    suspects = [r.switch for r in reports if r.suspect]
    if topo is None or not suspects:
        return None
    out = np.full(len(nodes), -1, dtype=np.int64)
    for i, sw in enumerate(suspects):
        out[below_mask(topo, nodes, sw)] = i
    return out


def without(table: RunTable, drop: np.ndarray) -> RunTable:
    """The same runs, less those in `drop` (a new table, rounds kept)."""
    out = RunTable(table.nodes)
    start = 0
    for index, part in table._parts:  # noqa: SLF001 - the table's own rounds
        n = len(part.src)
        keep = ~drop[start:start + n]
        start += n
        idx = np.flatnonzero(keep)
        details = {int(k): part.details[j] for k, j in enumerate(idx.tolist())
                   if j in part.details}
        sub = RoundRuns(part.src[keep], part.dst[keep], part.status[keep], part.value[keep],
                        part.seconds[keep], details)
        out.add(Round(index, table.kinds[index], np.zeros(0, int), np.zeros(0, int),
                      table.nodes), sub)
    return out


def inside_round(index: int, table: RunTable, topo: Topology, seed: int | None) -> Round | None:
    """Every switch's nodes paired with each other, all switches at once, so that every node
    has evidence no uplink explains (None when no switch has two nodes in the sweep)."""
    names, leaf = leaf_index(topo, table.nodes)
    rng = np.random.default_rng(seed)
    a_out, b_out = [], []
    for s in range(len(names)):
        members = np.flatnonzero(leaf == s)
        if members.size < 2:
            continue
        members = rng.permutation(members)
        half = members.size // 2
        a_out += members[:half].tolist()
        b_out += members[half:2 * half].tolist()
    if not a_out:
        return None
    return Round(index=index, kind="extra", a=np.array(a_out, dtype=np.int64),
                 b=np.array(b_out, dtype=np.int64), names=table.nodes,
                 reason="pairs inside each switch, to tell an uplink from its nodes")


def report_lines(reports: list[UplinkReport]) -> list[str]:
    """The per-uplink table of the text output."""
    if not reports:
        return []
    out = ["per uplink (runs crossing it, and runs between the nodes below it; ratio = median / "
           "level)",
           f"{'uplink':<20} {'crossing':>8} {'slow':>5} {'ratio':>6} {'inside':>6} "
           f"{'ratio':>6}  status"]
    for r in reports:
        def f(v):
            return "-" if v is None else f"{v:.2f}"
        out.append(f"{r.name:<20} {r.crossing:>8} {r.slow:>5} {f(r.ratio):>6} {r.inside:>6} "
                   f"{f(r.inside_ratio):>6}  {'suspect' if r.suspect else 'ok'}")
    return out


# --- options of fabric-sweep ------------------------------------------------------------


def add_options(ap) -> None:
    g = ap.add_argument_group("topology")
    g.add_argument("--topology", metavar="FILE|slurm",
                   help="which switch each node hangs from: a topology.conf, the output of "
                        "`scontrol show topology`, our own file (SWITCH: NODES parent=SWITCH), "
                        "or `slurm` to ask scontrol; the sweep then reports per uplink and names "
                        "a slow uplink as such")
    g.add_argument("--sim-slow-uplink", action="append", default=[], metavar="SWITCH=FACTOR",
                   help="simulation: runs crossing SWITCH's uplink at most at FACTOR (repeat)")


def load(args, names: list[str]):
    """(the topology or None, {switch: factor} of the simulation); UsageError when the
    options cannot apply, before any run."""
    from ..topology_source import TopologyError, read_topology
    from .options import UsageError

    if args.sim_slow_uplink and not args.topology:
        raise UsageError("--sim-slow-uplink needs --topology")
    if args.sim_slow_uplink and args.launcher != "sim":
        raise UsageError("--sim-slow-uplink needs --launcher sim")
    if not args.topology:
        return None, {}
    try:
        topo = read_topology(args.topology)
    except TopologyError as err:
        raise UsageError(str(err)) from None
    where = topo.switch_of()
    if not any(n in where for n in names):
        raise UsageError(f"--topology {args.topology} places none of the swept nodes")
    slow: dict[str, float] = {}
    for spec in args.sim_slow_uplink:
        sw, _, f = spec.partition("=")
        try:
            factor = float(f)
        except ValueError:
            factor = -1.0
        if not 0 < factor <= 1:
            raise UsageError(f"--sim-slow-uplink {spec}: expected SWITCH=FACTOR, 0 < FACTOR <= 1")
        if sw not in topo.switches or topo.switches[sw].parent is None:
            raise UsageError(f"--sim-slow-uplink {spec}: {sw} is not a switch with an uplink "
                             "in the topology")
        slow[sw] = factor
    return topo, slow

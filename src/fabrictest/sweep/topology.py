"""The sweep with a topology: per link, and a slow link named as such.

Every run crosses the links its route takes (parsers/topology_model.py: a tree's uplinks, a
fat tree's leaf-spine links or, without a routing rule, a leaf's bundle of uplinks, a
dragonfly's local and global links or a group pair's bundle of global links, the links
between two blocks). When nearly every run crossing a link is slow while the runs *inside*
the switches at its ends are healthy, the suspect is the link, not the nodes on either side:

    suspect: uplink sw1<->sw2: 6/6 crossing runs at 0.48 of the cluster level; runs inside sw1 and sw2 healthy

(in a tree with two leaves under one top switch the two uplinks carry the same runs, so the
path between the leaves is named). Its crossing runs are then left out of the nodes'
evidence, so that the nodes behind it are not named for it. A link with a `LinkSpeed` below
the fabric's highest is held against the level times its share (LinkSpeed 900 of 1800: half
the cluster level). Screening matchings are random and mostly cross switches, so with a
topology the first extra round pairs every switch's nodes with each other (`inside_round`):
a link is told from its nodes within 3 rounds, and every node keeps evidence no link explains.
"""

from __future__ import annotations

import math

import numpy as np

from ..parsers.topology import Topology
from .link_runs import (
    UplinkReport,
    below_mask,
    crossing,
    incidence,
    leaf_index,
    reverse_crossing,
    shares,
    uplinks,
)
from .runs import OK, Round, RoundRuns, RunTable

MIN_CROSSING = 3  # runs crossing a link before it can be named
SLOW_SHARE = 0.8  # of its crossing runs below the cut
TOO_SLOW_INSIDE = 0.9  # inside runs at or above this x the level count as healthy
BUNDLE_SHARE = 0.5  # of 1/k, for a bundle of k links (the runs one slow member carries)



def _flag(reports: list[UplinkReport], cut: float) -> list[UplinkReport]:
    """A link: nearly all its crossing runs slow; a bundle of k links whose member is not
    known: at least the share of its runs one slow member carries (1/k of them, 1/2 when k
    is not known) taken at half (samples are small), on twice the evidence; both with the
    runs inside its ends healthy."""
    out = []
    for r in reports:
        if r.inside_ratio is None or r.inside_ratio < TOO_SLOW_INSIDE or r.ratio is None:
            continue
        if r.bundle:
            k = r.links or 2
            if (r.crossing >= 2 * MIN_CROSSING
                    and r.slow >= max(MIN_CROSSING, BUNDLE_SHARE * r.crossing / k)):
                out.append(r)
        elif (r.crossing >= MIN_CROSSING and r.slow >= SLOW_SHARE * r.crossing
              and r.ratio < r.expected * math.exp(cut)):
            out.append(r)
    return out


def _weight(r: UplinkReport) -> float:
    """How uniformly slow its crossing runs are, for what it is (a bundle: per member)."""
    return r.slow / max(r.crossing, 1) * ((r.links or 2) if r.bundle else 1)


def _one_node_explains(table: RunTable, mask: np.ndarray, x: np.ndarray, cut: float) -> bool:
    """A node in every slow run crossing a link, whose runs that do not cross it are not
    healthy: that node, not the link, may be what is slow (a far end the link's inside runs
    do not see)."""
    slow = np.flatnonzero(mask & (x < cut))
    if slow.size == 0:
        return False
    common = set(table.src[slow].tolist()) | set(table.dst[slow].tolist())
    for j in slow.tolist():
        common &= {int(table.src[j]), int(table.dst[j])}
    for node in common:
        other = ~mask & np.isfinite(x) & ((table.src == node) | (table.dst == node))
        if not other.any() or np.median(x[other]) < math.log(TOO_SLOW_INSIDE):
            return True
    return False


def attribute(table: RunTable, topo: Topology, center: float | None, cut: float):
    """(every link's report, the suspect links' lines, mask of the runs they explain)."""
    inc = incidence(table, topo)
    reports = uplinks(table, topo, center, cut, inc)
    # the level the links are held against: the runs inside switches when there are some
    # (crossing runs of a slow link may be most of the runs of a small cluster)
    _names, leaf = leaf_index(topo, table.nodes)
    ok = (table.status == OK) & (table.value > 0)
    same = (leaf[table.src] == leaf[table.dst]) & (leaf[table.src] >= 0) & ok
    if same.sum() >= 2 and center:
        inner = float(np.exp(np.median(np.log(table.value[same]))))
        reports = uplinks(table, topo, inner, cut, inc)
    flagged = _flag(reports, cut)
    hops, (cs, cr), _inside, _regs = inc
    ids = {(h.kind, h.name): k for k, h in enumerate(hops) if h is not None}
    masks = {}
    for r in flagged:
        m = np.zeros(len(table), dtype=bool)
        m[cr[cs == ids[(r.kind, r.name)]]] = True
        masks[(r.kind, r.name)] = m
    if topo.shape == "tree":
        lines, explained = _name_tree(topo, flagged, masks, len(table))
    else:
        lines, explained = _name_links(table, flagged, masks, ok, center, cut)
        # a run's acknowledgements come back by the reverse route, which differs here: those
        # that queue behind a slow link's traffic slow their run too (seen on the vcluster)
        explained |= reverse_crossing(table, topo, {(r.kind, r.name) for r in flagged
                                                     if r.suspect})
    # runs across a link whose LinkSpeed is below the fabric's highest measure the link (held
    # against its share above), not their nodes
    tapered = [k for k, h in enumerate(hops) if h is not None and h.speed
               and shares(hops)[k] < 1]
    if tapered:
        explained = explained | np.isin(np.arange(len(table)), cr[np.isin(cs, tapered)])
    return reports, lines, explained


def _name_tree(topo, flagged, masks, n):
    """A tree: a slow uplink high in the tree makes the uplinks below it look slow too (most
    of their crossing runs go on through it): the highest one is named; two leaves' uplinks
    under one parent carry the same runs: the path between them is named."""
    names_flagged = {r.switch for r in flagged}
    flagged = [r for r in flagged
               if not any(a in names_flagged for a in topo.path(r.switch)[1:])]
    lines: list[str] = []
    done: set[str] = set()
    explained = np.zeros(n, dtype=bool)
    for r in flagged:
        if r.switch in done:
            continue
        r.suspect = True
        mine = masks[(r.kind, r.name)]
        twin = next((o for o in flagged if o.switch != r.switch and o.switch not in done
                     and np.array_equal(masks[(o.kind, o.name)], mine)), None)
        if twin is not None:  # two leaves under one parent: the path between them
            r.name = twin.name = f"{r.switch}<->{twin.switch}"
            r.label = twin.label = f"uplink {r.name}"
            twin.suspect = True
            done.add(twin.switch)
            lines.append(r.line(f" and {twin.switch}"))
        else:
            lines.append(r.line())
        done.add(r.switch)
        explained |= mine
    return lines, explained


def _name_links(table, flagged, masks, ok, center, cut):
    """Any shape: the link whose crossing runs are the most uniformly slow first; a flagged
    link whose slow runs that one explains is not named for them; links crossed by exactly
    the same runs cannot be told apart and are named together."""
    x = np.full(len(table), np.inf)
    if center:
        x[ok] = np.log(table.value[ok] / center)
    order = sorted(flagged, key=lambda r: (-r.slow, -_weight(r), r.name))
    explained = np.zeros(len(table), dtype=bool)
    lines: list[str] = []
    for r in order:
        mine = masks[(r.kind, r.name)]
        if _one_node_explains(table, mine, x - math.log(r.expected), cut):
            continue
        slow_runs = mine & ok & (x < cut)
        left = slow_runs & ~explained
        if slow_runs.sum() and left.sum() < (1 - SLOW_SHARE) * slow_runs.sum():
            continue  # what made it look slow is already named
        twins = [o for o in order if o is not r and not o.suspect
                 and np.array_equal(masks[(o.kind, o.name)], mine)]
        r.suspect = True
        if twins:
            for o in twins:
                o.suspect = True
            kinds = {r.kind, *(o.kind for o in twins)}
            names = " or ".join([r.name, *(o.name for o in twins)])
            r.label = (f"{r.kind} {names} (cannot tell which)" if len(kinds) == 1
                       else " or ".join([r.label, *(o.label for o in twins)]))
            wheres = list(dict.fromkeys(x for o in (r, *twins) for x in o.inside_of.split(
                " and ") if x))
            r.inside_of = " and ".join(wheres)
        lines.append(r.line())
        explained |= mine
    return lines, explained


def link_round(index: int, table: RunTable, topo: Topology, reports: list[UplinkReport],
               seed: int | None, max_nodes: int = 1024) -> Round | None:
    """Beyond a tree: pairs across the links that have slow crossing runs but too few to be
    named (a small fabric's random matchings cross each of its many links a few times), each
    with partners not yet in its slow runs, so that the link is told from the nodes; None
    when no link needs it (or the sweep is too large for this round: the screening's own
    runs are then enough)."""
    if topo.shape == "tree" or len(table.nodes) > max_nodes:
        return None
    todo = [r for r in reports if not r.suspect and r.slow
            and r.crossing < (4 if r.bundle else 2) * MIN_CROSSING]
    if not todo:
        return None
    where = topo.switch_of()
    nodes = [n for n in table.nodes if n in where]
    pos = {n: i for i, n in enumerate(table.nodes)}
    rng = np.random.default_rng(seed)
    used: set[int] = set()
    a_out, b_out = [], []
    for r in sorted(todo, key=lambda r: (r.ratio or 1.0, r.name)):
        cands = [(a, b) for a in nodes for b in nodes
                 if a != b and pos[a] not in used and pos[b] not in used
                 and any(h.name == r.name and h.kind == r.kind for h in topo.route(a, b))]
        rng.shuffle(cands)
        for a, b in cands[:3]:
            if pos[a] in used or pos[b] in used:
                continue
            used |= {pos[a], pos[b]}
            a_out.append(pos[a])
            b_out.append(pos[b])
    if not a_out:
        return None
    return Round(index=index, kind="extra", a=np.array(a_out, dtype=np.int64),
                 b=np.array(b_out, dtype=np.int64), names=table.nodes,
                 reason=f"pairs across {len(todo)} links with slow runs, to tell a link "
                        "from its nodes")


def uplink_regions(topo: Topology | None, nodes: list[str],
                   reports: list[UplinkReport]) -> np.ndarray | None:
    """Per node, the region of the suspect links it is in, so that two nodes of one region
    run across no suspect: a tree's suspect uplink splits the nodes below it from the rest;
    in other shapes each leaf is a region. None when no link is a suspect."""
    suspects = [r for r in reports if r.suspect]
    if topo is None or not suspects:
        return None
    if topo.shape != "tree":
        return leaf_index(topo, nodes)[1]
    out = np.full(len(nodes), -1, dtype=np.int64)
    for i, r in enumerate(suspects):
        out[below_mask(topo, nodes, r.switch)] = i
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
    has evidence no link explains (None when no switch has two nodes in the sweep, or when
    screening already paired every node with one of its own switch: 4 nodes screen every
    pair)."""
    names, leaf = leaf_index(topo, table.nodes)
    rng = np.random.default_rng(seed)
    inside = np.zeros(len(table.nodes), dtype=bool)
    same = leaf[table.src] == leaf[table.dst]
    inside[table.src[same]] = inside[table.dst[same]] = True
    a_out, b_out = [], []
    for s in range(len(names)):
        members = np.flatnonzero(leaf == s)
        if members.size < 2 or inside[members].all():
            continue
        members = rng.permutation(members)
        half = members.size // 2
        a_out += members[:half].tolist()
        b_out += members[half:2 * half].tolist()
    if not a_out:
        return None
    return Round(index=index, kind="extra", a=np.array(a_out, dtype=np.int64),
                 b=np.array(b_out, dtype=np.int64), names=table.nodes,
                 reason="pairs inside each switch, to tell a link from its nodes")


def report_lines(reports: list[UplinkReport]) -> list[str]:
    """The per-link table of the text output."""
    if not reports:
        return []
    width = max(20, *(len(r.name) for r in reports))
    out = ["per uplink (runs crossing it, and runs between the nodes below it; ratio = median / "
           "level)",
           f"{'uplink':<{width}} {'crossing':>8} {'slow':>5} {'ratio':>6} {'inside':>6} "
           f"{'ratio':>6}  status"]
    for r in reports:
        def f(v):
            return "-" if v is None else f"{v:.2f}"
        name = r.name if r.kind == "uplink" else f"{r.name} ({r.kind})"
        out.append(f"{name:<{width}} {r.crossing:>8} {r.slow:>5} {f(r.ratio):>6} "
                   f"{r.inside:>6} {f(r.inside_ratio):>6}  {'suspect' if r.suspect else 'ok'}")
    return out


# --- options of fabric-sweep ------------------------------------------------------------


def add_options(ap) -> None:
    g = ap.add_argument_group("topology")
    g.add_argument("--topology", metavar="FILE|slurm",
                   help="which switch each node hangs from: a topology.conf (tree or block), "
                        "the output of `scontrol show topology`, our own file (SWITCH: NODES "
                        "parent=SWITCH), or `slurm` to ask scontrol; the sweep then reports per "
                        "link and names a slow link as such")
    g.add_argument("--routing", choices=("dmodk",),
                   help="the fabric's routing rule, so that a run's links can be told on a fat "
                        "tree or a dragonfly: dmodk (InfiniBand's destination-mod-k: parent "
                        "i mod k, i the destination's position in name order); default: not "
                        "known (a leaf's uplinks, a group pair's global links as bundles)")
    g.add_argument("--sim-slow-uplink", action="append", default=[], metavar="SWITCH=FACTOR",
                   help="simulation: runs crossing SWITCH's uplink, or the link or bundle as "
                        "the sweep names it (s0<->s4, g1s1<->g2s1), at most at FACTOR (repeat)")


def load(args, names: list[str]):
    """(the topology or None, {switch or link: factor} of the simulation); UsageError when
    the options cannot apply, before any run."""
    from ..topology_source import TopologyError, read_topology
    from .options import UsageError

    if args.sim_slow_uplink and not args.topology:
        raise UsageError("--sim-slow-uplink needs --topology")
    if args.routing and not args.topology:
        raise UsageError("--routing needs --topology")
    if args.sim_slow_uplink and args.launcher != "sim":
        raise UsageError("--sim-slow-uplink needs --launcher sim")
    if not args.topology:
        return None, {}
    try:
        topo = read_topology(args.topology, routing=args.routing)
    except TopologyError as err:
        raise UsageError(str(err)) from None
    where = topo.switch_of()
    if not any(n in where for n in names):
        raise UsageError(f"--topology {args.topology} places none of the swept nodes")
    slow: dict[str, float] = {}
    for spec in args.sim_slow_uplink:
        sw, _, f = spec.rpartition("=")
        try:
            factor = float(f)
        except ValueError:
            factor = -1.0
        if not sw or not 0 < factor <= 1:
            raise UsageError(f"--sim-slow-uplink {spec}: expected SWITCH=FACTOR, 0 < FACTOR "
                             "<= 1")
        if sw in topo.switches and not topo.switches[sw].parents:
            raise UsageError(f"--sim-slow-uplink {spec}: {sw} is not a switch with an uplink "
                             "in the topology")
        try:
            crossing(topo, names, sw)
        except ValueError as err:
            raise UsageError(f"--sim-slow-uplink {spec}: {err}") from None
        slow[sw] = factor
    return topo, slow

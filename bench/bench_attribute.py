#!/usr/bin/env python3
"""`fabric-report attribute` on a fat tree with destination-mod-k routing, by size.

    python bench/bench_attribute.py [--sizes 1000,10000,100000] [--baseline-sizes 1000,2000]

Each size: a two-level fat tree (32 nodes a leaf, 8 spines over every leaf), 6 bisection
cases over every node (3 failed) and 10 failed pair cases sharing one node, attributed with
`--routing dmodk`. CPU seconds per size, and as ratios:

* against the previous way (one route per source leaf x destination (leaf, residue) key, for
  every case, no cache; its residues were the lcm of every switch's parent and child counts,
  so the key was the node itself: kept here as the baseline), measured in the same run on the
  baseline sizes, with the same answer checked;
* the growth from one size to the next against the growth in nodes (1.0 = linear).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fabrictest.parsers.topology import parse_scontrol_topology  # noqa: E402
from fabrictest.parsers.topology_model import natural  # noqa: E402
from fabrictest.report.attribute import failures as attr  # noqa: E402
from fabrictest.report.attribute.failures import Case, attribute  # noqa: E402


def fat_tree(n: int, per: int = 32, spines: int = 8):
    leaves = (n + per - 1) // per
    text = "".join(f"SwitchName=sw{k} Nodes=nid[{k * per:06d}-{min(n, (k + 1) * per) - 1:06d}]\n"
                   for k in range(leaves))
    text += "".join(f"SwitchName=sp{j} Switches=sw[0-{leaves - 1}]\n" for j in range(spines))
    return parse_scontrol_topology(text).configured(routing="dmodk")


def cases_of(topo) -> list[Case]:
    nodes = sorted(topo.switch_of(), key=natural)
    cases = [Case(f"Bisection {i}", i % 2 == 0, nodes=nodes) for i in range(6)]
    return cases + [Case(f"Pair {i}", True, nodes=[nodes[3], nodes[100 + i]])
                    for i in range(10)]


class OldFinder:
    """The previous `Topology.elements_among` (578d212), for the baseline."""

    def __init__(self, topo):
        self.topo, self.where = topo, topo.switch_of()

    def route(self, a, b):
        return self.topo.route(a, b)

    def elements(self, nodes):
        topo, where, idx = self.topo, self.where, self.topo.index()
        inside = [n for n in dict.fromkeys(nodes) if n in where]
        m = topo.residues()
        if m > 64:
            m = max(len(idx), 1)
        leaves = sorted({where[n] for n in inside}, key=natural)
        targets: dict[tuple[str, int], str] = {}
        for n in inside:
            targets.setdefault((where[n], idx[n] % m), n)
        out = set()
        for la in leaves:
            for (lb, _r), b in targets.items():
                if lb != la:
                    out.update(topo.route(next(n for n in topo.switches[la].nodes
                                               if n in where), b))
        return out


def timed(topo, cases, finder=None):
    saved = attr.HopFinder
    if finder is not None:
        attr.HopFinder = finder
    try:
        t0 = time.process_time()
        res = attribute(cases, topo)
        return time.process_time() - t0, res.lines
    finally:
        attr.HopFinder = saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--baseline-sizes", default="1000,2000")
    args = ap.parse_args(argv)
    print("attribute --routing dmodk on a two-level fat tree (32 nodes a leaf, 8 spines), "
          "16 cases (6 over every node)")
    ok = True
    for n in [int(x) for x in args.baseline_sizes.split(",") if x]:
        topo = fat_tree(n)
        cases = cases_of(topo)
        new, lines = timed(topo, cases)
        old, old_lines = timed(topo, cases, OldFinder)
        same = lines == old_lines
        ok &= same
        print(f"{n:>7} nodes: previous way {old:8.2f} s CPU, now {new:6.3f} s: "
              f"{old / max(new, 1e-9):7.1f}x faster; same answer: {'yes' if same else 'NO'}")
    prev = None
    for n in [int(x) for x in args.sizes.split(",") if x]:
        topo = fat_tree(n)
        secs, lines = timed(topo, cases_of(topo))
        growth = ""
        if prev is not None:
            growth = (f"; time x{secs / max(prev[1], 1e-9):.1f} for nodes x{n / prev[0]:.0f} "
                      f"({secs / max(prev[1], 1e-9) / (n / prev[0]):.2f} of linear)")
        print(f"{n:>7} nodes: {secs:6.2f} s CPU{growth}; {lines[0][:60]}")
        prev = (n, secs)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

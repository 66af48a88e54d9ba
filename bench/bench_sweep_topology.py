#!/usr/bin/env python3
"""The sweep with a topology at scale: one slow group uplink among groups of leaf switches.

    python bench/bench_sweep_topology.py [--nodes 100000] [--sigma 0.1] [--trials 3]

N nodes, 64 per leaf switch, 16 leaves per group, the groups under one global switch (a
tree standing in for dragonfly groups: a group's uplink carries its global traffic); one
group's uplink at `--factor` (0.5) and 1 % of the nodes slow at 0.5x (half both directions, a
quarter sending only, a quarter receiving only). Each trial runs the real scheduler and
verdict with `--max-rounds 4` and scores what is named: the slow uplink (and nothing else of
the topology) and the node-directions (precision, recall). Baseline, same trials: the sweep
without the topology, which cannot name the uplink and names the nodes behind it instead
(its false node-directions are printed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fabrictest.parsers.topology import parse_topology_file  # noqa: E402
from fabrictest.sweep.core import run_sweep  # noqa: E402
from fabrictest.sweep.simulate import SimulatedRunner  # noqa: E402


def topology(n: int, per_leaf: int, leaves_per_group: int):
    nodes = [f"nid{i:06d}" for i in range(n)]
    leaves = (n + per_leaf - 1) // per_leaf
    lines = [f"sw{k + 1}: nid[{k * per_leaf:06d}-{min(n, (k + 1) * per_leaf) - 1:06d}] "
             f"parent=g{k // leaves_per_group}" for k in range(leaves)]
    groups = (leaves + leaves_per_group - 1) // leaves_per_group
    lines += [f"g{g}: parent=global" for g in range(groups)]
    return nodes, parse_topology_file("\n".join(lines) + "\n"), groups


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--sigma", type=float, default=0.1)
    ap.add_argument("--factor", type=float, default=0.5)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--max-rounds", type=int, default=4)
    args = ap.parse_args()
    nodes, topo, groups = topology(args.nodes, 64, 16)
    print(f"{args.nodes} nodes, {len(topo.leaves())} leaf switches in {groups} groups; one group "
          f"uplink at {args.factor}x, 1 % slow nodes at 0.5x; sigma {args.sigma}; at most "
          f"{args.max_rounds} rounds")
    print(f"{'trial':>5} {'rounds':>6} {'uplink':>7} {'precision':>9} {'recall':>7} "
          f"{'false':>5} {'missed':>6} {'sim s':>6} {'base false':>10}")
    ok = True
    for t in range(args.trials):
        rng = np.random.default_rng(1000 + t)
        group = int(rng.integers(groups))
        slow, truth = {}, set()
        for i, b in enumerate(rng.choice(args.nodes, size=args.nodes // 100,
                                         replace=False).tolist()):
            kind = ("both", "both", "send", "receive")[i % 4]
            slow[nodes[b]] = (0.5 if kind != "receive" else 1.0, 0.5 if kind != "send" else 1.0)
            truth |= {(nodes[b], d) for d in (("send", "receive") if kind == "both"
                                              else (kind,))}
        t0 = time.monotonic()
        sim = SimulatedRunner(nodes, sigma=args.sigma, slow=slow, seed=t, topology=topo,
                              slow_uplinks={f"g{group}": args.factor})
        res = run_sweep(nodes, sim, seed=t, topology=topo, max_rounds=args.max_rounds,
                        with_table=False)
        secs = time.monotonic() - t0
        uplinks = [s for s in res.suspects if s.startswith("uplink ")]
        named = res.suspect_sides()
        tp = len(named & truth)
        prec = tp / len(named) if named else 1.0
        rec = tp / len(truth)
        base = run_sweep(nodes, SimulatedRunner(nodes, sigma=args.sigma, slow=slow, seed=t,
                                                topology=topo,
                                                slow_uplinks={f"g{group}": args.factor}),
                         seed=t, max_rounds=args.max_rounds, with_table=False)
        base_false = len(base.suspect_sides() - truth)
        right = uplinks == [f"uplink g{group}<->global"]
        ok &= right and prec >= 0.99 and rec >= 0.99
        print(f"{t:>5} {len(res.rounds):>6} {'named' if right else 'MISSED':>7} {prec:>9.4f} "
              f"{rec:>7.4f} {len(named - truth):>5} {len(truth - named):>6} {secs:>6.1f} "
              f"{base_false:>10}")
    print(f"goal (uplink named within {args.max_rounds} rounds, precision and recall >= 0.99): "
          f"{'met' if ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

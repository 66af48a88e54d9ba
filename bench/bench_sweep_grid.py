#!/usr/bin/env python3
"""The sweep's decision at every size (issue 41 item 1): a grid of cluster sizes, fault
shares, slow factors and noise, several seeds each, scored as the issue asks:

* `exit 0 missed`: sweeps that said `suspects: none` (exit 0) with a slow node unnamed;
* `recall`: of the truly slow node-directions, the share named (suspect or cluster-wide);
* `false`: named node-directions that are healthy, over all healthy node-directions;
* `rounds`: the most any seed used.

    python bench/bench_sweep_grid.py [--sizes 2,3,4,8,16,64,1024,10000,100000] [--seeds 10]

Shares: `none` (a healthy cluster: `not0` counts the sweeps that did not exit 0, `exit3`
those that said only what they cannot decide), `one` node, `1%`, `half`, `most` (all but 3 slow; at N <= 4 all but 1). Faults as
bench_sweep.py draws them (half both directions, a quarter sending only, a quarter
receiving only; one node: both). At 2 nodes only the exit status is scored (one pair cannot
tell which node is slow). The goals: no exit 0 with a slow node unnamed, recall 1.0
at <= 0.7x, false share <= 1e-4, the 0.5x 1% case at 100,000 nodes in <= 4 rounds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fabrictest.sweep.core import run_sweep  # noqa: E402
from fabrictest.sweep.simulate import SimulatedRunner  # noqa: E402

SHARES = ("none", "one", "1%", "half", "most")


def slow_count(n: int, share: str) -> int:
    if share == "none":
        return 0
    if share == "one":
        return 1
    if share == "1%":
        return max(1, round(n / 100))
    if share == "half":
        return n // 2
    return max(1, n - (3 if n > 4 else 1))


def faults(n: int, k: int, factor: float, rng):
    bad = rng.choice(n, size=k, replace=False)
    slow, truth = {}, set()
    for i, b in enumerate(bad.tolist()):
        name = f"nid{b:06d}"
        kind = "both" if k == 1 else ("both", "both", "send", "receive")[i % 4]
        slow[name] = (factor if kind != "receive" else 1.0, factor if kind != "send" else 1.0)
        truth |= {(name, s) for s in (("send", "receive") if kind == "both" else (kind,))}
    return slow, truth


def one(n, share, factor, sigma, seed):
    rng = np.random.default_rng(seed)
    nodes = [f"nid{i:06d}" for i in range(n)]
    slow, truth = faults(n, slow_count(n, share), factor, rng)
    runner = SimulatedRunner(nodes, sigma=sigma, slow=slow, seed=seed + 1)
    res = run_sweep(nodes, runner, seed=seed + 2, with_table=False)
    named = res.suspect_sides()
    return {"exit0_missed": int(res.verdict.healthy and bool(truth)),
            "not0": int(not res.verdict.healthy), "exit3": int(res.verdict.undecidable),
            "tp": len(named & truth), "truth": len(truth), "fp": len(named - truth),
            "healthy_sides": 2 * n - len(truth), "rounds": len(res.rounds)}


def cell(n, share, factor, sigma, seeds):
    out = [one(n, share, factor, sigma, 1000 * s + 17) for s in range(seeds)]
    tot = {k: sum(o[k] for o in out) for k in out[0]}
    return {"exit0_missed": tot["exit0_missed"], "not0": tot["not0"], "exit3": tot["exit3"],
            "recall": tot["tp"] / tot["truth"] if tot["truth"] else 1.0,
            "false": tot["fp"] / tot["healthy_sides"] if tot["healthy_sides"] else 0.0,
            "rounds": max(o["rounds"] for o in out)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2,3,4,8,16,64,1024,10000,100000")
    ap.add_argument("--shares", default=",".join(SHARES))
    ap.add_argument("--factors", default="0.5,0.7")
    ap.add_argument("--sigmas", default="0.05,0.1")
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args(argv)
    print(f"{'N':>7} {'share':>5} {'factor':>6} {'sigma':>5} {'exit0 missed':>12} "
          f"{'recall':>7} {'false':>9} {'rounds':>6} {'exit3':>5} {'not0':>4}  goal")
    failed = 0
    t0 = time.monotonic()
    for n in [int(x) for x in args.sizes.split(",")]:
        for share in args.shares.split(","):
            if share == "1%" and n < 100:
                continue  # the same as one node
            for factor in [float(x) for x in args.factors.split(",")]:
                for sigma in [float(x) for x in args.sigmas.split(",")]:
                    if share == "none" and factor != float(args.factors.split(",")[0]):
                        continue  # no slow node: the factor does not matter
                    c = cell(n, share, factor, sigma, args.seeds)
                    # 2 nodes: one pair cannot tell which node is slow (`slow pair`,
                    # `undecidable`): only the exit status is scored
                    # a healthy cluster (`none`) exits 0 in every seed from 3 nodes up
                    ok = (c["exit0_missed"] == 0 and c["false"] <= 1e-4
                          and not (share == "none" and n > 2 and c["not0"])
                          and (factor > 0.7 or c["recall"] == 1.0 or n == 2)
                          and not (n == 100000 and share == "1%" and factor == 0.5
                                   and c["rounds"] > 4))
                    failed += not ok
                    print(f"{n:>7} {share:>5} {factor:>6g} {sigma:>5g} "
                          f"{c['exit0_missed']:>8}/{args.seeds:<3} {c['recall']:>7.4f} "
                          f"{c['false']:>9.2e} {c['rounds']:>6} {c['exit3']:>5} {c['not0']:>4}  "
                          f"{'met' if ok else 'MISSED'}",
                          flush=True)
    print(f"{failed} cells missed the goal; {time.monotonic() - t0:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

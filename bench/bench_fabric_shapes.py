#!/usr/bin/env python3
"""The field's shapes on the real vcluster: each verdict 5 of 5, and the acceptance's cost.

    sudo .venv/bin/python bench/bench_fabric_shapes.py [--runs 5] [--shapes fat-tree:4x2,dragonfly:2x2]
                                                       [--acceptance 8,16] [--no-verdicts]

Verdicts (8 nodes per shape, one cluster per shape, the vcluster lock held while it is up):
per shape, `--runs` sweeps of each case, with `fabric-report attribute --sweep` on the
degraded link's:

* a degraded link at 50mbit (fat tree: leaf1<->spine1, `--topology slurm --routing dmodk`;
  dragonfly: the global link g1s1<->g2s1, `--topology etc/fabric.topology`): the sweep's only
  suspect is that link, and attribute's suspect is that link;
* healthy: `suspects: none`;
* node03 degraded to 100mbit: the sweep's only suspect is node03 (with the topology given).

Acceptance cost (the Slingshot acceptance notes' procedure as the suite runs it, on the
notes' 2 groups of 2 switches, `--dragonfly 2x2` with N nodes): `vcluster up`, the node sets
derived from Slurm's topology, `reframe` with the families the notes' steps map to (OSU
mbw_mr per switch/group/global where OSU is built, bisection, the sweep; quick sizes), then
`fabric-sweep --topology` and `fabric-report attribute`. Each step's wall time is printed.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LOCK = Path("/run/lock/fabrictest-vcluster-pytest.lock")
LINKS = {"fat-tree": (("leaf1", "spine1"), "uplink leaf1<->spine1"),
         "dragonfly": (("g1s1", "g2s1"), "global link g1s1<->g2s1")}


def sh(cmd, env=None, timeout=900, cwd=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=cwd)


class Cluster:
    def __init__(self, shape: str, nodes: int, work: Path):
        self.kind, self.counts = shape.split(":")
        self.nodes = nodes
        self.state = work / f"{self.kind}-{nodes}" / "state"
        self.lock = None

    def vc(self, *args, check=True):
        p = sh([str(BIN / "vcluster"), "--state-dir", str(self.state), *args])
        if check and p.returncode != 0:
            raise SystemExit(f"vcluster {' '.join(args)}: {p.stderr.strip()}")
        return p

    def __enter__(self):
        LOCK.parent.mkdir(parents=True, exist_ok=True)
        self.lock = open(LOCK, "w")  # noqa: SIM115 - held for the cluster's life
        fcntl.flock(self.lock, fcntl.LOCK_EX)
        t0 = time.monotonic()
        self.vc("up", f"--{self.kind}", self.counts, "--nodes", str(self.nodes))
        self.up_s = time.monotonic() - t0
        self.env = dict(os.environ)
        for line in (self.state / "env.sh").read_text().splitlines():
            m = re.match(r"export (\w+)=(.*)$", line)
            if m:
                self.env[m.group(1)] = m.group(2).strip("'")
        return self

    def __exit__(self, *exc):
        self.vc("down", check=False)
        self.lock.close()

    def topology(self) -> list[str]:
        if self.kind == "fat-tree":
            return ["--topology", "slurm", "--routing", "dmodk"]
        return ["--topology", str(self.state / "etc" / "fabric.topology")]

    def sweep(self, name: str, seed: int) -> tuple[list[str], Path, float]:
        out = self.state.parent / f"{name}.json"
        t0 = time.monotonic()
        p = sh(["salloc", "--partition=vc", f"--nodes={self.nodes}", "--exclusive",
                "--no-kill", "--time=15", str(BIN / "fabric-sweep"), "--launcher", "slurm",
                "--seed", str(seed), "--nmsg", "300", "--pair-timeout", "40", "--json",
                str(out), "--no-pairs", "-q", *self.topology()], env=self.env)
        secs = time.monotonic() - t0
        lines = (p.stdout.split("\nverdict:\n", 1)[1].splitlines() if "\nverdict:\n" in p.stdout
                 else [f"(no verdict, exit {p.returncode}: {p.stderr.strip()[-200:]})"])
        return lines, out, secs

    def attribute(self, js: Path) -> str:
        p = sh([str(BIN / "fabric-report"), "attribute", "--sweep", str(js), *self.topology()],
               env=self.env)
        return (p.stdout.splitlines() or [p.stderr.strip()])[0]


def verdicts(shape: str, runs: int, work: Path) -> bool:
    ends, name = LINKS[shape.split(":")[0]]
    ok = True
    with Cluster(shape, 8, work) as c:
        print(f"\n{shape}, 8 nodes (up in {c.up_s:.1f} s)")
        print(f"{'case':<16} {'run':>3} {'s':>5}  {'right':<5} verdict / attribute")
        cases = (("degraded link", lambda: c.vc("degrade-link", *ends, "50mbit"),
                  lambda: c.vc("degrade-link", *ends, "none"), f"suspect: {name}: "),
                 ("healthy", lambda: None, lambda: None, "suspects: none"),
                 ("degraded node", lambda: c.vc("degrade", "node03", "100mbit"),
                  lambda: c.vc("restore", "node03"), "suspect: node03 "))
        for case, before, after, want in cases:
            good = 0
            for r in range(runs):
                before()
                try:
                    lines, js, secs = c.sweep(f"{case.replace(' ', '-')}-{r}", seed=100 + r)
                finally:
                    after()
                right = len(lines) == 1 and lines[0].startswith(want)
                said = ""
                if case == "degraded link":
                    said = c.attribute(js)
                    right = right and said.startswith(f"suspect: {name}: ")
                good += right
                print(f"{case:<16} {r + 1:>3} {secs:5.1f}  {'yes' if right else 'NO':<5} "
                      f"{lines[0][:110]}" + (f"\n{'':<33}{said[:110]}" if said else ""))
            print(f"{case}: {good} of {runs}")
            ok &= good == runs
    return ok


def acceptance(nodes: int, work: Path) -> None:
    with Cluster("dragonfly:2x2", nodes, work) as c:
        steps = [("vcluster up --dragonfly 2x2", c.up_s)]
        t0 = time.monotonic()
        code = ("from fabrictest.topology_source import read_topology; "
                "from fabrictest.parsers.node_sets import derive_node_sets; "
                "d = derive_node_sets(read_topology('slurm')); "
                "print({k: d.hostlist(k) for k in d.sets})")
        sets = sh([sys.executable, "-c", code], env=c.env).stdout.strip()
        steps.append(("node sets from Slurm's topology", time.monotonic() - t0))
        report = c.state.parent / "acceptance.json"
        env = {**c.env, "RFM_CONFIG_FILES": str(ROOT / "config/reframe/settings.py"),
               "RFM_REFERENCE_PREFIX": str(ROOT / "reference"),
               "FABRICTEST_RESULTS_DB": str(c.state.parent / "results.db"),
               "FABRICTEST_RFM_LOG": str(c.state.parent / "reframe.log")}
        t0 = time.monotonic()
        p = sh([str(BIN / "reframe"), "-c", str(ROOT / "reframe_tests"), "-r", "--system",
                "vcluster", "--prefix", str(c.state.parent / "rfm"), "--report-file",
                str(report), "-S", "size_profile=quick", "-S", "missing_reference=warn",
                "--exec-policy=serial", "-n", "OsuMbwMrTest|BisectionTest|SweepTest"],
               env=env, cwd=ROOT, timeout=3000)
        rfm_s = time.monotonic() - t0
        cases = ([tc for run in json.loads(report.read_text())["runs"]
                  for tc in run["testcases"]] if report.exists() else [])
        results = {}
        for tc in cases:
            results[tc["result"]] = results.get(tc["result"], 0) + 1
        steps.append((f"reframe: {len(cases)} cases {results or p.returncode}", rfm_s))
        lines, js, secs = c.sweep("acceptance-sweep", seed=7)
        steps.append((f"fabric-sweep --topology: {lines[0][:40]}", secs))
        t0 = time.monotonic()
        said = c.attribute(js)
        steps.append((f"fabric-report attribute --sweep: {said[:40]}", time.monotonic() - t0))
    total = sum(s for _n, s in steps)
    print(f"\nacceptance on --dragonfly 2x2, {nodes} nodes: {total:.0f} s in all; node sets "
          f"{sets}")
    for name, secs in steps:
        print(f"  {secs:7.1f} s  {name}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shapes", default="fat-tree:4x2,dragonfly:2x2")
    ap.add_argument("--acceptance", default="8,16", help="node counts ('' for none)")
    ap.add_argument("--no-verdicts", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (the vcluster)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-fabric-shapes-"))
    ok = True
    if not args.no_verdicts:
        for shape in args.shapes.split(","):
            ok &= verdicts(shape, args.runs, work)
    for n in [int(x) for x in args.acceptance.split(",") if x]:
        acceptance(n, work)
    print(f"\nwork files in {work}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

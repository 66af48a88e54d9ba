#!/usr/bin/env python3
"""What the counter snapshots cost a test on the vcluster (goal: <= 1 s per test).

A multi-node test takes two snapshots (before and after its launch), each one Slurm step of
one task per node running `fabric-health counters --out-dir` (reframe_tests/fabric_counters.py).
Inside one 4-node allocation this benchmark times, interleaved, `--repeat` such steps and as
many empty steps (`srun ... true`: the baseline, what any step costs), and prints the medians,
the ratio snapshot/empty step, the cost per test (2 snapshots) and the cost per test against the
1 s goal. Also one `fabric-health counters` on this host without srun (the reading alone).

Needs root and the vcluster lock (it brings a cluster up and down, as the vcluster tests do);
exits 2 with the reason where it cannot run.

usage: python bench/bench_counters.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 1.0
LOCK = "/run/lock/fabrictest-vcluster-pytest.lock"
NODES = 4

JOB = """#!/bin/bash
#SBATCH -N {nodes} --ntasks-per-node=1 --exclusive -o {out}/job.out -e {out}/job.err -t 10
step() {{ s=$(date +%s.%N); timeout 120 srun -n {nodes} -N {nodes} --ntasks-per-node=1 "$@" \
> /dev/null 2>&1; rc=$?; e=$(date +%s.%N); echo "$1 $rc $(echo "$e - $s" | bc)"; }}
for i in $(seq {repeat}); do
  step {health} counters --out-dir {out}/snap-$i >> {out}/times.txt
  step true >> {out}/times.txt
done
"""


def vcluster(state: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabrictest.vcluster.cli", "--state-dir",
                           str(state), *args], capture_output=True, text=True, timeout=timeout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if args.repeat < 1:
        print("bench_counters: --repeat must be >= 1", file=sys.stderr)
        return 2
    if os.geteuid() != 0 or shutil.which("sbatch") is None or shutil.which("bc") is None:
        print("bench_counters: needs root, Slurm (sbatch) and bc (scripts/install.sh)",
              file=sys.stderr)
        return 2
    health = Path(sys.executable).parent / "fabric-health"
    t0 = time.monotonic()
    subprocess.run([str(health), "counters", "--json"], capture_output=True, timeout=60)
    local_s = time.monotonic() - t0
    with tempfile.TemporaryDirectory(prefix="bench-counters-") as tmp:
        state, out = Path(tmp) / "state", Path(tmp) / "out"
        out.mkdir()
        lock = open(LOCK, "w")  # noqa: SIM115 - held until the end
        fcntl.flock(lock, fcntl.LOCK_EX)  # waits for the other vcluster users
        try:
            up = vcluster(state, "up", "--nodes", str(NODES))
            if up.returncode != 0:
                print(f"bench_counters: vcluster up failed: {up.stderr.strip()}",
                      file=sys.stderr)
                return 2
            env = dict(os.environ)
            for line in vcluster(state, "env").stdout.splitlines():
                words = shlex.split(line)
                if words[:1] == ["export"] and "=" in words[1]:
                    key, _, value = words[1].partition("=")
                    env[key] = value
            script = Path(tmp) / "job.sh"
            script.write_text(JOB.format(nodes=NODES, out=out, repeat=args.repeat,
                                         health=health))
            proc = subprocess.run(["sbatch", "--wait", str(script)], env=env,
                                  capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                print(f"bench_counters: the job failed: {proc.stderr.strip()} "
                      f"{(out / 'job.err').read_text() if (out / 'job.err').exists() else ''}",
                      file=sys.stderr)
                return 2
            rows = [line.split() for line in (out / "times.txt").read_text().splitlines()]
            snaps = sorted(out.glob("snap-*/*.json"))
        finally:
            vcluster(state, "down")
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
    failed = [r for r in rows if r[1] != "0"]
    snap = [float(r[2]) for r in rows if r[0] != "true" and r[1] == "0"]
    empty = [float(r[2]) for r in rows if r[0] == "true" and r[1] == "0"]
    if failed or not snap or not empty or len(snaps) != NODES * args.repeat:
        print(f"bench_counters: {len(failed)} steps failed, {len(snaps)} of "
              f"{NODES * args.repeat} snapshots written", file=sys.stderr)
        return 1
    s_med, e_med = statistics.median(snap), statistics.median(empty)
    per_test = 2 * s_med
    print(f"fabric-health counters on this host (no srun):  {local_s:.3f} s")
    print(f"snapshot step, {NODES} nodes (median of {len(snap)}): {s_med:.3f} s  "
          f"(all: {', '.join(f'{x:.2f}' for x in snap)})")
    print(f"empty step (srun true, baseline):            {e_med:.3f} s  "
          f"(all: {', '.join(f'{x:.2f}' for x in empty)})")
    print(f"snapshot / empty step:                       {s_med / e_med:.2f}x")
    print(f"cost per test (2 snapshots):                 {per_test:.3f} s = "
          f"{per_test / GOAL_S:.2f} of the {GOAL_S:g} s goal "
          f"({'met' if per_test <= GOAL_S else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

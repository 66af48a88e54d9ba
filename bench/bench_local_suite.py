#!/usr/bin/env python3
"""How long the users' main command takes on this machine: `reframe -c reframe_tests -r
--system local` (the suite issue 4 wanted under a minute on 2 cores), against a baseline
measured in the same run: `reframe --dry-run` of the same suite (ReFrame's own cost: loading,
setup, job scripts, no jobs). Optionally the OSU/IMB cases too (`--osu-home`, `--imb-home`).

Prints each wall time, the ratio run/dry-run (how much the jobs cost on top of ReFrame), and
the run against the 60 s goal. Repeats `--repeat` times, interleaved, and reports the medians:
a single timing on a shared 2-core machine varies several-fold with the load (printed too).

usage: python bench/bench_local_suite.py [--repeat 3] [--osu-home /opt/osu-7.4 --imb-home /opt/imb]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 60.0


def _reframe(args: list[str], env: dict, timeout: float) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="bench-local-") as tmp:
        cmd = [str(Path(sys.executable).with_name("reframe")), "-c", str(ROOT / "reframe_tests"),
               "--system", "local", "--prefix", f"{tmp}/rfm", "--perflogdir", f"{tmp}/perf",
               "--report-file", f"{tmp}/report.json", *args]
        env = {**env, "FABRICTEST_RESULTS_DB": f"{tmp}/results.db",
               "FABRICTEST_RFM_LOG": f"{tmp}/reframe.log"}
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return time.monotonic() - start, -1
        return time.monotonic() - start, proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--osu-home", default="")
    ap.add_argument("--imb-home", default="")
    ap.add_argument("--timeout", type=float, default=900, help="per reframe call (s)")
    args = ap.parse_args()
    if args.repeat < 1:
        print("bench_local_suite: --repeat must be >= 1", file=sys.stderr)
        return 2
    env = dict(os.environ, OSU_HOME=args.osu_home, IMB_HOME=args.imb_home,
               RFM_CONFIG_FILES=str(ROOT / "config" / "reframe" / "settings.py"))
    dry, run = [], []
    for i in range(args.repeat):
        load = os.getloadavg()[0]
        d, drc = _reframe(["--dry-run"], env, args.timeout)
        r, rrc = _reframe(["-r"], env, args.timeout)
        print(f"round {i + 1}: dry-run {d:.1f} s (rc {drc}), run {r:.1f} s (rc {rrc}), "
              f"load {load:.2f}")
        if drc != 0 or rrc != 0:
            print("bench_local_suite: a reframe call failed (rc above); timings not comparable",
                  file=sys.stderr)
            return 1
        dry.append(d)
        run.append(r)
    md, mr = statistics.median(dry), statistics.median(run)
    print(f"median dry-run {md:.1f} s, run {mr:.1f} s: run/dry-run {mr / md:.2f}x; "
          f"run/goal({GOAL_S:.0f} s) {mr / GOAL_S:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How long `fabric-report history` takes on a long record: N sessions x F figures (issue 27:
10,000 x 50 in under 30 s on 2 cores), and the change-point search against ruptures' own
PELT on the same series, measured in the same run.

    python bench/bench_history_scale.py [--sessions 10000 --figures 50 --baseline-sessions 1000]

Writes the sessions as ReFrame's stored sessions (`--describe-stored-sessions` JSON: one
test case per session, F figures in Gbps, 0.5 % noise, one figure 5 % down over its last 50
sessions), then times, each `--repeat` times (medians printed):

* `fabric-report history --report FILE` end to end (read, series, change points, verdict),
  in a subprocess, and checks its verdict: exit 1 naming the one stepped figure;
* the change points of one figure of `--baseline-sessions` sessions with
  `changepoints.pelt` and with ruptures' `Pelt(model="l2", min_size=2, jump=1)` (the
  baseline: what `history` ran before; it took 16 minutes for one figure of 10,000), their
  ratio, and that both find the same change points.

Prints the machine's load average beside each timing: the machine is shared.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from fabrictest.report.history import changepoints as cp  # noqa: E402

GOAL_S = 30.0


def sessions(n: int, figures: int, seed: int = 1) -> list[dict]:
    rng = np.random.default_rng(seed)
    start = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc).timestamp()
    values = 100.0 * (1 + 0.005 * rng.standard_normal((n, figures)))
    values[-50:, 0] *= 0.95  # figure 0: 5 % down over the last 50 sessions
    out = []
    for i in range(n):
        uuid = f"{i:08d}-0000-4000-8000-{i:012d}"
        when = start + 3600.0 * i
        pv = {f"sys:part:fig{k:02d}_gbps": [float(values[i, k]), None, None, None, "Gbps",
                                             "pass"] for k in range(figures)}
        tc = {"name": "BenchTest", "display_name": "BenchTest %scenario=scale",
              "system": "sys", "partition": "part", "environ": "env", "session_uuid": uuid,
              "job_completion_time_unix": when, "result": "pass", "job_nodelist": ["n01", "n02"],
              "perfvalues": pv}
        out.append({"session_info": {"uuid": uuid, "time_start_unix": when, "hostname": "h"},
                    "runs": [{"testcases": [tc]}]})
    return out


def time_history(path: Path) -> tuple[float, int, str]:
    exe = Path(sys.executable).with_name("fabric-report")
    start = time.monotonic()
    proc = subprocess.run([str(exe), "history", "--report", str(path)], capture_output=True,
                          text=True, timeout=3600)
    took = time.monotonic() - start
    return took, proc.returncode, (proc.stdout or proc.stderr).strip().splitlines()[-1]


def time_pelt(n: int, seed: int) -> tuple[float, float, bool]:
    import ruptures

    rng = np.random.default_rng(seed)
    x = 1 + 0.005 * rng.standard_normal(n)
    x[n // 2:] *= 0.95
    sig = x / cp.noise(x) / np.median(x)
    pen = cp.PENALTY * math.log(n)
    t0 = time.monotonic()
    ours = cp.pelt(sig, pen)
    t1 = time.monotonic()
    theirs = ruptures.Pelt(model="l2", min_size=cp.MIN_SEGMENT, jump=1).fit(
        sig.reshape(-1, 1)).predict(pen=pen)[:-1]
    t2 = time.monotonic()
    return t1 - t0, t2 - t1, ours == theirs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--figures", type=int, default=50)
    ap.add_argument("--baseline-sessions", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if min(args.sessions, args.figures, args.baseline_sessions, args.repeat) < 1 \
            or args.sessions < cp.MIN_SESSIONS:
        print(f"bench_history_scale: --sessions >= {cp.MIN_SESSIONS}, the others >= 1",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        path = Path(tmp) / "sessions.json"
        path.write_text(json.dumps(sessions(args.sessions, args.figures)))
        print(f"{args.sessions} sessions x {args.figures} figures "
              f"({path.stat().st_size / 1e6:.0f} MB of stored-session JSON)")
        runs, ok = [], True
        for i in range(args.repeat):
            load = os.getloadavg()[0]
            took, rc, last = time_history(path)
            runs.append(took)
            good = rc == 1 and "fig00_gbps" in last and "1 regressed" in last
            ok &= good
            print(f"  history run {i + 1}: {took:.1f} s (load {load:.1f}), exit {rc}: "
                  f"{'verdict right' if good else 'WRONG VERDICT: ' + last}")
        med = statistics.median(runs)
        print(f"history: median {med:.1f} s against the goal {GOAL_S:g} s: "
              f"{'met' if med < GOAL_S else 'MISSED'}")
    ours, theirs, same = [], [], True
    for i in range(args.repeat):
        a, b, s = time_pelt(args.baseline_sessions, seed=i)
        ours.append(a)
        theirs.append(b)
        same &= s
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"change points of one figure of {args.baseline_sessions} sessions: ours {a:.3f} s, "
          f"ruptures' Pelt {b:.2f} s (x{b / a:.0f}); same change points: {same}")
    return 0 if ok and same and med < GOAL_S else 1


if __name__ == "__main__":
    raise SystemExit(main())

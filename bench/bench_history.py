#!/usr/bin/env python3
"""Sensitivity of `fabric-report history`: is a 5 % step at session 12 of 20 found, in the right
place, and are 20 healthy sessions left alone?

    python bench/bench_history.py --reports 'LOGDIR/healthy*.json' [--draws 200]
    python bench/bench_history.py --noise 0.005,0.01,0.025 [--draws 200]
    python bench/bench_history.py --vcluster --log-dir DIR [--sessions 20 --step-at 12 --step 5]

Three ways, each printing a table:

* `--reports GLOB`: real healthy run reports (e.g. `bench_sensitivity.py --log-dir`'s
  healthy runs on the vcluster). Per figure, its healthy per-session values are the noise:
  each draw builds a series of `--sessions` by resampling them, then the same series with
  the figure `--step` % worse from session `--step-at` on. Columns: the figure's noise, the
  healthy series with any change point (false cps) and with a regression beyond the
  default tolerance (false exit 1), the stepped series whose change point is within one
  session of `--step-at` (placed) and that fail the gate (caught).
* `--noise LIST`: the same on normal noise of those relative spreads (no measurement).
* `--vcluster`: real sessions (root, the vcluster lock, a fresh vcluster): `--sessions` runs
  of the paired tx/rx test (`--test NAME` for others), node03's link `--step` % slower from session
  `--step-at` on (tc, as `vcluster degrade` shapes it); then `fabric-report history` on their
  run reports: the change points it names, and whether each is within one session. With
  `--healthy-sessions N`, N more healthy runs first, judged alone (false change points).

The method is fabrictest.report.history.changepoints (what `fabric-report history` runs); the
baseline is the truth the bench injected.
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from fabrictest.report.history import changepoints as cp  # noqa: E402
from fabrictest.report.history import figures as hist  # noqa: E402
from fabrictest.report.records.direction import LOWER, better  # noqa: E402
from fabrictest.report.records.results import PerfRecord, read_report_file  # noqa: E402

#: what `--vcluster` runs by default: the tx/rx test whose pairs cross node03's link
#: (node03 -> node01; paired/one runs node02 -> node01 and does not cross it)
HISTORY_TESTS = ["TxRxTest%scenario=paired%span=many%method=mpi%buffer=host"]


def _history(values, unit: str, pvar: str) -> hist.FigureHistory:
    recs = [PerfRecord("T", "T", "s", "p", "e", pvar, float(v), unit, session=f"s{i:03d}",
                       time=float(i)) for i, v in enumerate(values)]
    (h,) = hist.series(recs, {})
    return h


def score(pool: np.ndarray, unit: str, pvar: str, args, rng) -> dict:
    """Draws of healthy and stepped series resampled from `pool` (healthy values)."""
    worse = 1 + args.step / 100 if better(unit, pvar) == LOWER else 1 - args.step / 100
    false = alarms = placed = caught = 0
    for _ in range(args.draws):
        series = rng.choice(pool, size=args.sessions, replace=True)
        calm = hist.judge(_history(series, unit, pvar))
        false += bool(calm.changes)
        alarms += calm.status == "REGRESSED"
        stepped = series.copy()
        stepped[args.step_at - 1:] *= worse
        h = hist.judge(_history(stepped, unit, pvar))
        placed += any(abs(c.index - (args.step_at - 1)) <= 1 for c in h.changes)
        caught += h.status == "REGRESSED"
    return {"false": false, "alarms": alarms, "placed": placed, "caught": caught}


def row(name: str, noise: float, n: int, s: dict, draws: int) -> str:
    return (f"{name:60} {100 * noise:6.2f}% {n:4} {s['false']:4}/{draws:<4} "
            f"{s['alarms']:4}/{draws:<4} {s['placed']:4}/{draws:<4} {s['caught']:4}/{draws:<4}")


HEAD = (f"{'figure':60} {'noise':>7} {'n':>4} {'false cps':>9} {'false exit1':>11} "
        f"{'placed±1':>9} {'caught':>9}")


def from_reports(args) -> int:
    files = sorted(glob.glob(args.reports))
    if len(files) < 3:
        print(f"bench_history: --reports {args.reports}: {len(files)} files, 3 needed",
              file=sys.stderr)
        return 2
    per: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    units = {}
    for f in files:
        for r in read_report_file(f).records:
            if r.value is not None:
                per[(r.test, r.pvar)][r.session].append(r.value)
                units[(r.test, r.pvar)] = r.unit
    rng = np.random.default_rng(args.seed)
    print(f"{len(files)} healthy sessions; {args.draws} draws of {args.sessions} sessions, "
          f"step {args.step:g} % at session {args.step_at}")
    print(HEAD)
    totals = defaultdict(int)
    for key, sessions in sorted(per.items()):
        pool = np.array([float(np.median(v)) for v in sessions.values()])
        if len(pool) < 3 or not pool.any() or better(units[key], key[1]) is None:
            continue
        s = score(pool, units[key], key[1], args, rng)
        for k, v in s.items():
            totals[k] += v
        totals["n"] += args.draws
        print(row(f"{key[0][:40]} {key[1]}", cp.noise(list(pool)), len(pool), s, args.draws))
    print(f"all figures: false change points in {totals['false']} of {totals['n']} healthy "
          f"series (a false exit 1 in {totals['alarms']}); the step placed within ±1 in "
          f"{totals['placed']}, caught (exit 1) in {totals['caught']}")
    return 0


def from_noise(args) -> int:
    rng = np.random.default_rng(args.seed)
    print(f"normal noise; {args.draws} draws of {args.sessions} sessions, step {args.step:g} % "
          f"at session {args.step_at}")
    print(HEAD)
    for sigma in args.noise:
        pool = 100 * (1 + sigma * rng.standard_normal(5000))
        s = score(pool, "MB/s", "bw", args, rng)
        print(row(f"normal, spread {100 * sigma:g} %", sigma, len(pool), s, args.draws))
    return 0


def on_vcluster(args) -> int:
    import bench_sensitivity as bs

    lock = bs.take_lock(args.lock, args.lock_wait)
    up = False
    try:
        probe = bs.run(["vcluster", "status", "--json"], check=False)
        if probe.returncode == 0 and '"running"' in probe.stdout:
            raise bs.BenchError("a vcluster is already up: the bench needs a fresh one")
        print(f"load at start: {bs.loadavg()}", flush=True)
        up = True
        bs.run(["vcluster", "up"], timeout=600)
        env = bs.vcluster_env()
        info = json.loads(bs.run(["vcluster", "status", "--json"], env=env).stdout)
        rate = bs.degraded_rate(bs.parse_rate(info.get("default_rate")), args.step)
        workdir = Path(args.log_dir or tempfile.mkdtemp(prefix="bench-history-")).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        healthy = [_session(env, workdir, f"healthy{i + 1:02d}", args)
                   for i in range(args.healthy_sessions)]
        stepped = []
        for i in range(args.sessions):
            slow = i + 1 >= args.step_at
            if slow:
                bs.run(["vcluster", "degrade", args.node, rate], env=env)
            try:
                stepped.append(_session(env, workdir, f"step{i + 1:02d}", args))
            finally:
                if slow:
                    bs.run(["vcluster", "restore", args.node], env=env, timeout=600)
        print(f"load at end: {bs.loadavg()}", flush=True)
    except (bs.BenchError, subprocess.TimeoutExpired) as err:
        print(f"bench_history: {err}", file=sys.stderr)
        return 1
    finally:
        if up:
            bs.run(["vcluster", "down"], check=False, timeout=600)
        lock.close()
    if healthy:
        _judge("healthy", healthy, None, args)
    return _judge(f"-{args.step:g}% from session {args.step_at}", stepped, args.step_at, args)


def _session(env, workdir: Path, tag: str, args) -> str:
    report = workdir / f"{tag}.json"
    cmd = ["reframe", "-c", "reframe_tests", "-r", "--system", "vcluster",
           "-S", "size_profile=quick", "-S", "TxRxTest.nmsg=2000", "--exec-policy=serial",
           "--prefix", str(workdir / "rfm"), "--report-file", str(report),
           "--session-extras", f"bench=history,run={tag}"]
    for t in args.test or HISTORY_TESTS:
        cmd += ["-n", t]
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=args.run_timeout)
    (workdir / f"{tag}.log").write_text(p.stdout + p.stderr)
    print(f"{tag}: reframe exit {p.returncode}", flush=True)
    return str(report)


def _judge(label: str, reports: list[str], step_at: int | None, args) -> int:
    out = Path(reports[0]).parent / f"history-{label.split()[0]}.json"
    cmd = [str(Path(sys.executable).parent / "fabric-report"), "history", "--json", str(out)]
    for r in reports:
        cmd += ["--report", r]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(f"\n{label}: fabric-report history exit {p.returncode}")
    print(p.stdout + p.stderr)
    if not out.is_file():
        return 1
    for f in json.loads(out.read_text())["figures"]:
        idx = [c["index"] + 1 for c in f["change_points"]]
        where = ("" if step_at is None or not idx else
                 f", placed within ±1: {any(abs(i - step_at) <= 1 for i in idx)}")
        print(f"  {f['test'][:50]} {f['figure']}: change points at {idx or 'none'}, "
              f"{f['status']}{where}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reports", metavar="GLOB", help="real healthy run reports")
    ap.add_argument("--noise", help="relative spreads of normal noise, e.g. 0.005,0.01,0.025")
    ap.add_argument("--vcluster", action="store_true", help="real sessions on the vcluster")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--step-at", type=int, default=12)
    ap.add_argument("--step", type=float, default=5.0, help="%% worse (default 5)")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--healthy-sessions", type=int, default=0)
    ap.add_argument("--node", default="node03")
    ap.add_argument("--test", action="append", metavar="NAME",
                    help=f"with --vcluster: a test to run (repeat; default {HISTORY_TESTS[0]})")
    ap.add_argument("--log-dir")
    ap.add_argument("--lock", default="/run/lock/fabrictest-vcluster-pytest.lock")
    ap.add_argument("--lock-wait", type=float, default=1800)
    ap.add_argument("--run-timeout", type=float, default=600)
    args = ap.parse_args(argv)
    if sum(map(bool, (args.reports, args.noise, args.vcluster))) != 1:
        ap.exit(2, "bench_history: give one of --reports, --noise, --vcluster\n")
    if not (cp.MIN_SESSIONS <= args.sessions and 1 < args.step_at <= args.sessions
            and 0 < args.step < 100 and args.draws > 0):
        ap.exit(2, f"bench_history: --sessions >= {cp.MIN_SESSIONS}, 1 < --step-at <= "
                   "--sessions, 0 < --step < 100, --draws > 0\n")
    if args.noise:
        try:
            args.noise = [float(x) for x in args.noise.split(",")]
        except ValueError:
            ap.exit(2, f"bench_history: --noise {args.noise!r}: comma-separated numbers\n")
        return from_noise(args)
    if args.reports:
        return from_reports(args)
    return on_vcluster(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Regression sensitivity on the vcluster: which drop of one node's link do the references catch?

    python bench/bench_sensitivity.py [--healthy 5] [--drops 5,10,15,25,50] [--node node03]
                                      [--reference-dir DIR] [--log-dir DIR]

On a fresh vcluster (`vcluster up`; the bench refuses to start when one is already up), it
runs the multi-node tx/rx tests (paired one and many, pairs-of-three) and the bisection test
with ReFrame, as the vcluster references were measured (`-S size_profile=quick -S
TxRxTest.nmsg=2000 --exec-policy=serial`):

1. `--healthy` times on healthy links: every failure there is a false alarm;
2. once per drop, with `--node`'s link shaped to (100 - drop) % of the default rate
   (`vcluster degrade NODE RATE`; `vcluster restore NODE` between steps).

Per step it prints which tests failed, whether they were exactly the tests whose nodes include
`--node` (the tests crossing its link; in pairs-of-three a transmitting node shares the
receiver's link with another, so its stream only slows once its own link is below half the
receiver's), and at the end the smallest drop detected (a test
crossing the node failed, none other did) with zero false alarms in the healthy runs. The
machine load (/proc/loadavg) is printed at the start and at the end: the nodes share the
machine's cores, and a loaded machine widens the spread the references must tolerate.

It measures the references it is given: the repository's (`$RFM_REFERENCE_PREFIX`, else
reference/) or `--reference-dir DIR` (DIR/vcluster.yaml, e.g. one written by `fabric-report
calibrate` from K tagged runs). It takes the vcluster lock itself (`--lock`, waiting at most
`--lock-wait` s), and always leaves the cluster down. Needs root, like vcluster.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from fabrictest.references import reference_dir

ROOT = Path(__file__).resolve().parents[1]
LOCK = "/run/lock/fabrictest-vcluster-dev.lock"
#: the multi-node tests on 4 nodes (pairs-of-three/many needs 6 nodes and would skip)
TESTS = [
    "BisectionTest",
    "TxRxTest%scenario=paired%span=one%method=mpi%buffer=host",
    "TxRxTest%scenario=paired%span=many%method=mpi%buffer=host",
    "TxRxTest%scenario=pairs-of-three%span=one%method=mpi%buffer=host",
]
MEASURING = {t.split("%")[0] for t in TESTS}
#: the sizes the vcluster references were measured with
SIZES = ["-S", "size_profile=quick", "-S", "TxRxTest.nmsg=2000", "--exec-policy=serial"]
_RATE = re.compile(r"^\s*([0-9.]+)\s*([kmg]?)(bit|bps)?\s*$", re.IGNORECASE)


class BenchError(Exception):
    """One line: why the bench stopped."""


def parse_rate(text: str) -> float:
    """tc spelling ('200mbit', '1gbit') -> bits/s."""
    m = _RATE.match(str(text or ""))
    if not m:
        raise BenchError(f"cannot read the vcluster's default link rate {text!r}")
    bits = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    return bits * (8 if (m.group(3) or "bit").lower() == "bps" else 1)


def degraded_rate(default_bits: float, drop_pct: float) -> str:
    """The tc rate (kbit, exact enough) of a link `drop_pct` % slower than the default."""
    return f"{round(default_bits * (100 - drop_pct) / 100 / 1000)}kbit"


def outcome(report: dict, node: str) -> dict:
    """Of a ReFrame run report: tests that failed, that ran, and those whose nodes include
    `node` (crossing its link). The last attempt of each test case counts."""
    last: dict[str, dict] = {}
    for run in report.get("runs") or []:
        for tc in run.get("testcases") or []:
            last[tc.get("display_name") or tc.get("name", "?")] = tc
    failed, ran, crossing, reasons, broken = set(), set(), set(), {}, set()
    for name, tc in last.items():
        if tc.get("result") == "skip":
            continue
        if name.split(" ")[0] in MEASURING:  # not the binaries fixture (counted if it fails)
            ran.add(name)
        if node in (tc.get("job_nodelist") or []):
            crossing.add(name)
        if tc.get("result") != "pass":
            failed.add(name)
            if tc.get("fail_phase") != "performance":
                broken.add(name)  # a crash, hang or bad output: not a reference's verdict
            reasons[name] = " ".join((tc.get("fail_reason") or tc.get("fail_phase") or "")
                                     .split())
    return {"failed": failed - broken, "ran": ran, "crossing": crossing, "reasons": reasons,
            "broken": broken}


def smallest_detected(healthy: list[dict], steps: list[tuple[float, dict]]) -> str:
    """The verdict line: smallest drop caught exactly, given no false alarm when healthy."""
    broken = sum(len(r.get("broken", ())) for r in [*healthy, *(s for _d, s in steps)])
    note = (f" ({broken} run(s) failed for another reason than a reference: crash, hang or "
            "bad output; not counted)" if broken else "")
    return _verdict(healthy, steps) + note


def _verdict(healthy: list[dict], steps: list[tuple[float, dict]]) -> str:
    alarms = sum(len(h["failed"]) for h in healthy)
    if alarms:
        return (f"false alarms: {alarms} failure(s) in {len(healthy)} healthy runs: no drop "
                "can be called detected")
    caught = [d for d, s in steps if s["failed"] and s["failed"] <= s["crossing"]]
    exact = [d for d, s in steps if s["failed"] and s["failed"] == s["crossing"]]
    if not caught:
        return f"0 false alarms in {len(healthy)} healthy runs; no drop detected"
    line = (f"0 false alarms in {len(healthy)} healthy runs; smallest drop detected: "
            f"{min(caught):g} %")
    line += (f" (every test crossing the node failed from {min(exact):g} %)" if exact
             else " (never every test crossing the node)")
    return line


def short(name: str) -> str:
    """'TxRxTest %scenario=paired %span=one %method=mpi %buffer=host' -> 'txrx:paired/one'."""
    name = name.replace(" %", "%").replace("%method=mpi", "").replace("%buffer=host", "")
    return name.replace("TxRxTest%scenario=", "txrx:").replace("%span=", "/")


def step_line(label: str, res: dict, degraded: bool = True) -> str:
    """One row: the tests that failed and how they compare with those expected to fail (the
    tests crossing the slowed node; none on healthy links)."""
    failed = res["failed"]
    expected = res["crossing"] if degraded else set()
    if failed == expected:
        verdict = "exactly the crossing tests" if failed else "ok: none failed"
    else:
        parts = []
        if failed - expected:
            parts.append("false alarm: " + ",".join(sorted(map(short, failed - expected))))
        if expected - failed:
            parts.append("missed: " + ",".join(sorted(map(short, expected - failed))))
        verdict = "; ".join(parts)
    if res.get("broken"):
        verdict += "; run failed (not a reference): " + ",".join(sorted(map(short,
                                                                             res["broken"])))
    names = ",".join(sorted(map(short, failed))) or "-"
    return f"{label:14} {len(failed)}/{len(res['ran'])} failed  {names:70}  {verdict}"


# -- the real thing -----------------------------------------------------------------------
def run(cmd: list[str], env=None, timeout: float = 300, check: bool = True):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BenchError(f"{shlex.join(cmd)}: exit {p.returncode}: {tail[0]}")
    return p


def vcluster_env() -> dict:
    env = dict(os.environ)
    for line in run(["vcluster", "env"]).stdout.splitlines():
        m = re.match(r"^\s*export\s+(\w+)=(.*)$", line)
        if m:
            env[m.group(1)] = (shlex.split(m.group(2)) or [""])[0]
    return env


def reframe_once(env: dict, tag: str, workdir: Path, node: str, timeout: float) -> dict:
    report = workdir / f"{tag}.json"
    cmd = ["reframe", "-c", "reframe_tests", "-r", "--system", "vcluster", *SIZES,
           "--prefix", str(workdir / "rfm"), "--perflogdir", str(workdir / "perflogs"),
           "--report-file", str(report), "--session-extras", f"bench=sensitivity,step={tag}"]
    for t in TESTS:
        cmd += ["-n", t]
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=timeout)
    (workdir / f"{tag}.log").write_text(p.stdout + p.stderr)
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError) as err:
        raise BenchError(f"{tag}: reframe exit {p.returncode} left no run report ({err}); "
                         f"see {workdir / (tag + '.log')}") from err
    res = outcome(data, node)
    if not res["ran"]:
        raise BenchError(f"{tag}: no test ran (all skipped?); see {workdir / (tag + '.log')}")
    return res


def replay(args) -> int:
    """The table again from a --log-dir's run reports (no cluster needed)."""
    d = Path(args.replay)
    healthy, steps = [], []
    print(f"{'step':14} {'failed tests':82}  verdict")
    for i in range(1, args.healthy + 1):
        if (d / f"healthy{i}.json").is_file():
            healthy.append(outcome(json.loads((d / f"healthy{i}.json").read_text()), args.node))
            print(step_line(f"healthy {i}", healthy[-1], degraded=False))
    for drop in args.drops:
        path = d / f"drop{drop:g}.json"
        if path.is_file():
            steps.append((drop, outcome(json.loads(path.read_text()), args.node)))
            print(step_line(f"-{drop:g}%", steps[-1][1]))
    if not healthy:
        print(f"bench_sensitivity: --replay {d}: no healthy1.json", file=sys.stderr)
        return 1
    print(smallest_detected(healthy, steps))
    return 0


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def bench(args, workdir: Path) -> int:
    env = vcluster_env()
    info = json.loads(run(["vcluster", "status", "--json"], env=env).stdout)
    if args.node not in info.get("nodes", {}):
        raise BenchError(f"--node {args.node}: the vcluster has {', '.join(info['nodes'])}")
    default = parse_rate(info.get("default_rate"))
    healthy: list[dict] = []
    steps: list[tuple[float, dict]] = []
    print(f"{'step':14} {'failed tests':82}  verdict", flush=True)
    for i in range(args.healthy):
        res = reframe_once(env, f"healthy{i + 1}", workdir, args.node, args.run_timeout)
        healthy.append(res)
        print(step_line(f"healthy {i + 1}", res, degraded=False), flush=True)
    for drop in args.drops:
        rate = degraded_rate(default, drop)
        run(["vcluster", "degrade", args.node, rate], env=env)
        try:
            res = reframe_once(env, f"drop{drop:g}", workdir, args.node, args.run_timeout)
        finally:
            run(["vcluster", "restore", args.node], env=env, timeout=600)
        steps.append((drop, res))
        print(step_line(f"-{drop:g}% {rate}", res), flush=True)
    print()
    for drop, res in steps:
        for name in sorted(res["failed"]):
            print(f"  -{drop:g}% {short(name)}: {res['reasons'][name][:160]}")
    print(smallest_detected(healthy, steps))
    return 0


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--healthy", type=int, default=5, help="healthy runs (default 5)")
    ap.add_argument("--drops", default="5,10,15,25,50",
                    help="link slow-downs in %% of the default rate (default 5,10,15,25,50)")
    ap.add_argument("--node", default="node03", help="the node whose link is slowed")
    ap.add_argument("--reference-dir",
                    help="directory holding vcluster.yaml (default $RFM_REFERENCE_PREFIX, "
                         "else reference/)")
    ap.add_argument("--log-dir", help="keep the run reports and logs here (default: a "
                    "temporary directory, removed)")
    ap.add_argument("--replay", metavar="DIR", help="print the table from a --log-dir's "
                    "reports (nothing is run)")
    ap.add_argument("--lock", default=LOCK, help=f"the vcluster lock (default {LOCK})")
    ap.add_argument("--lock-wait", type=float, default=5400, help="seconds (default 5400)")
    ap.add_argument("--run-timeout", type=float, default=1200,
                    help="seconds one ReFrame run may take (default 1200)")
    args = ap.parse_args(argv)
    try:
        args.drops = [float(d) for d in args.drops.split(",")]
    except ValueError:
        ap.exit(2, f"bench_sensitivity: --drops {args.drops!r}: comma-separated numbers\n")
    if not args.drops or any(not 0 < d < 100 for d in args.drops):
        ap.exit(2, "bench_sensitivity: --drops: each drop must be between 0 and 100 %\n")
    if args.healthy < 1:
        ap.exit(2, "bench_sensitivity: --healthy: at least 1 healthy run (false alarms)\n")
    if args.lock_wait <= 0 or args.run_timeout <= 0:
        ap.exit(2, "bench_sensitivity: --lock-wait and --run-timeout must be positive\n")
    ref_dir = reference_dir(args.reference_dir).resolve()  # the one lookup of every reader
    if not (ref_dir / "vcluster.yaml").is_file():
        ap.exit(2, f"bench_sensitivity: no {ref_dir / 'vcluster.yaml'}\n")
    args.reference_dir = ref_dir
    return args


def take_lock(path: str, wait: float):
    """Wait for the lock in the kernel's queue (like `flock -w`), at most `wait` s."""
    fh = open(path, "a")  # noqa: SIM115 - held until the process exits

    def too_long(_sig, _frame):
        raise BenchError(f"the vcluster lock {path} was not free within {wait:g} s")

    old = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(max(1, int(wait)))
    try:
        fcntl.flock(fh, fcntl.LOCK_EX)
    except BenchError:
        fh.close()
        raise
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return fh


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.replay:
        return replay(args)
    os.environ["RFM_REFERENCE_PREFIX"] = str(args.reference_dir)
    try:
        lock = take_lock(args.lock, args.lock_wait)
    except BenchError as err:
        print(f"bench_sensitivity: {err}", file=sys.stderr)
        return 1
    up = False
    try:
        probe = run(["vcluster", "status", "--json"], check=False)
        if probe.returncode == 0 and '"running"' in probe.stdout:
            raise BenchError("a vcluster is already up: the bench needs a fresh one "
                             "(`vcluster down` if it is yours)")
        print(f"load at start: {loadavg()}")
        print(f"references: {args.reference_dir / 'vcluster.yaml'}", flush=True)
        up = True
        run(["vcluster", "up"], timeout=600)
        if args.log_dir:
            workdir = Path(args.log_dir).resolve()
            workdir.mkdir(parents=True, exist_ok=True)
            return bench(args, workdir)
        with tempfile.TemporaryDirectory(prefix="bench-sensitivity-") as tmp:
            return bench(args, Path(tmp))
    except (BenchError, subprocess.TimeoutExpired) as err:
        print(f"bench_sensitivity: {err}", file=sys.stderr)
        return 1
    finally:
        if up:
            run(["vcluster", "down"], check=False, timeout=600)
        print(f"load at end: {loadavg()}")
        lock.close()


if __name__ == "__main__":
    sys.exit(main())

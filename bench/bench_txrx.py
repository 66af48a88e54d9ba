#!/usr/bin/env python3
"""txrx --method mpi against osu_bw in one run: the per-message budget, and where the time goes.

For each message size (default 64 KiB and 256 KiB) the benchmark runs, alternating within
each round so that both see the same machine load (the order flips every round):
- `osu_bw -m SIZE:SIZE -W WINDOW` (OSU_HOME: an OSU Micro-Benchmarks install or build tree;
  without one, bench/c/bw_window.c, the same ring/block streaming in C, built here with mpicc);
- `txrx --method mpi` with 1 transmitter and 1 receiver, the same transport (whatever mpirun
  picks for two ranks on this host), message size and messages in flight: a ring of
  `--blocks` blocks of WINDOW/blocks messages, WINDOW in flight as in osu_bw's window (the
  receiver's data rate, from --json);
- `bw_window.c` (when mpicc is found, and OSU_HOME is set): the same ring and blocks as txrx's
  in C, with nothing done per message: what a compiled inner loop could reach, the yardstick
  for deciding whether txrx needs one (docs/txrx.md);
- with `--python-loop`: txrx with its mpi4py loop instead of the compiled one
  (FABRICTEST_TXRX_LOOP=python);
- with `--before DIR`: the txrx of another source tree (DIR/src, e.g. `git archive main src`),
  as a further arm, so that before and after are measured under the same load.
Each round gives a ratio txrx / osu_bw; the verdict is the median over `--pairs` rounds
(target >= 0.95), printed with the smallest and largest ratio and the load average before and
after (the machine is shared: a ratio is meaningful, a rate alone is not).

`--profile` then runs each tree once more under cProfile (bench/txrx_profiled.py) and prints,
per rank and per message, where the loop's time goes: MPI calls (progress, the copies, and
waiting for the peer), sequence accounting, data checks, buffers and headers, progress line
and clock, the window plan, the own-time bookkeeping, and the loop's own Python. cProfile adds
about a microsecond to every call it sees, so compare the lines with each other, not with the
unprofiled rates.

Then it measures the receive-side accounting (stats.GapCounter over batches of sequence
numbers) in messages per second (target >= 10 M/s: 400 Gb/s of 4 KiB messages is 12 M/s).

usage: python bench/bench_txrx.py [--sizes 65536,262144] [--pairs 6] [--window 64]
                                  [--blocks 2] [--before DIR] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fabrictest import mpirun
from fabrictest.txrx.stats import GapCounter

HERE = Path(__file__).resolve().parent
TARGET_RATIO = 0.95
TARGET_ACCOUNTING = 10e6


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def run(cmd: list[str], timeout: float = 300, env: dict | None = None) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=mpirun.environment(env))  # fmt: skip
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout


def tree_env(src: Path | None, loop: str | None = None) -> dict | None:
    """The environment that runs the txrx of source tree `src` (None: the installed one) with
    the mpi loop `loop` (compiled or python; None: txrx's choice)."""
    if src is None and loop is None:
        return None
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    if loop is not None:
        env["FABRICTEST_TXRX_LOOP"] = loop
    return env


def txrx_args(size: int, blks: int, cm: int, nmsg: int) -> list[str]:
    return ["--method", "mpi", "--msg-size", str(size), "--num-blks", str(blks),
            "--num-cmsgs", str(cm), "--nmsg", str(nmsg), "--quiet"]  # fmt: skip


def c_ring_gbps(exe: Path, size: int, blks: int, cm: int, nmsg: int) -> float:
    out = run(mpirun.command(2, [str(exe), str(size), str(blks), str(cm), str(nmsg)]))
    return float(re.search(r"gbps=([\d.]+)", out).group(1))


def txrx_gbps(size: int, blks: int, cm: int, nmsg: int, work: Path, src: Path | None,
              loop: str | None = None) -> float:  # fmt: skip
    out = work / "txrx.json"
    argv = [sys.executable, "-m", "fabrictest.txrx", *txrx_args(size, blks, cm, nmsg),
            "--json", str(out)]  # fmt: skip
    run(mpirun.command(2, argv), env=tree_env(src, loop))
    doc = json.loads(out.read_text())
    return float(doc["ranks"][0]["gbps"])


def build_bw_window(work: Path) -> Path:
    mpicc = shutil.which("mpicc")
    if mpicc is None:
        raise SystemExit("mpicc not found: install an MPI with its compiler wrapper or set OSU_HOME")
    exe = work / "bw_window"
    subprocess.run([mpicc, "-O2", "-o", str(exe), str(HERE / "c" / "bw_window.c")], check=True)
    return exe


def find_osu_bw() -> Path | None:
    home = os.environ.get("OSU_HOME")
    if not home:
        return None
    for rel in ("libexec/osu-micro-benchmarks/mpi/pt2pt/osu_bw", "c/mpi/pt2pt/standard/osu_bw",
                "mpi/pt2pt/osu_bw", "osu_bw", "bin/osu_bw"):  # fmt: skip
        p = Path(home) / rel
        if p.is_file() and os.access(p, os.X_OK):
            return p
    raise SystemExit(f"OSU_HOME={home} holds no osu_bw")


def base_gbps(osu: Path | None, exe: Path | None, size: int, window: int, blks: int, cm: int,
              nmsg: int) -> float:  # fmt: skip
    if osu is None:
        return c_ring_gbps(exe, size, blks, cm, nmsg)
    iters = max(10, nmsg // window)
    out = run(mpirun.command(2, [str(osu), "-m", f"{size}:{size}", "-W", str(window),
                                 "-i", str(iters), "-x", str(max(5, iters // 10))]))  # fmt: skip
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == str(size):
            return float(f[1]) * 8 / 1000  # MB/s (1e6 bytes) -> Gbps
    raise RuntimeError(f"no {size}-byte row in osu_bw output:\n{out}")


# -- the profile ---------------------------------------------------------------------------
MPI_CALLS = re.compile(r"\b(Testall|Testsome|Testany|Test|Startall|Start|Waitall|Waitsome|Wait|"
                       r"Isend|Irecv|Cancel|Free|Iprobe)\b")  # fmt: skip
CATEGORIES = ("MPI calls", "accounting", "data checks", "buffers+headers", "progress+clock",
              "window plan", "own-time", "faults", "Python loop")  # fmt: skip


def category(func: tuple) -> str:
    """The category of a function called by the loop (pstats key: file, line, name)."""
    path, _line, name = func
    if path == "~":  # a builtin
        if "_loop" in name or "wait_any" in name:  # the compiled loop (fabrictest.txrx._loop)
            if "scan" in name:
                return "accounting"
            return "data checks" if "corrupt" in name else "MPI calls"
        if MPI_CALLS.search(name):
            return "MPI calls"
        if "time." in name or "perf_counter" in name or "monotonic" in name:
            return "progress+clock"
        return "Python loop"
    base = Path(path).name
    if base == "mpi.py" and name in ("wait_block", "_cancel", "_free"):
        return "MPI calls"
    if base == "stats.py":
        return "accounting"
    if base == "rings.py":  # the mpi4py rings
        if name == "scan":
            return "accounting"
        return "data checks" if name == "corrupt" else "MPI calls"
    if base == "ring.py":
        if name in ("count_corrupt", "corrupt_mask"):
            return "data checks"
        if name == "send_windows":
            return "window plan"
        return "buffers+headers"
    if base == "buffers.py":
        return "buffers+headers"
    if base in ("progress.py", "sync.py"):
        return "progress+clock"
    if base == "bottleneck.py":
        return "own-time"
    if base == "faults.py":
        return "faults"
    if base == "mpi.py" and name == "_windows":
        return "window plan"
    return "Python loop"


def profile_of(stats_file: Path, messages: int) -> tuple[str, dict[str, float]]:
    """(role, {category: seconds per message}) of one rank's loop (transmit or receive)."""
    st = pstats.Stats(str(stats_file)).stats
    loops = [f for f in st if Path(f[0]).name == "mpi.py" and f[2] in ("transmit", "receive")]
    if len(loops) != 1:
        raise RuntimeError(f"{stats_file}: no single txrx loop in the profile ({loops})")
    loop = loops[0]
    out = dict.fromkeys(CATEGORIES, 0.0)
    out["Python loop"] += st[loop][2]  # the loop's own lines
    helpers = [loop] + [f for f in st if Path(f[0]).name == "mpi.py" and f[2] == "aim"]
    for func, (_cc, _nc, _tt, _ct, callers) in st.items():
        for caller in helpers:
            if caller in callers and func not in helpers:
                out[category(func)] += callers[caller][3]
    if len(helpers) > 1:  # _Stream.aim's own lines are the loop's too
        out["Python loop"] += st[helpers[1]][2]
    role = "receiver" if loop[2] == "receive" else "transmitter"
    return role, {k: v / messages for k, v in out.items()}


def profile(size: int, blks: int, cm: int, nmsg: int, work: Path, src: Path | None,
            loop: str | None = None) -> dict:  # fmt: skip
    prefix = work / "prof"
    for old in work.glob("prof.*"):
        old.unlink()
    argv = [sys.executable, str(HERE / "txrx_profiled.py"), str(prefix),
            *txrx_args(size, blks, cm, nmsg)]  # fmt: skip
    run(mpirun.command(2, argv), env=tree_env(src, loop))
    return dict(profile_of(f, nmsg) for f in sorted(work.glob("prof.*")))


def print_profile(title: str, prof: dict) -> None:
    print(f"# profile, {title}: us per message (cProfile)")
    print(f"#   {'':<12}" + "".join(f"{c:>16}" for c in (*CATEGORIES, "total")))
    for role in ("receiver", "transmitter"):
        row = prof[role]
        cells = [row[c] * 1e6 for c in CATEGORIES] + [sum(row.values()) * 1e6]
        print(f"#   {role:<12}" + "".join(f"{x:>16.3f}" for x in cells))


# -- the accounting rate ---------------------------------------------------------------------
def accounting_rate(total: int = 10_000_000, batch: int = 1000, loss: float = 0.0) -> float:
    seqs = np.arange(total, dtype=np.int64)
    if loss:
        rng = np.random.default_rng(0)
        seqs = seqs[rng.random(total) >= loss]
    parts = [seqs[i : i + batch] for i in range(0, seqs.size, batch)]
    best = 0.0
    for _ in range(3):
        c = GapCounter(total)
        t = time.perf_counter()
        for p in parts:
            c.add(p)
        c.finish(total)
        best = max(best, seqs.size / (time.perf_counter() - t))
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="65536,262144")
    ap.add_argument("--pairs", type=int, default=6, help="alternated rounds per size (>= 6)")
    ap.add_argument("--window", type=int, default=64, help="messages in flight (osu_bw -W)")
    ap.add_argument("--blocks", type=int, default=2, help="txrx ring blocks (--num-blks)")
    ap.add_argument("--total-mib", type=int, default=4096, help="bytes moved per run (MiB)")
    ap.add_argument("--before", type=Path, default=None,
                    help="another source tree (its src/ is put first on PYTHONPATH) as a third arm")
    ap.add_argument("--profile", action="store_true", help="print where the time goes")
    ap.add_argument("--python-loop", action="store_true",
                    help="also run txrx with FABRICTEST_TXRX_LOOP=python (the mpi4py loop)")
    ap.add_argument("--no-accounting", action="store_true", help="skip the accounting rate")
    args = ap.parse_args(argv)
    if args.window % args.blocks:
        ap.error("--window must be a multiple of --blocks")
    sizes = [int(x) for x in args.sizes.split(",")]
    blks, cm = args.blocks, args.window // args.blocks
    before = (args.before / "src").resolve() if args.before else None
    if before is not None and not (before / "fabrictest" / "txrx").is_dir():
        ap.error(f"--before {args.before}: no src/fabrictest/txrx there")
    work = Path(tempfile.mkdtemp(prefix="bench_txrx."))
    # arm -> (source tree or None, mpi loop or None); "c-ring": bw_window.c
    arms: dict[str, tuple[Path | None, str | None]] = {"after": (None, None)}
    if args.python_loop:
        arms["py-loop"] = (None, "python")
    if before is not None:
        arms["before"] = (before, None)
    try:
        osu = find_osu_bw()
        exe = build_bw_window(work) if (osu is None or shutil.which("mpicc")) else None
        if osu is not None and exe is not None:
            arms["c-ring"] = (None, None)
        base_name = f"osu_bw ({osu})" if osu else "bw_window.c"
        print(f"# txrx --method mpi vs {base_name}, 1 -> 1, {args.window} messages in flight "
              f"(txrx ring {blks} x {cm}), {args.pairs} alternated rounds, MPI: "
              f"{mpirun.flavour()}, host: {os.uname().nodename}, {os.cpu_count()} cores")  # fmt: skip
        print(f"# load average before: {load()}")
        print(f"{'size':>9} {'arm':>7} {'nmsg':>7} {'arm Gbps':>10} {'base Gbps':>10} "
              f"{'ratio':>6} {'min':>6} {'max':>6}  (medians over rounds; ratio per round)")  # fmt: skip
        verdict = []
        for size in sizes:
            nmsg = max(4 * args.window, (args.total_mib << 20) // size)
            rates: dict[str, list[float]] = {a: [] for a in arms}
            base: list[float] = []
            for r in range(args.pairs):
                order = ["base", *arms] if r % 2 == 0 else [*reversed(list(arms)), "base"]
                for arm in order:
                    if arm == "base":
                        base.append(base_gbps(osu, exe, size, args.window, blks, cm, nmsg))
                    elif arm == "c-ring":
                        rates[arm].append(c_ring_gbps(exe, size, blks, cm, nmsg))
                    else:
                        rates[arm].append(txrx_gbps(size, blks, cm, nmsg, work, *arms[arm]))
            for arm, got in rates.items():
                ratios = [a / b for a, b in zip(got, base, strict=True)]
                med = statistics.median(ratios)
                if arm == "after":
                    verdict.append(med)
                print(f"{size:>9} {arm:>7} {nmsg:>7} {statistics.median(got):>10.2f} "
                      f"{statistics.median(base):>10.2f} {med:>6.3f} {min(ratios):>6.3f} "
                      f"{max(ratios):>6.3f}", flush=True)  # fmt: skip
        print(f"# load average after: {load()}")
        worst = min(verdict)
        print(f"# txrx / {base_name.split()[0]} (median, worst size): {worst:.3f}  target >= "
              f"{TARGET_RATIO}  {'OK' if worst >= TARGET_RATIO else 'BELOW TARGET'}")  # fmt: skip
        if args.profile:
            for size in sizes:
                nmsg = max(4 * args.window, (args.total_mib << 20) // size)
                for arm, (src, loop) in arms.items():
                    if arm == "c-ring":
                        continue
                    print_profile(f"{arm}, {size} B",
                                  profile(size, blks, cm, nmsg, work, src, loop))
        if not args.no_accounting:
            rate = accounting_rate()
            lossy = accounting_rate(loss=0.01)
            print(f"# accounting rate: {rate / 1e6:.1f} M msgs/s in order, {lossy / 1e6:.1f} M "
                  f"msgs/s with 1% loss (batches of 1000)  target >= "
                  f"{TARGET_ACCOUNTING / 1e6:.0f} M/s  "
                  f"{'OK' if min(rate, lossy) >= TARGET_ACCOUNTING else 'BELOW TARGET'}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""txrx --method mpi against a baseline on the same transport, and the accounting rate.

For each message size (64 KiB to 4 MiB) the benchmark runs, in one go and alternating so that
both see the same machine load:
- `txrx --method mpi` with 1 transmitter and 1 receiver (the receiver's data rate, from --json);
- the baseline: `osu_bw` when OSU_HOME points at an OSU Micro-Benchmarks install or build tree,
  otherwise bench/c/bw_window.c (the same ring/blocks streaming in C), built here with mpicc;
and prints the best of `--reps` runs of each and their ratio (target >= 0.95), and the median
of the ratios of back-to-back pairs ("paired", less sensitive to other load on the machine). Both move the
same bytes from the same ring layout (ring of `--ring-mib` MiB per stream).

Then it measures the receive-side accounting (stats.GapCounter over the sequence numbers of
batches of messages) in messages per second (target >= 10 M/s: 400 Gb/s of 4 KiB messages is
12 M/s, of 64 KiB messages 0.76 M/s).

usage: python bench/bench_txrx.py [--sizes 65536,262144,1048576,4194304] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
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


def ring_for(size: int, ring_bytes: int) -> tuple[int, int]:
    """(num_blks, num_cmsgs) for a ring of about `ring_bytes`: at least 4 blocks."""
    slots = max(8, min(1000, ring_bytes // size))
    cm = max(2, min(100, slots // 4))
    return max(4, slots // cm), cm


def nmsg_for(size: int, total_bytes: int, slots: int) -> int:
    return max(2 * slots, total_bytes // size)


def run(cmd: list[str], timeout: float = 300) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=mpirun.environment())
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout


def txrx_gbps(size: int, blks: int, cm: int, nmsg: int, workdir: Path) -> float:
    out = workdir / "txrx.json"
    argv = [sys.executable, "-m", "fabrictest.txrx", "--method", "mpi", "--msg-size", str(size),
            "--num-blks", str(blks), "--num-cmsgs", str(cm), "--nmsg", str(nmsg),
            "--json", str(out)]  # fmt: skip
    run(mpirun.command(2, argv))
    doc = json.loads(out.read_text())
    return float(doc["ranks"][0]["gbps"])


def build_bw_window(workdir: Path) -> Path:
    mpicc = shutil.which("mpicc")
    if mpicc is None:
        raise SystemExit("mpicc not found: install an MPI with its compiler wrapper or set OSU_HOME")
    exe = workdir / "bw_window"
    subprocess.run([mpicc, "-O2", "-o", str(exe), str(HERE / "c" / "bw_window.c")], check=True)
    return exe


def c_gbps(exe: Path, size: int, blks: int, cm: int, nmsg: int) -> float:
    out = run(mpirun.command(2, [str(exe), str(size), str(blks), str(cm), str(nmsg)]))
    return float(re.search(r"gbps=([\d.]+)", out).group(1))


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


def osu_gbps(exe: Path, size: int) -> float:
    out = run(mpirun.command(2, [str(exe), "-m", f"{size}:{size}"]))
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == str(size):
            return float(f[1]) * 8 / 1000  # MB/s (1e6 bytes) -> Gbps
    raise RuntimeError(f"no {size}-byte row in osu_bw output:\n{out}")


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
    ap.add_argument("--sizes", default="65536,262144,1048576,4194304")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ring-mib", type=int, default=64, help="ring size per stream (MiB)")
    ap.add_argument("--total-mib", type=int, default=2048, help="bytes moved per run (MiB)")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="bench_txrx."))
    try:
        osu = find_osu_bw()
        exe = None if osu else build_bw_window(work)
        base_name = f"osu_bw ({osu})" if osu else "bw_window.c"
        print(f"# txrx --method mpi vs {base_name}, 1 -> 1, best of {args.reps}, "
              f"MPI: {mpirun.flavour()}, host: {os.uname().nodename}")  # fmt: skip
        print(f"{'size':>9} {'blks x cmsgs':>12} {'nmsg':>7} {'txrx Gbps':>10} {'base Gbps':>10} "
              f"{'ratio':>6} {'paired':>6}")  # fmt: skip
        ratios = []
        for size in sizes:
            blks, cm = ring_for(size, args.ring_mib << 20)
            nmsg = nmsg_for(size, args.total_mib << 20, blks * cm)
            tx, base = [], []
            for _ in range(args.reps):
                base.append(osu_gbps(osu, size) if osu else c_gbps(exe, size, blks, cm, nmsg))
                tx.append(txrx_gbps(size, blks, cm, nmsg, work))
            ratio = max(tx) / max(base)
            paired = float(np.median([a / b for a, b in zip(tx, base, strict=True)]))
            ratios.append(ratio)
            print(f"{size:>9} {f'{blks} x {cm}':>12} {nmsg:>7} {max(tx):>10.2f} {max(base):>10.2f} "
                  f"{ratio:>6.2f} {paired:>6.2f}", flush=True)  # fmt: skip
        worst = min(ratios)
        print(f"# throughput ratio (worst size): {worst:.2f}  target >= {TARGET_RATIO}  "
              f"{'OK' if worst >= TARGET_RATIO else 'BELOW TARGET'}")  # fmt: skip
        rate = accounting_rate()
        lossy = accounting_rate(loss=0.01)
        print(f"# accounting rate: {rate / 1e6:.1f} M msgs/s in order, {lossy / 1e6:.1f} M msgs/s "
              f"with 1% loss (batches of 1000)  target >= {TARGET_ACCOUNTING / 1e6:.0f} M/s  "
              f"{'OK' if min(rate, lossy) >= TARGET_ACCOUNTING else 'BELOW TARGET'}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

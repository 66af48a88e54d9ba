#!/usr/bin/env python3
"""The acceptance page at a centre's size: `fabric-report acceptance` on runs scaled from the
recorded vcluster run (tests/report/acceptance_scale.py: every family over the partition,
leaves of 64 in 10 groups, three planted faults), timed at each size as a ratio against the
smallest size measured in the same run (linear in nodes: the ratio follows the node ratio),
with the page's size, where its first failure sits and the JSON twin's size.

usage: python bench/bench_acceptance.py [--nodes 500,1000,10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from report.acceptance_scale import generate  # noqa: E402


def page(root: Path) -> tuple[float, int, int, int, int]:
    """(seconds, exit status, page bytes, offset of the first failing row, twin bytes)."""
    import contextlib
    import io
    import os

    from fabrictest.report.cli import main

    here = os.getcwd()
    os.chdir(root)
    try:
        args = ["acceptance", *[a for p in ("run0", "run1", "run2")
                                for a in ("--report", f"{p}.json")],
                "--topology", "topology.txt", "-o", "page"]
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            rc = main(args)
        took = time.perf_counter() - t0
    finally:
        os.chdir(here)
    text = (root / "page" / "index.html").read_text()
    twin = (root / "page" / "acceptance.json").stat().st_size
    return took, rc, len(text.encode()), text.find('class="fail"'), twin


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="500,1000,10000")
    ap.add_argument("--keep", help="generate (and keep) the runs under DIR")
    args = ap.parse_args()
    try:
        sizes = sorted(int(x) for x in args.nodes.split(","))
    except ValueError:
        print("bench_acceptance: --nodes: comma-separated node counts", file=sys.stderr)
        return 2
    if not sizes or sizes[0] < 8:
        print("bench_acceptance: --nodes: at least 8 nodes each", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-acceptance-") as tmp:
        base = Path(args.keep or tmp)
        rows = []
        for n in sizes:
            root = base / f"n{n}"
            root.mkdir(parents=True, exist_ok=True)
            generate(root, n)
            rows.append((n, *page(root)))
    n0, t0 = rows[0][0], rows[0][1]
    print(f"{'nodes':>7} {'seconds':>8} {'x time':>7} {'x nodes':>7} {'page KB':>8} "
          f"{'1st failure KB':>14} {'JSON KB':>8} exit")
    for n, took, rc, size, first, twin in rows:
        print(f"{n:>7} {took:>8.1f} {took / t0:>7.1f} {n / n0:>7.1f} {size / 1024:>8.0f} "
              f"{first / 1024:>14.1f} {twin / 1024:>8.0f} {rc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

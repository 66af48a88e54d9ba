#!/usr/bin/env python3
"""Operating characteristics of `fabric-report history` on recorded noise: per family, the
false alarms per 100 healthy runs, the runs a sustained drop of 1-10 % takes to be named (and
how often it is missed within 10 runs), and what a single 10 % spike does.

    python bench/bench_history_oc.py [--trials 100] [--seed 1]   # the table of docs/regressions.md
    python bench/bench_history_oc.py --noise 0.005,0.01,0.02,0.03   # normal noise of those spreads
    python bench/bench_history_oc.py --calibrate                  # shift.Z_NAMED from normal noise

The noise (fabrictest.report.history.operating): each recorded figure's sessions about their own
median, pooled per family, resampled into 20 healthy sessions and 10 more. Recordings:
tests/data/topology/vcluster-sweeps/*-healthy-*.json (fabric-sweep on the vcluster's fat tree
and dragonfly, 5 healthy runs each: every node's figure) and
tests/report/data/run-report-local-healthy-*.json (the whole suite on `local`, 2 runs back
to back: shared memory on 2 shared cores).
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from fabrictest.report.history import changepoints as cp  # noqa: E402
from fabrictest.report.history import operating as oc  # noqa: E402
from fabrictest.report.history import shift  # noqa: E402
from fabrictest.report.records.counts import is_count  # noqa: E402
from fabrictest.report.records.results import read_report_file  # noqa: E402
from fabrictest.report.records.text_table import text_table  # noqa: E402

SWEEPS = ROOT / "tests/data/topology/vcluster-sweeps"
LOCAL = ROOT / "tests/report/data"


def recorded() -> dict[str, tuple[np.ndarray, str]]:
    """family -> (pooled deviations, where they were recorded)."""
    docs = [(Path(f).name.split("-healthy")[0], json.loads(Path(f).read_text()))
            for f in sorted(glob.glob(str(SWEEPS / "*-healthy-*.json")))]
    out = {f"{k} (vcluster)": (v, "vcluster sweeps") for k, v in
           oc.pools(oc.sweep_series(docs)).items()}
    by: dict[tuple, list[float]] = defaultdict(list)
    for f in sorted(glob.glob(str(LOCAL / "run-report-local-healthy-*.json"))):
        for r in read_report_file(f).records:
            if r.value is not None and not is_count(r.unit):
                by[(r.test, r.sysenv, r.pvar)].append(r.value)
    for k, v in oc.pools((t, vals, []) for (t, _s, _p), vals in by.items()).items():
        out[f"{k} (local)"] = (v, "local run reports")
    return out


def calibrate(draws: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    zs = []
    for _ in range(draws):
        v = 1 + 0.01 * rng.standard_normal(oc.HISTORY)
        s = shift.latest_shift(list(v), True, cp.noise(v))
        zs.append(s.z)
    for q in (99.0, 99.5, 99.9):
        print(f"the largest z over the windows, {q:g}th percentile of {draws} healthy normal "
              f"series of {oc.HISTORY}: {np.percentile(zs, q):.2f}")
    print(f"shift.Z_NAMED = {shift.Z_NAMED}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--noise", help="normal noise of these relative spreads instead")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    if args.calibrate:
        calibrate(20000, args.seed)
        return 0
    if args.noise:
        gen = np.random.default_rng(args.seed)
        pools = {f"normal ±{100 * float(s):g}%": (gen.standard_normal(5000) * float(s), "")
                 for s in args.noise.split(",")}
    else:
        pools = recorded()
    rows = []
    for name, (pool, _where) in pools.items():
        c = oc.measure(pool, args.trials, np.random.default_rng(args.seed))
        rows.append((name, len(pool), c))
        print(f"{name}: done", file=sys.stderr, flush=True)
    print(text_table(oc.table_head(), oc.table(rows)))
    if args.json:
        Path(args.json).write_text(json.dumps({n: c.to_dict() for n, _k, c in rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`fabric-sweep`: measure disjoint node pairs in a few rounds and name the slow nodes.

Examples:
    salloc -p vc -N 4 fabric-sweep                      # the allocation, srun steps
    fabric-sweep --partition vc                          # a partition (run inside salloc)
    fabric-sweep 'nid00[1000-1063]' --launcher mpirun    # mpirun --host a,b per pair
    fabric-sweep 'node[01-16]' --launcher sim --sim-slow node03=0.25   # simulation

Output: a summary, the per-node table, the raw pair figures, then `verdict:` and one line per
suspect (`suspect: NODE ...` with its evidence) and per pair that gave no figure although both
its nodes are fine (`failed pair: ...`), or `suspects: none`. Exit status 0 for
`suspects: none`, 1 otherwise, 2 when the sweep could not run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from . import nodes as nodeset
from . import options, specs
from .core import run_sweep
from .options import OneLineParser, UsageError, parse_count, parse_number
from .output import render
from .runners import LocalRunner, OsuBw, SimulatedRunner, SlurmRunner, Txrx
from .verdict import VerdictParams


def build_parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="fabric-sweep",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g = ap.add_argument_group("nodes (default: the Slurm allocation, SLURM_JOB_NODELIST)")
    g.add_argument("expr", nargs="?", help="hostlist expression, e.g. node[01-04]")
    g.add_argument("--nodes", "-w", dest="nodes", help="hostlist expression")
    g.add_argument("--partition", "-p", help="all nodes of this Slurm partition")
    g.add_argument("--hostfile", help="host file (one name or expression per line)")

    g = ap.add_argument_group("launch")
    g.add_argument("--launcher", choices=["auto", "slurm", "mpirun", "sim"], default="auto",
                   help="slurm: srun steps in the allocation; mpirun: --host a,b; "
                        "auto: slurm inside an allocation, else mpirun")
    g.add_argument("--all-local", action="store_true",
                   help="mpirun: run every pair on this host (smoke test of the chain)")
    g.add_argument("--pair-timeout", type=parse_number, default=120.0,
                   help="seconds a pair may take before it counts as failed (default 120, "
                        f"at most {options.MAX_PAIR_TIMEOUT:g})")
    g.add_argument("--max-concurrent", type=parse_count, default=256,
                   help="pairs launched at once within a round (default 256)")
    g.add_argument("--srun-arg", action="append", default=[], metavar="ARG",
                   help="extra srun argument (repeat); also $FABRIC_SWEEP_SRUN_ARGS")
    g.add_argument("--mpirun-arg", action="append", default=[], metavar="ARG",
                   help="extra mpirun argument (repeat)")

    g = ap.add_argument_group("measurement")
    g.add_argument("--test", choices=["txrx", "osu_bw"], default="txrx")
    g.add_argument("--method", choices=["mpi", "rdma"], default="mpi", help="txrx method")
    g.add_argument("--msg-size", type=parse_count, default=65536)
    g.add_argument("--nmsg", type=parse_count, default=500)
    g.add_argument("--num-blks", type=parse_count, default=10)
    g.add_argument("--num-cmsgs", type=parse_count, default=100)
    g.add_argument("--txrx-arg", action="append", default=[], metavar="ARG")
    g.add_argument("--osu-bw", default=None, help="osu_bw executable (default: $OSU_HOME or PATH)")
    g.add_argument("--osu-size", type=parse_count, default=1 << 20)

    g = ap.add_argument_group("schedule and verdict")
    g.add_argument("--rounds", type=parse_count, default=2,
                   help="screening matchings (default 2, at least 1)")
    g.add_argument("--confirm", type=parse_count, default=1,
                   help="confirmation rounds against known-good partners (default 1)")
    g.add_argument("--seed", type=parse_count, default=None)
    g.add_argument("--expect", type=parse_number, default=None,
                   help="reference figure of a healthy pair (default: the cluster's median); "
                        "positive")
    g.add_argument("--z-screen", type=parse_number, default=VerdictParams.z_screen)
    g.add_argument("--z-confirm", type=parse_number, default=VerdictParams.z_confirm)
    g.add_argument("--min-drop", type=parse_number, default=VerdictParams.min_drop)

    g = ap.add_argument_group("simulation (--launcher sim)")
    g.add_argument("--sim-slow", action="append", default=[], metavar="NODE=FACTOR")
    g.add_argument("--sim-down", action="append", default=[], metavar="NODE")
    g.add_argument("--sim-sigma", type=parse_number, default=0.05)

    g = ap.add_argument_group("output")
    g.add_argument("--json", metavar="PATH", help="write everything as JSON (fabric-report)")
    g.add_argument("--no-pairs", action="store_true", help="leave the raw pair figures out")
    g.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    return ap


def _osu_exe(given: str | None) -> str:
    if given:
        return given
    home = os.environ.get("OSU_HOME")
    if home:
        for sub in ("libexec/osu-micro-benchmarks/mpi/pt2pt", "c/mpi/pt2pt/standard",
                    "mpi/pt2pt", ""):
            cand = os.path.join(home, sub, "osu_bw")
            if os.path.exists(cand):
                return cand
    return shutil.which("osu_bw") or "osu_bw"


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        options.check(args)
    except UsageError as err:
        return options.fail(str(err))

    def log(msg: str) -> None:
        if args.verbose:
            print(f"fabric-sweep: {msg}", file=sys.stderr, flush=True)

    try:
        names = nodeset.resolve(
            nodes=args.nodes or args.expr, partition=args.partition, hostfile=args.hostfile
        )
    except nodeset.NodeSetError as err:
        return options.fail(str(err))

    measure_timeout = max(1.0, args.pair_timeout - 5.0)
    try:
        if args.test == "txrx":
            if args.launcher != "sim":
                options.check_txrx(args.method, args.msg_size, args.nmsg, args.num_blks,
                                   args.num_cmsgs, measure_timeout)
            measurement = Txrx(
                method=args.method, msg_size=args.msg_size, nmsg=args.nmsg,
                num_blks=args.num_blks, num_cmsgs=args.num_cmsgs, timeout=measure_timeout,
                extra=args.txrx_arg,
            )  # fmt: skip
        else:
            measurement = OsuBw(exe=_osu_exe(args.osu_bw), size=args.osu_size)
            if args.launcher != "sim" and shutil.which(measurement.exe) is None:
                raise UsageError(f"osu_bw not found ({measurement.exe}): set OSU_HOME, put it "
                                 "on PATH or give --osu-bw")
        slow = specs.parse_slow(args.sim_slow, names)
        down = specs.parse_down(args.sim_down, names)
    except (UsageError, specs.SpecError) as err:
        return options.fail(str(err))

    launcher = args.launcher
    if launcher == "auto":
        in_alloc = bool(os.environ.get("SLURM_JOB_ID")) and shutil.which("srun") is not None
        launcher = "slurm" if in_alloc and not args.all_local else "mpirun"
    kw = dict(pair_timeout=args.pair_timeout, max_concurrent=args.max_concurrent, log=log)
    if launcher == "sim":
        runner = SimulatedRunner(names, sigma=args.sim_sigma, slow=slow, down=down,
                                 seed=args.seed, unit=measurement.unit)
    elif launcher == "slurm":
        if not os.environ.get("SLURM_JOB_ID"):
            return options.fail(
                "--launcher slurm runs inside an allocation, e.g. "
                f"salloc -N {len(names)} -w {nodeset.collect(names)} fabric-sweep")
        runner = SlurmRunner(measurement, srun_args=args.srun_arg, **kw)
    else:
        runner = LocalRunner(measurement, all_local=args.all_local,
                             mpirun_args=args.mpirun_arg, **kw)

    params = VerdictParams(z_screen=args.z_screen, z_confirm=args.z_confirm,
                           min_drop=args.min_drop)
    log(f"{len(names)} nodes: {nodeset.collect(names)}; {runner.describe()}")
    res = run_sweep(names, runner, rounds=args.rounds, confirm=args.confirm, seed=args.seed,
                    params=params, expect=args.expect, log=log)
    sys.stdout.write(render(res, pairs=not args.no_pairs))
    sys.stdout.flush()
    if args.json:
        try:
            res.write_json(args.json)
        except OSError as err:  # checked up front; the directory may have gone since
            print(f"fabric-sweep: error: --json {args.json}: {err}", file=sys.stderr)
            return 2
    return 0 if res.verdict.healthy else 1


if __name__ == "__main__":
    raise SystemExit(main())

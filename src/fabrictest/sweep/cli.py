"""`fabric-sweep`: measure disjoint node pairs, both directions, and name the slow nodes.

Examples:
    salloc -p vc -N 4 fabric-sweep                      # the allocation, srun steps
    fabric-sweep --partition vc                          # a partition (run inside salloc)
    fabric-sweep 'nid00[1000-1063]' --launcher mpirun    # mpirun --host a,b per run
    fabric-sweep 'node[01-16]' --launcher sim --sim-slow node03=0.5:tx   # simulation
    fabric-sweep 'nid[000001-100000]' --launcher sim --sim-sigma 0.28 --sim-slow @slow.txt

Before measuring it prints the plan (nodes, pairs per round, rounds planned and at most, wall
time) on stderr, then a line per round (why an extra round runs, what it found). Output: a
summary, the per-node table (send and receive), the runs, then `verdict:` and one line per
suspect (`suspect: NODE send ... (3/3 pairs slow sending, receiving ok; confirmed with ...)`),
per run that gave no figure although both its nodes are fine (`failed run: ...`), per
node-direction that could not be decided (`undecided: ...`), or `suspects: none`. Ctrl-C
prints the verdict so far. Exit status 0 for `suspects: none`, 1 otherwise, 2 when the sweep
could not run (bad options, or no run gave a figure at all), 130 when interrupted.
`--drain` prints the scontrol commands that would drain the suspects (`--confirm` runs them).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from ..txrx import options as txrx_defaults
from . import drain, options, specs, topology
from . import nodes as nodeset
from .core import DEFAULT_MAX_ROUNDS, DEFAULT_ROUNDS, run_sweep
from .estimate import VerdictParams
from .expectation import Expectation, ExpectationError, from_reference
from .measure import OsuBw, Txrx
from .options import OneLineParser, UsageError, parse_count, parse_number
from .outfile import OutputPathError
from .output import render
from .round_runner import RoundStepRunner
from .runners import LocalRunner, SlurmRunner
from .runs import OK
from .simulate import SimulatedRunner
from .system_defaults import slurm_topology, system_expectation

EXIT_INTERRUPTED = 130
#: measured, nothing named, but nothing to decide against: `undecidable: ...` alone (2 nodes
#: without a reference). Not 0 (never a pass), not 1 (nothing was found slow)
EXIT_UNDECIDABLE = 3


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
                   help="seconds one run (one direction of a pair) may take before it counts "
                        f"as failed (default 120, at most {options.MAX_PAIR_TIMEOUT:g})")
    g.add_argument("--pair-seconds", type=parse_number, default=None,
                   help="expected seconds of one run, for the wall-time estimate of the plan "
                        "(default: estimated after the first round)")
    g.add_argument("--max-concurrent", type=parse_count, default=256,
                   help="pairs launched at once within a round (default 256)")
    g.add_argument("--step-per", choices=["auto", "round", "run"], default="auto",
                   help="round: each direction of a round is one job step (one MPI job, "
                        "every pair at once; txrx only); run: a step per run (at most "
                        "--max-concurrent at once); auto (default): round for txrx, run for "
                        "osu_bw")
    g.add_argument("--duplex", choices=["half", "full"], default="half",
                   help="with --step-per round: half (default) measures a pair's two "
                        "directions in two steps; full in one step, both at once (only on "
                        "full-duplex links and hosts that drive both: docs/sweep.md)")
    g.add_argument("--srun-arg", action="append", default=[], metavar="ARG",
                   help="extra srun argument (repeat); also $FABRIC_SWEEP_SRUN_ARGS")
    g.add_argument("--mpirun-arg", action="append", default=[], metavar="ARG",
                   help="extra mpirun argument (repeat)")

    g = ap.add_argument_group("measurement")
    g.add_argument("--test", choices=["txrx", "osu_bw"], default="txrx")
    g.add_argument("--method", choices=["mpi", "rdma"], default="mpi", help="txrx method")
    g.add_argument("--msg-size", type=parse_count, default=txrx_defaults.DEFAULT_MSG_SIZE)
    g.add_argument("--nmsg", type=parse_count, default=500)
    g.add_argument("--num-blks", type=parse_count, default=txrx_defaults.DEFAULT_NUM_BLKS)
    g.add_argument("--num-cmsgs", type=parse_count, default=txrx_defaults.DEFAULT_NUM_CMSGS)
    g.add_argument("--txrx-arg", action="append", default=[], metavar="ARG")
    g.add_argument("--osu-bw", default=None, help="osu_bw executable (default: $OSU_HOME or PATH)")
    g.add_argument("--osu-size", type=parse_count, default=1 << 20)

    g = ap.add_argument_group("schedule and verdict")
    g.add_argument("--rounds", type=parse_count, default=DEFAULT_ROUNDS,
                   help=f"screening matchings, every node (default {DEFAULT_ROUNDS})")
    g.add_argument("--max-rounds", type=parse_count, default=DEFAULT_MAX_ROUNDS,
                   help="at most this many rounds in all: extra rounds measure the ambiguous "
                        f"nodes again (default {DEFAULT_MAX_ROUNDS})")
    g.add_argument("--seed", type=parse_count, default=None)
    g.add_argument("--expect", metavar="FIGURE[UNIT]", default=None,
                   help="the figure of a healthy run (Gbps for txrx, MB/s for osu_bw, or with "
                        "its unit: 100Gbps, 12000MB/s): every node-direction and the cluster's "
                        "level are also held against it, a side or a whole cluster more than "
                        "--min-drop below is named")
    g.add_argument("--expect-from", metavar="REFERENCE_YAML",
                   help="also hold every node-direction against the calibrated rate of one "
                        "tx/rx stream between two nodes in this reference file (TxRxTest "
                        "paired stream_gbps and its lower bound): a uniform drop is named too")
    g.add_argument("--expect-system", metavar="SYSTEM",
                   help="the system in --expect-from (default: the file's name, e.g. vcluster)")
    g.add_argument("--no-reference", action="store_true",
                   help="do not hold the sweep against the system's reference (by default, "
                        "reference/SYSTEM.yaml's TxRxTest paired rate when it applies; the "
                        "system: $RFM_SYSTEM or Slurm's cluster name)")
    g.add_argument("--no-topology", action="store_true",
                   help="do not use Slurm's topology (by default, inside an allocation, "
                        "`scontrol show topology` when it places the nodes under 2 or more "
                        "switches)")
    g.add_argument("--min-drop", type=parse_number, default=VerdictParams.min_drop,
                   help="a direction is named only when at least this fraction below the "
                        f"cluster level (default {VerdictParams.min_drop:g})")
    g.add_argument("--fdr", type=parse_number, default=VerdictParams.fdr,
                   help="expected share of false suspects among those named (default "
                        f"{VerdictParams.fdr:g})")

    g = ap.add_argument_group("simulation (--launcher sim)")
    g.add_argument("--sim-slow", action="append", default=[],
                   metavar="NODE=FACTOR[:tx|:rx] or @FILE")
    g.add_argument("--sim-down", action="append", default=[], metavar="NODE[:tx|:rx] or @FILE")
    g.add_argument("--sim-sigma", type=parse_number, default=0.05,
                   help="spread of one run's log figure (default 0.05)")
    g.add_argument("--sim-pair-seconds", type=parse_number, default=0.0,
                   help="simulated seconds of one run (default 0)")

    drain.add_options(ap)
    topology.add_options(ap)

    g = ap.add_argument_group("output")
    g.add_argument("--json", metavar="PATH", help="write everything as JSON (fabric-report)")
    g.add_argument("--no-pairs", action="store_true", help="leave the runs out of the text")
    g.add_argument("-q", "--quiet", action="store_true", help="no plan or progress on stderr")
    g.add_argument("-v", "--verbose", action="store_true", help="a line per run on stderr")
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


def _stderr(msg: str) -> None:
    print(f"fabric-sweep: {msg}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # outside the rounds (which end with the verdict so far)
        print("fabric-sweep: interrupted before a verdict", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED


def _main(argv) -> int:
    try:
        args = build_parser().parse_args(argv)
        options.check(args)
        drain.check_options(args)
        names = nodeset.resolve(
            nodes=args.nodes or args.expr, partition=args.partition, hostfile=args.hostfile)
        launcher = _launcher(args)
        expected = _expected(args, len(names))
        unjudged = _unjudged(args, launcher) if expected is None else ""
        if args.expect is None and expected is None and not unjudged:
            expected, unjudged = system_expectation(args.method, _shaping(args),
                                                    nodes=len(names))
        topology_note = _auto_topology(args, names, launcher)
        topo, slow_uplinks = topology.load(args, names)
        runner = _runner(args, names, launcher)
        if slow_uplinks:  # the simulation's uplinks (--sim-slow-uplink)
            runner.add_slow_uplinks(topo, slow_uplinks)
    except (UsageError, specs.SpecError, nodeset.NodeSetError, ExpectationError) as err:
        return options.fail(str(err))
    say = (lambda _m: None) if args.quiet else _stderr
    if args.verbose:
        runner.log = _stderr
    say(f"{len(names)} nodes: {nodeset.collect(names)}; {runner.describe()}")
    params = VerdictParams(min_drop=args.min_drop, fdr=args.fdr)
    if args.expect is not None:  # an expectation like --expect-from's: a uniform drop is named
        given = f" {args.expect_text}" if args.expect_unit != runner.unit else ""
        expected = Expectation(value=args.expect, lower=-args.min_drop, unit=runner.unit,
                               source=f"--expect{given}")
    res = run_sweep(names, runner, rounds=args.rounds, max_rounds=args.max_rounds,
                    seed=args.seed, params=params, expected=expected, say=say,
                    topology=topo)
    steps = getattr(runner, "steps", None)
    if steps is not None:  # what Slurm's MaxStepCount counts (40,000 a job by default)
        per = "run"
        if isinstance(runner, RoundStepRunner):
            per = "round (full duplex)" if runner.duplex == "full" else "round and direction"
        say(f"{steps} job steps ({len(res.rounds)} rounds, one step per {per})")
    res.unjudged = "" if expected is not None else unjudged
    res.topology_note = topology_note
    sys.stdout.write(render(res, pairs=not args.no_pairs))
    drain_failed = _drain(res, args)
    sys.stdout.flush()
    if args.json:
        try:
            res.write_json(args.json)
        except (OSError, OutputPathError) as err:  # checked up front; things change
            return options.fail(f"--json {args.json}: {err}")
    if res.interrupted:
        return EXIT_INTERRUPTED
    if len(res.table) and not (res.table.status == OK).any():
        first = res.table.run(0)
        return options.fail(f"no run gave a figure: the measurement itself fails (e.g. "
                            f"{first.src}->{first.dst}: {' '.join(first.detail.split())[:200]})")
    if res.verdict.undecidable and not drain_failed:
        return EXIT_UNDECIDABLE
    return 0 if res.verdict.healthy and not drain_failed else 1


def _drain(res, args) -> bool:
    """--drain: the scontrol commands (run with --confirm); True when one failed."""
    if not args.drain:
        return False
    p = drain.plan(res, args.max_drain_fraction)
    run = args.confirm and not res.interrupted
    lines = p.lines(confirmed=run)
    errors = drain.execute(p) if run and p.commands else []
    sys.stdout.write("\n".join(lines + errors) + "\n")
    return bool(errors)


def _launcher(args) -> str:
    """slurm, mpirun or sim (auto: slurm inside an allocation)."""
    if args.launcher != "auto":
        return args.launcher
    in_alloc = bool(os.environ.get("SLURM_JOB_ID")) and shutil.which("srun") is not None
    return "slurm" if in_alloc and not args.all_local else "mpirun"


def _shaping(args) -> dict[str, int]:
    return {"msg_size": args.msg_size, "num_blks": args.num_blks, "num_cmsgs": args.num_cmsgs}


def _unjudged(args, launcher: str) -> str:
    """Why the sweep looks for no reference of the system ('' when it does)."""
    if args.no_reference:
        if args.expect is not None or args.expect_from:
            raise UsageError("--no-reference with --expect or --expect-from: give one")
        return "--no-reference"
    if args.expect is not None:
        return ""
    if launcher == "sim":
        return "a simulation has no system reference"
    if args.test != "txrx":
        return "the system's references are tx/rx streams', not osu_bw's"
    return ""


def _auto_topology(args, names, launcher: str) -> str:
    """Slurm's topology where there is one and it was not refused; what was done, in words."""
    if args.no_topology:
        if args.topology:
            raise UsageError("--no-topology with --topology: give one")
        return "none (--no-topology)"
    if args.topology:
        return f"{args.topology} (--topology)"
    if launcher == "sim":
        return ""
    if launcher != "slurm":
        return "none (Slurm's is read only inside an allocation; or give --topology FILE)"
    spec, why = slurm_topology(names)
    args.topology = spec
    return "Slurm's (scontrol show topology; --no-topology to leave it out)" if spec \
        else f"none: {why}"


def _expected(args, nodes: int) -> Expectation | None:
    """The reference rate of --expect-from; refused before any run when it cannot apply."""
    if args.expect_system and not args.expect_from:
        raise UsageError("--expect-system needs --expect-from")
    if not args.expect_from:
        return None
    if args.expect is not None:
        raise UsageError("give --expect or --expect-from, not both")
    if args.test != "txrx":
        raise UsageError("--expect-from holds tx/rx streams' references: it needs --test txrx "
                         "(with osu_bw give --expect)")
    if not os.path.isfile(args.expect_from):
        raise UsageError(f"--expect-from {args.expect_from}: no such file")
    return from_reference(args.expect_from, args.expect_system, args.method, _shaping(args),
                          nodes)


def _runner(args, names, launcher: str):
    """The runner the options ask for; UsageError when it cannot work here."""
    measure_timeout = max(1.0, args.pair_timeout - 5.0)
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
            raise UsageError(f"osu_bw not found ({measurement.exe}): set OSU_HOME, put it on "
                             "PATH or give --osu-bw")
    slow = specs.parse_slow(args.sim_slow, names)
    down = specs.parse_down(args.sim_down, names)
    if launcher == "sim":
        return SimulatedRunner(names, sigma=args.sim_sigma, slow=slow, down=down,
                               seed=args.seed, unit=measurement.unit,
                               pair_seconds=args.sim_pair_seconds,
                               max_concurrent=args.max_concurrent,
                               run_seconds=args.pair_seconds)
    kw = dict(pair_timeout=args.pair_timeout, max_concurrent=args.max_concurrent,
              pair_seconds=args.pair_seconds)
    if launcher == "slurm" and not os.environ.get("SLURM_JOB_ID"):
        raise UsageError(
            "--launcher slurm runs inside an allocation, e.g. "
            f"salloc -N {len(names)} -w {nodeset.collect(names)} fabric-sweep")
    if args.duplex == "full" and (_step_per(args) != "round" or (
            launcher == "mpirun" and not args.all_local)):
        raise UsageError("--duplex full runs both directions in one step: it needs --step-per "
                         "round and srun (--launcher slurm) or --all-local")
    if _step_per(args) == "round":
        return RoundStepRunner(measurement, launcher=launcher, all_local=args.all_local,
                               mpirun_args=args.mpirun_arg, srun_args=args.srun_arg,
                               duplex=args.duplex, **kw)
    if launcher == "slurm":
        return SlurmRunner(measurement, srun_args=args.srun_arg, **kw)
    return LocalRunner(measurement, all_local=args.all_local, mpirun_args=args.mpirun_arg, **kw)


def _step_per(args) -> str:
    """round or run: one job step per round direction needs a measurement that runs as many
    pairs in one MPI job (txrx.pairs); osu_bw is one pair per job."""
    if args.step_per == "auto":
        return "round" if args.test == "txrx" else "run"
    if args.step_per == "round" and args.test != "txrx":
        raise UsageError("--step-per round runs tx/rx pairs in one MPI job: it needs --test "
                         "txrx (osu_bw is one pair per job: --step-per run)")
    return args.step_per


if __name__ == "__main__":
    raise SystemExit(main())

"""`vcluster`: a local Slurm cluster whose nodes are network namespaces on one machine.

    vcluster up [--nodes 4] [--accounting] [--rate 200mbit|none] [--switches N]
    vcluster down
    vcluster status [--json]
    vcluster env                      # eval $(vcluster env): SLURM_CONF and Open MPI settings
    vcluster degrade NODE RATE [--direction tx|rx|both]   # e.g. vcluster degrade node03 50mbit
    vcluster degrade NODE --loss P [--direction ...]      # drop P % of the frames at random
    vcluster flap NODE [--times N] [--interval S]         # link down and up N times, every S s
    vcluster link-down NODE
    vcluster restore [NODE]           # default rate and link up (every node without NODE)
    vcluster degrade-uplink SWITCH RATE   # a leaf switch's uplink both ways (none: unshaped)
    vcluster up --fat-tree 4x2 | --dragonfly 2x2 [--nodes N]   # a routed fabric (fabric.py)
    vcluster degrade-link A B RATE        # any link: node-switch, leaf-spine, local, global
    vcluster up --preflight [--health-check S]   # lldpd, AMAs, fabric names (docs/health.md)
    vcluster swap-cable NODE_A NODE_B | set-mac NODE MAC | drop-ip NODE | bad-dns NODE

State lives in --state-dir, $VCLUSTER_STATE_DIR, or <tmp>/fabrictest-vcluster.
Errors are one line on stderr: exit status 1 when a command failed, 2 for bad input
(usage, a node name, rate or direction that cannot be).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from pathlib import Path

from . import preflight_plan
from .cluster import Cluster, VClusterError, format_status
from .fabric_spec import DRAGONFLY, FAT_TREE, leaves_of, parse_shape
from .faults import check_flap, parse_loss
from .links import degrade_link
from .plan import DEFAULT_RATE, Plan, PlanError, default_state_dir, node_index
from .shaping import BOTH, DIRECTIONS, parse_rate

USAGE_ERROR = 2


MAX_UP_TIMEOUT = 3600.0  # nodes not idle within an hour will not be


class _Parser(argparse.ArgumentParser):
    """Bad usage is one line and exit status 2 (argparse prints the whole usage)."""

    def error(self, message: str):
        self.exit(USAGE_ERROR, f"vcluster: error: {message} (see vcluster --help)\n")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="vcluster",
        description="Local Slurm cluster over network namespaces (for CI and demos; needs root).",
    )
    ap.add_argument("--state-dir", type=Path, default=None,
                    help="where the cluster keeps its state (default $VCLUSTER_STATE_DIR or "
                         "<tmp>/fabrictest-vcluster)")
    ap.add_argument("-v", "--verbose", action="store_true", help="say what is being done")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    up = sub.add_parser("up", help="create the cluster (idempotent)")
    up.add_argument("--nodes", type=int, default=None,
                    help="number of compute nodes (default 4; with a fabric 2 a leaf)")
    up.add_argument("--accounting", action="store_true",
                    help="also run slurmdbd with MariaDB, so that sacct works (ReFrame's "
                         "`slurm` scheduler)")
    up.add_argument("--rate", default=DEFAULT_RATE,
                    help=f"tbf rate on every node's link (default {DEFAULT_RATE}; 'none' for "
                         "unshaped, noisy links)")
    up.add_argument("--timeout", type=float, default=180, help="seconds to wait for idle nodes")
    up.add_argument("--switches", type=int, default=0,
                    help="leaf switches sw1..swN, nodes dealt in order, each joined to the top "
                         "by its own uplink; Slurm's topology/tree written to match "
                         "(default 0: one bridge)")

    up.add_argument("--preflight", action="store_true",
                    help="the fabric identity pre-flight checks read: lldpd on every node and "
                         "switch port, algorithmic MACs, a fabric address and name per node, "
                         "an inventory (docs/health.md)")
    up.add_argument("--health-check", type=int, default=0, metavar="S",
                    help="Slurm runs fabric-health --drain on every node every S seconds "
                         "(HealthCheckProgram; implies --preflight)")

    up.add_argument("--max-step-count", type=int, default=0, metavar="N",
                    help="Slurm's MaxStepCount: job steps one job may launch (default: "
                         "Slurm's, 40,000); low, it shows a sweep that needs a step per run "
                         "fail (docs/sweep.md)")

    sub.add_parser("down", help="stop everything and remove all state (idempotent)")
    st = sub.add_parser("status", help="nodes, their Slurm states, links and degradations")
    st.add_argument("--json", action="store_true")
    sub.add_parser("env", help="print shell exports for this cluster (eval $(vcluster env))")
    sub.add_parser("hostfile", help="print the path of an Open MPI hostfile of all nodes")

    dg = sub.add_parser("degrade", help="shape one node's link to RATE (e.g. 50mbit) and/or "
                        "drop --loss P %% of its frames")
    dg.add_argument("node")
    dg.add_argument("rate", nargs="?")
    dg.add_argument("--loss", help="percent of the frames dropped at random (e.g. 1 or 0.5%%)")
    dg.add_argument("--direction", choices=DIRECTIONS, default=BOTH,
                    help="tx: what the node sends, rx: what it receives, both (default)")
    fl = sub.add_parser("flap", help="take one node's link down and up again (while a test "
                        "runs); returns when done")
    fl.add_argument("node")
    fl.add_argument("--times", type=int, default=1, help="how many flaps (default 1)")
    fl.add_argument("--interval", type=float, default=1.0,
                    help="seconds from one flap to the next (default 1)")
    ld = sub.add_parser("link-down", help="take one node's link down")
    ld.add_argument("node")
    rs = sub.add_parser("restore", help="default rate and link up for NODE (or every node "
                                        "and uplink)")
    rs.add_argument("node", nargs="?")
    du = sub.add_parser("degrade-uplink",
                        help="shape a leaf switch's uplink both ways to RATE (none: unshaped)")
    du.add_argument("switch")
    du.add_argument("rate")
    _fabric_options(up, sub)
    _preflight_faults(sub)
    return ap


def _preflight_faults(sub) -> None:
    """The pre-flight faults of `up --preflight` (preflight.py)."""
    sc = sub.add_parser("swap-cable", help="two nodes' links exchange their switch ports "
                        "(--preflight)")
    sc.add_argument("node_a")
    sc.add_argument("node_b")
    sm = sub.add_parser("set-mac", help="set a node's fabric NIC's MAC (--preflight)")
    sm.add_argument("node")
    sm.add_argument("mac")
    di = sub.add_parser("drop-ip", help="remove a node's fabric address (--preflight)")
    di.add_argument("node")
    bd = sub.add_parser("bad-dns", help="point a node's fabric name at an address nobody has "
                        "(--preflight)")
    bd.add_argument("node")


def _fabric_options(up, sub) -> None:
    """`up --fat-tree/--dragonfly` and `degrade-link` (a routed fabric, fabric.py)."""
    shape = up.add_mutually_exclusive_group()
    shape.add_argument("--fat-tree", metavar="LEAVESxSPINES",
                       help="a routed fat tree: every leaf joined to every spine, "
                            "destination-mod-k routing; nodes dealt to the leaves (default "
                            "--nodes: 2 a leaf); Slurm's topology.conf written to match")
    shape.add_argument("--dragonfly", metavar="GROUPSxSWITCHES",
                       help="a routed dragonfly (the Slingshot notes' 2x2: 2 groups of 2 "
                            "switches): local links in a group, global links between groups")
    dl = sub.add_parser("degrade-link", help="shape any link both ways to RATE: a node's "
                        "(NODE SWITCH), a leaf-spine, local or global link (SWITCH SWITCH); "
                        "none: unshaped again (a node's: the default rate)")
    dl.add_argument("a")
    dl.add_argument("b")
    dl.add_argument("rate")


def _fabric_of(args) -> tuple[str, int | None]:
    """The plan's `fabric` value and the node count it implies when --nodes is not given."""
    for kind, value in ((FAT_TREE, args.fat_tree), (DRAGONFLY, args.dragonfly)):
        if value is not None:
            shape = parse_shape(kind, value)
            return f"{kind}:{shape[1]}x{shape[2]}", 2 * leaves_of(shape)
    return "", None


NODE_FAULTS = ("swap-cable", "set-mac", "drop-ip", "bad-dns")


def _node_fault(args, state_dir: Path) -> str:
    """The pre-flight faults: bad input refused before the cluster is looked for."""
    nodes = [args.node_a, args.node_b] if args.command == "swap-cable" else [args.node]
    for n in nodes:
        node_index(n)
    if args.command == "swap-cable" and args.node_a == args.node_b:
        raise PlanError(f"swap-cable needs two nodes, not {args.node_a} twice")
    if args.command == "set-mac":
        preflight_plan.parse_mac(args.mac)
    cluster = _existing(state_dir, args.verbose)
    return cluster.node_fault(args.command, nodes, getattr(args, "mac", None))


def _existing(state_dir: Path, verbose: bool) -> Cluster:
    cluster = Cluster.load(state_dir, log=_logger(verbose))
    if cluster is None:
        raise VClusterError(f"no cluster in {state_dir}: run `vcluster up`")
    return cluster


def _logger(verbose: bool):
    if not verbose:
        return None
    return lambda msg: print(f"vcluster: {msg}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    state_dir = (args.state_dir or default_state_dir()).resolve()
    try:
        if args.command == "up":
            if not (math.isfinite(args.timeout) and 0 < args.timeout <= MAX_UP_TIMEOUT):
                raise PlanError(f"--timeout must be a number of seconds in (0, "
                                f"{MAX_UP_TIMEOUT:g}], not {args.timeout:g}")
            rate = None if str(args.rate).lower() in ("none", "0", "") else args.rate
            fabric, per_fabric = _fabric_of(args)
            nodes = args.nodes if args.nodes is not None else per_fabric or 4
            if args.health_check:
                preflight_plan.check_health_interval(args.health_check)
            plan = Plan(state_dir=state_dir, nodes=nodes, accounting=args.accounting,
                        default_rate=rate, switches=args.switches, fabric=fabric,
                        preflight=args.preflight or bool(args.health_check),
                        health_check=args.health_check,
                        max_step_count=args.max_step_count)
            t0 = time.monotonic()
            what = Cluster(plan, log=_logger(args.verbose)).up(timeout=args.timeout)
            print(f"vcluster {what}: {plan.nodes} nodes idle in {time.monotonic() - t0:.1f}s "
                  f"({state_dir}); use it with: source {plan.env_file}")
        elif args.command == "down":
            cluster = Cluster.load(state_dir, log=_logger(args.verbose)) or Cluster(
                Plan(state_dir=state_dir), log=_logger(args.verbose))
            cluster.check_host()
            cluster.down()
            print("vcluster down")
        elif args.command == "status":
            info = _existing(state_dir, args.verbose).status()
            print(json.dumps(info, indent=1) if args.json else format_status(info))
        elif args.command == "env":
            plan = _existing(state_dir, args.verbose).plan
            for k, v in plan.env().items():
                print(f"export {k}={shlex.quote(v)}")
        elif args.command == "hostfile":
            print(_existing(state_dir, args.verbose).plan.hostfile)
        elif args.command == "degrade":
            # bad input is refused before the cluster is looked for
            node_index(args.node)
            if args.rate is None and args.loss is None:
                raise PlanError("degrade needs a RATE, --loss P, or both")
            if args.rate is not None:
                parse_rate(args.rate)
            loss = parse_loss(args.loss) if args.loss is not None else None
            cluster = _existing(state_dir, args.verbose)
            if args.rate is not None:
                print(cluster.degrade(args.node, args.rate, args.direction))
            if loss is not None:
                print(cluster.lose(args.node, loss, args.direction))
        elif args.command == "flap":
            node_index(args.node)
            check_flap(args.times, args.interval)
            print(_existing(state_dir, args.verbose).flap(args.node, args.times, args.interval))
        elif args.command == "degrade-uplink":
            if str(args.rate).lower() != "none":
                parse_rate(args.rate)
            print(_existing(state_dir, args.verbose).degrade_uplink(args.switch, args.rate))
        elif args.command == "degrade-link":
            if str(args.rate).lower() != "none":
                parse_rate(args.rate)
            print(degrade_link(_existing(state_dir, args.verbose), args.a, args.b, args.rate))
        elif args.command == "link-down":
            node_index(args.node)
            print(_existing(state_dir, args.verbose).link_down(args.node))
        elif args.command in NODE_FAULTS:
            print(_node_fault(args, state_dir))
        elif args.command == "restore":
            if args.node:
                node_index(args.node)
            print(_existing(state_dir, args.verbose).restore(args.node))
    except PlanError as err:  # a request that describes no cluster or link: bad input
        print(f"vcluster: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    except VClusterError as err:
        print(f"vcluster: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("vcluster: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

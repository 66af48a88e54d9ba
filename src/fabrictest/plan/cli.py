"""`fabric-plan`: the acceptance's jobs, node-hours and wall time, before anything runs.

Examples:
    fabric-plan --system slingshot                                  # its own topology
    fabric-plan --system slingshot --topology /etc/slurm/topology.conf
    fabric-plan --system slingshot --generate dragonfly:groups=25,switches=25,nodes=16
    fabric-plan --system slingshot --generate fattree:pods=25,leaves=25,nodes=16 --json p.json
    fabric-plan --system slingshot --topology t.conf --from-run output/reports/run-report-X.json

The job list is `reframe --dry-run --mode acceptance` of the system over that topology
(plan/dry_run.py). Exit status 0 with the plan printed; 2 for bad input (one line on stderr);
1 when the dry run gives no job list (ReFrame missing, the configuration refused).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from ..parsers.errors import ParseError
from ..parsers.node_sets import NodeSets, derive_node_sets
from ..parsers.topology import Topology, natural
from ..sweep.core import DEFAULT_ROUNDS
from ..sweep.options import OneLineParser, UsageError, parse_number
from ..sweep.outfile import OutputPathError
from ..topology_source import TopologyError, read_topology
from .dry_run import DryRunError, dry_run
from .generate import GenerateError, topology_conf
from .jobs import follow_dependencies, job_of, ordered
from .minutes import DEFAULT_PAIR_SECONDS, counters_seconds, expected
from .output import Plan, json_target_problem, text, write_json
from .schedule import schedule

REPO = Path(__file__).resolve().parents[3]
SYSTEMS = REPO / "config" / "reframe" / "systems"


class InputError(ValueError):
    """Bad input: one line, exit 2."""


def _parser() -> OneLineParser:
    p = OneLineParser(prog="fabric-plan", description=__doc__.split("\n\n")[0])
    p.add_argument("--system", required=True, help="a system of config/reframe/systems/")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--topology", metavar="FILE",
                       help="a Slurm topology.conf (or scontrol show topology, or ours)")
    where.add_argument("--generate", metavar="SPEC",
                       help="dragonfly:groups=G,switches=S,nodes=N or "
                            "fattree:pods=P,leaves=L,nodes=N")
    p.add_argument("--json", metavar="FILE", help="the plan as JSON (a new file, or a plan)")
    p.add_argument("--from-run", metavar="REPORT", action="append", default=[],
                   help="a ReFrame run report of this system: its cases' run times")
    p.add_argument("--pair-seconds", type=parse_number, default=DEFAULT_PAIR_SECONDS,
                   help=f"seconds of one sweep run (default {DEFAULT_PAIR_SECONDS:g})")
    return p


def _nodes_of(topo: Topology) -> list[str]:
    return sorted({n for leaf in topo.leaves() for n in topo.switches[leaf].nodes}, key=natural)


def _measured(paths: list[str], system: str) -> dict[str, float]:
    """case name -> seconds it ran, from run reports of ``system`` (the last report wins)."""
    out: dict[str, float] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
            cases = [c for run in data["runs"] for c in run["testcases"]]
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
            raise InputError(f"--from-run {path}: not a ReFrame run report "
                             f"({getattr(err, 'strerror', None) or err})") from None
        for c in cases:
            t = c.get("time_run") if isinstance(c, dict) else None
            if (str(c.get("system", "")).split(":")[0] == system and c.get("result") == "pass"
                    and isinstance(t, (int, float)) and 0 < t < 7 * 86400):
                out[c["display_name"]] = float(t)
    return out


def _topology(args, work: Path) -> tuple[Path | None, Topology | None, str]:
    if args.generate:
        path = work / "topology.conf"
        path.write_text(topology_conf(args.generate))
        return path, read_topology(str(path)), f"generated {args.generate}"
    if args.topology:
        return Path(args.topology), read_topology(args.topology), args.topology
    return None, None, "the system's own"


def build(args, work: Path) -> Plan:
    if not (SYSTEMS / f"{args.system}.py").is_file() or args.system.startswith("_"):
        known = ", ".join(sorted(p.stem for p in SYSTEMS.glob("[!_]*.py")))
        raise InputError(f"--system {args.system}: no such system (one of {known})")
    if not (0 < args.pair_seconds <= 3600):
        raise InputError(f"--pair-seconds {args.pair_seconds:g}: between 0 and 3600")
    measured = _measured(args.from_run, args.system)
    path, topo, where = _topology(args, work)
    nodes = _nodes_of(topo) if topo else None
    if topo is not None and len(nodes) < 2:
        raise InputError(f"--topology {where}: {len(nodes)} node(s), a plan needs 2")
    run = dry_run(args.system, work, path, nodes, REPO)
    part = run.partitions[0] if run.partitions else {}
    if topo is None and part.get("topology") and "\n" not in part["topology"]:
        topo = read_topology(str(REPO / part["topology"]))
        where = part["topology"]
        nodes = _nodes_of(topo)
    sets = derive_node_sets(topo) if topo else NodeSets()
    all_nodes = nodes or [f"node{i}" for i in range(1, int(part.get("num_nodes", 1)) + 1)]
    jobs = ordered(follow_dependencies([job_of(c, sets) for c in run.cases]))
    figures, unplanned = {}, []
    for j in jobs:
        # the rounds its job script tells fabric-sweep, else fabric-sweep's own default
        rounds = j.case.sweep_rounds or DEFAULT_ROUNDS
        e = expected(j, measured, args.pair_seconds, rounds)
        if e is None:
            unplanned.append(j.case.name)
        else:
            figures[j.case.name] = e
    planned = [(j, figures[j.case.name].seconds) for j in jobs if j.case.name in figures]
    slots = schedule(planned, all_nodes, int(part.get("max_jobs") or 1))
    return Plan(system=args.system, topology=where, nodes=len(all_nodes),
                dry_run_s=run.seconds, slots=slots, expected=figures,
                counters_s={j.case.name: counters_seconds(j) for j, _s in planned},
                unplanned=unplanned)


def main(argv=None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.json:
            problem = json_target_problem(args.json)
            if problem:
                raise InputError(f"--json {args.json}: {problem}")
            parent = Path(args.json).parent
            if not parent.is_dir():
                raise InputError(f"--json {args.json}: directory {parent} does not exist")
        with tempfile.TemporaryDirectory(prefix="fabric-plan-") as tmp:
            plan = build(args, Path(tmp))
        sys.stdout.write(text(plan))
        if args.json:
            write_json(plan, args.json)
    except (UsageError, InputError, GenerateError, TopologyError) as err:
        print(f"fabric-plan: {err}", file=sys.stderr)
        return 2
    except OutputPathError as err:
        print(f"fabric-plan: --json {args.json}: {err}", file=sys.stderr)
        return 2
    except (DryRunError, OSError, ParseError) as err:
        print(f"fabric-plan: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

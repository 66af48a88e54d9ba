"""`fabric-report attribute`: what a run's failures share (a node, a switch, an uplink).

    fabric-report attribute --report output/reports/run-report-UUID.json [--topology slurm]
    fabric-report attribute --session UUID --topology topology.conf [--json out.json]
    fabric-report attribute --report FILE --topology slurm --routing dmodk   (a fat tree)
    fabric-report attribute --sweep sweep.json --topology slurm --routing dmodk

Exits 0 when nothing failed, 1 when some test case failed (the suspect named, or "the
failures share nothing"), 2 when there is nothing to read or an option makes no sense.
"""

from __future__ import annotations

import json
import sys

from fabrictest.report.attribute.failures import (
    CaseError,
    attribute,
    cases_from_records,
    cases_from_sweep,
    cases_from_testcases,
)
from fabrictest.report.attribute.topology import load_topology
from fabrictest.report.options import add_sources
from fabrictest.report.records.results import ResultsError
from fabrictest.report.records.sources import check, read, writable_file
from fabrictest.report.records.sources import write_json as _write_json


def _sweep_cases(path: str):
    """(label, cases) of a fabric-sweep JSON file."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        why = getattr(err, "strerror", None) or str(err).splitlines()[0]
        raise ResultsError(f"--sweep {path}: {why}") from None
    try:
        return f"sweep {path}", cases_from_sweep(data)
    except CaseError as err:
        raise ResultsError(f"--sweep {path}: {err}") from None


def run(args) -> int:
    given = len(args.sources) + (1 if args.sweep else 0)
    if given != 1:
        raise ResultsError("attribute takes one source (--session, --tag, --report, "
                           f"--perflog or --sweep), got {given}")
    if args.json:
        writable_file("--json", args.json)
    if args.routing and not args.topology:
        raise ResultsError("--routing needs --topology")
    topo = load_topology(args.topology, args.routing) if args.topology else None
    if args.sweep:
        label, cases = _sweep_cases(args.sweep)
        option = "--sweep"
    else:
        src = args.sources[0]
        check(src)
        label, option = src.label, src.option
        res = read(src, need_figures=False)  # a failed sanity check has none
        try:
            cases = (cases_from_testcases(res.testcases) if res.testcases
                     else cases_from_records(res.records))
        except CaseError as err:
            raise ResultsError(f"{option}: {err}") from None
    if not cases:
        raise ResultsError(f"{option}: no test case that passed or failed in it")
    if topo is not None:
        where = topo.switch_of()
        if not any(n in where for c in cases for n in c.nodes):
            raise ResultsError(f"--topology {args.topology} places none of the run's nodes")
    result = attribute(cases, topo)
    if args.json:
        _write_json(args.json, {"source": label, **result.to_dict()})
    sys.stdout.write("\n".join(result.lines) + "\n")
    return result.status


def add_parser(sub) -> None:
    a = sub.add_parser(
        "attribute", help="name what a run's failures share (node, switch, uplink)",
        description=__doc__.split("\n\n")[0])
    add_sources(a, "sources (the run to attribute; several are pooled, the last run of each case counts)")
    a.add_argument("--topology", metavar="FILE|slurm",
                   help="which switch each node hangs from: a topology.conf (tree or block), "
                        "the output of `scontrol show topology`, our own file (SWITCH: NODES "
                        "parent=SWITCH), or `slurm` to ask scontrol; switches and links are "
                        "then counted too")
    a.add_argument("--routing", choices=("dmodk",),
                   help="the fabric's routing rule, so that a run's links can be told on a fat "
                        "tree or a dragonfly (dmodk: InfiniBand's destination-mod-k); default: "
                        "not known (a leaf's uplinks, a group pair's global links as bundles)")
    a.add_argument("--sweep", metavar="FILE",
                   help="attribute a fabric-sweep --json file instead: each run is a case of its "
                        "link, failed below the sweep's cut")
    a.add_argument("--json", metavar="PATH", help="also write the verdict and suspects as JSON")
    a.set_defaults(func=run)

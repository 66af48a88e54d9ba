"""`fabric-report`: regression comparison and an offline HTML report of ReFrame results.

    fabric-report compare --tag stack=pre-upgrade --tag stack=post-upgrade
    fabric-report compare --session UUID_A --session UUID_B [--tolerance 0.1]
    fabric-report compare --against-references --session UUID   (or --report FILE)
    fabric-report html --report output/reports/run-report-UUID.json --sweep sweep.json -o report/
    fabric-report html --tag stack=pre-upgrade --tag stack=post-upgrade -o report/
    fabric-report history --system vcluster --since 30d   (change points over the sessions)
    fabric-report attribute --report FILE [--topology FILE|slurm]   (what the failures share)
    fabric-report counters --report FILE   (every node's counters over the whole run)
    fabric-report acceptance --report FILE -o DIR   (one page over the three stages, verdict first)

Sources, in the order given: `--session UUID|QUERY` (a stored session, through `reframe
--describe-stored-sessions`), `--tag KEY=VALUE[,KEY=VALUE]` (the stored sessions run with
`--session-extras KEY=VALUE`), `--report FILE` (a JSON run report), `--perflog PATH` (perflog
file or directory). The first is the base, the second the target. `compare` exits 0 when
figures were compared and none regressed, 1 when one regressed (or has no value in the
target, or with `--drop` cannot see that drop with the runs given), 2 when nothing could be
compared (a source missing, empty or unreadable, no figure in common) or an option makes no
sense.
"""

from __future__ import annotations

import argparse
import sys

from fabrictest.report.acceptance import cmd as acceptance
from fabrictest.report.attribute import cmd as attribute
from fabrictest.report.calibrate import cmd as calibrate
from fabrictest.report.compare import cmd as compare
from fabrictest.report.counters import cmd as counters
from fabrictest.report.history import cmd as history
from fabrictest.report.html import cmd as html
from fabrictest.report.options import Parser
from fabrictest.report.records.results import ResultsError
from fabrictest.report.records.units import UnitError

#: the subcommands, in the order --help lists them: each adds its parser (`add_parser(sub)`,
#: which sets `func` to its `run(args)`)
COMMANDS = (compare, html, calibrate, history, attribute, counters, acceptance)


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(
        prog="fabric-report", description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return ap


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv  # calibrate records its command line
    try:
        return args.func(args)
    except (ResultsError, UnitError) as err:
        print(f"fabric-report: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

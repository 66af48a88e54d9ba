"""`fabric-report compare`: two result sets (base, target), or one against its references.

Exit 0 when figures were compared and none regressed, 1 when one regressed (or has no value
in the target, or with `--drop` cannot see that drop with the runs given), 2 when nothing could be compared (a source missing, empty or unreadable, no
figure in common) or an option makes no sense.
"""

from __future__ import annotations

import sys

from fabrictest.report.compare import runs_needed
from fabrictest.report.compare.rows import NOISE_FACTOR, against_references, compare
from fabrictest.report.compare.text import compared, render_table, verdict
from fabrictest.report.options import add_sources, fraction, load, positive, tolerance
from fabrictest.report.records.results import ResultsError
from fabrictest.report.records.sessions import mixed_checkouts
from fabrictest.report.records.sources import check, writable_file
from fabrictest.report.records.sources import write_json as _write_json
from fabrictest.robust import MAD_TO_SIGMA


def add_parser(sub) -> None:
    c = sub.add_parser("compare", help="compare two result sets, or one against references")
    add_sources(c)
    c.add_argument("--against-references", action="store_true")
    c.add_argument("--tolerance", type=tolerance, default=None,
                   help="fraction in [0, 1) a figure may move in the bad direction (default "
                        "0.10; with --against-references: the references' own bands)")
    c.add_argument("--noise-factor", type=positive, default=NOISE_FACTOR, metavar="K",
                   help="with 3 or more sessions on each side, a change must also exceed K "
                        f"times the sessions' combined relative spread ({MAD_TO_SIGMA:g} x MAD) and "
                        f"leave the base's range to count (default {NOISE_FACTOR:g})")
    c.add_argument("--drop", type=fraction, default=None, metavar="FRACTION",
                   help="with 3 or more sessions a side: say how many runs a side the noise "
                        f"needs to see this drop (default {runs_needed.DROP:g}); given, a "
                        "figure that cannot see it with the runs given fails (exit 1)")
    c.add_argument("--allow-missing", action="store_true",
                   help="a figure of the base missing from the target (a target that ran "
                        "fewer tests) does not fail the comparison")
    c.add_argument("--only-moved", action="store_true", help="print only rows that are not ok")
    c.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    c.set_defaults(func=run)


def run(args) -> int:
    if args.against_references:
        if len(args.sources) != 1:
            raise ResultsError("--against-references takes exactly one source")
    elif len(args.sources) != 2:
        raise ResultsError("compare needs two sources (base, target) or "
                           "--against-references and one")
    for src in args.sources:
        check(src)
    if args.json:
        writable_file("--json", args.json)
    if args.against_references:
        src = load(args.sources[0])
        rows = against_references(src.records, args.tolerance)
        base_label, target_label, tol = "reference", src.label, args.tolerance
        unreadable = src.unreadable
        if not compared(rows):
            raise ResultsError(
                f"{args.sources[0].option}: none of its {len(rows)} figures has a reference "
                "to compare with")
    else:
        a, b = (load(s) for s in args.sources)
        tol = 0.10 if args.tolerance is None else args.tolerance
        rows = compare(a.records, b.records, tol, args.noise_factor)
        base_label, target_label = a.label, b.label
        unreadable = a.unreadable + b.unreadable
        for side in (a, b):  # a site's shared database: say when a side mixes checkouts
            mixed = mixed_checkouts(side.sessions)
            if mixed:
                print(f"fabric-report: note: {side.label}: {mixed}", file=sys.stderr)
        if not compared(rows):
            n_a = len({(r.test, r.sysenv, r.pvar) for r in a.records})
            n_b = len({(r.test, r.sysenv, r.pvar) for r in b.records})
            raise ResultsError(
                f"nothing to compare: no figure of the base ({n_a} figures) has a value in the "
                f"target ({n_b} figures)")
    drop = runs_needed.DROP if args.drop is None else args.drop
    blind = [] if args.against_references else runs_needed.judge(rows, drop, tol)
    power = None if args.against_references else runs_needed.statement(rows, drop, tol)
    line, status = verdict(rows, unreadable, tol, args.allow_missing, args.against_references)
    line, status = runs_needed.amend(line, status, blind, drop, args.drop is not None)
    if args.json:
        _write_json(args.json, {"base": base_label, "target": target_label, "tolerance": tol,
                                "rows": [r.to_dict() for r in rows], "verdict": line,
                                "unreadable": unreadable, "runs_needed": power})
    if args.only_moved:
        rows = [r for r in rows if r.status != "ok"]
    if power:  # said before the rows: what this noise lets the comparison see
        print(f"fabric-report: note: {power}", file=sys.stderr, flush=True)
    sys.stdout.write(render_table(rows, base_label, target_label) + "\n" + line + "\n")
    return status

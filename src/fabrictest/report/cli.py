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
target), 2 when nothing could be compared (a source missing, empty or unreadable, no figure
in common) or an option makes no sense.
"""

from __future__ import annotations

import argparse
import math
import sys

from fabrictest.report.acceptance.cmd import add_parser as add_acceptance
from fabrictest.report.attribute.cmd import add_parser as add_attribute
from fabrictest.report.calibrate.cmd import cmd_calibrate
from fabrictest.report.calibrate.method import FACTOR, FLOOR, MAX_BOUND
from fabrictest.report.compare.rows import NOISE_FACTOR, against_references, compare
from fabrictest.report.compare.text import compared, headline, render_table, verdict
from fabrictest.report.counters.cmd import add_parser as add_counters
from fabrictest.report.counters.cmd import html_section as run_counters_section
from fabrictest.report.history.cmd import add_parser as add_history
from fabrictest.report.records.outfiles import write_text
from fabrictest.report.records.results import ResultsError, ResultSet, mixed_checkouts
from fabrictest.report.records.sources import Source, check, read, writable_dir, writable_file
from fabrictest.report.records.sources import write_json as _write_json
from fabrictest.report.records.sweep_files import read_sweep as _read_sweep
from fabrictest.report.records.sweep_files import sweeps_from as _sweeps_from
from fabrictest.report.records.units import UnitError
from fabrictest.report.records.words import counted
from fabrictest.robust import MAD_TO_SIGMA


class _Parser(argparse.ArgumentParser):
    """Bad usage is one line and exit 2, like every other refusal of this command."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


class _Source(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        kind = option_string.lstrip("-")
        ns.sources = [*(ns.sources or []), Source(kind, values)]


def _add_sources(p: argparse.ArgumentParser,
                 title: str = "sources (the first is the base, the second the target)") -> None:
    g = p.add_argument_group(title)
    g.add_argument("--session", action=_Source, metavar="UUID|QUERY")
    g.add_argument("--tag", action=_Source, metavar="KEY=VALUE[,KEY=VALUE]")
    g.add_argument("--report", action=_Source, metavar="FILE|GLOB")
    g.add_argument("--perflog", action=_Source, metavar="PATH")
    p.set_defaults(sources=[])


def tolerance(text: str) -> float:
    """A fraction in [0, 1): beyond it a figure regressed (1 or more could never fail for a
    rate, a negative one would call improvements regressions)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0 <= value < 1:
        raise argparse.ArgumentTypeError(
            f"{text} is not a fraction in [0, 1) (0.1 means 10%)")
    return value


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


class Loaded:
    def __init__(self, src: Source, res: ResultSet):
        self.label = src.label
        self.records = res.records
        self.testcases = res.testcases
        self.unreadable = res.unreadable
        self.sessions = res.sessions


def _load(src: Source) -> Loaded:
    res = read(src)
    for note in res.notes:  # what was not read, and why
        print(f"fabric-report: note: {note}", file=sys.stderr)
    return Loaded(src, res)


def cmd_compare(args) -> int:
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
        src = _load(args.sources[0])
        rows = against_references(src.records, args.tolerance)
        base_label, target_label, tol = "reference", src.label, args.tolerance
        unreadable = src.unreadable
        if not compared(rows):
            raise ResultsError(
                f"{args.sources[0].option}: none of its {len(rows)} figures has a reference "
                "to compare with")
    else:
        a, b = (_load(s) for s in args.sources)
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
    line, status = verdict(rows, unreadable, tol, args.allow_missing, args.against_references)
    if args.json:
        _write_json(args.json, {"base": base_label, "target": target_label, "tolerance": tol,
                                "rows": [r.to_dict() for r in rows], "verdict": line,
                                "unreadable": unreadable})
    if args.only_moved:
        rows = [r for r in rows if r.status != "ok"]
    sys.stdout.write(render_table(rows, base_label, target_label) + "\n" + line + "\n")
    return status


def cmd_html(args) -> int:
    if not args.sources and not args.sweep:
        raise ResultsError("nothing to report: give a source (--session, --tag, --report, "
                           "--perflog) or --sweep")
    if len(args.sources) > 2:
        raise ResultsError(f"html takes at most two sources (base, target), "
                           f"got {len(args.sources)}")
    for src in args.sources:
        check(src)
    sweeps = [(path, _read_sweep(path)) for path in args.sweep]
    outdir = writable_dir("-o", args.output)

    from fabrictest.report.compare.ratios import ratio_plot, ratio_rows
    from fabrictest.report.html import page
    from fabrictest.report.page import plots

    loaded = [_load(s) for s in args.sources]
    target = loaded[-1] if loaded else None
    records = target.records if target else []
    comparison, comparison_head = None, ""
    tol = 0.10 if args.tolerance is None and len(loaded) == 2 else args.tolerance
    if len(loaded) == 2:
        comparison = (loaded[0].label, target.label,
                      compare(loaded[0].records, records, tol))
    elif target:
        comparison = ("reference", target.label, against_references(records, args.tolerance))
    if comparison:
        comparison_head = headline(comparison[2], tol, against_references=len(loaded) == 1)
        comparison = (*comparison, comparison_head)
    if target:
        sweeps += _sweeps_from(target.testcases)
    rows = ratio_rows(records, loaded[0].records if len(loaded) == 2 else ())
    ratios = (rows, ratio_plot(rows, outdir), len(loaded) == 2)
    sweep_views = []
    for i, (label, data) in enumerate(sweeps):
        sweep_views.append((label, data, plots.sweep_views(data, outdir, tag=f"sweep{i}")))
    text = page.page(
        title=args.title,
        sources=[s.option.lstrip("-") for s in args.sources]
        + [f"sweep {p}" for p in args.sweep],
        records=records,
        size_images=plots.size_curves(records, outdir),
        stream_images=plots.stream_rates(records, outdir),
        sweeps=sweep_views,
        comparison=comparison,
        outdir=outdir,
        embed=args.embed,
        ratios=ratios,
        history=_history_section(args, records, outdir),
        run_counters=run_counters_section(target) if target else "",
    )
    index = outdir / "index.html"
    write_text(index, text, "-o")
    unreadable = sum(x.unreadable for x in loaded)
    head = f"; {comparison_head}" if comparison_head else ""
    print(f"wrote {index} ({counted(len(records), 'figure')}, "
          f"{counted(len(sweep_views), 'sweep')}, {counted(unreadable, 'unreadable entry', 'unreadable entries')})"
          f"{head}")
    return 0


def _history_section(args, records, outdir):
    """With --history: the change points over every stored session of the report's system."""
    if not args.history:
        return None
    from fabrictest.report.history.cmd import html_section

    systems = sorted({r.system for r in records})
    return html_section(systems[0] if len(systems) == 1 else None, outdir, args.embed)


def fraction(text: str) -> float:
    value = positive(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text} is not a fraction in (0, 1)")
    return value


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="fabric-report", description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare", help="compare two result sets, or one against references")
    _add_sources(c)
    c.add_argument("--against-references", action="store_true")
    c.add_argument("--tolerance", type=tolerance, default=None,
                   help="fraction in [0, 1) a figure may move in the bad direction (default "
                        "0.10; with --against-references: the references' own bands)")
    c.add_argument("--noise-factor", type=positive, default=NOISE_FACTOR, metavar="K",
                   help="with 3 or more sessions on each side, a change must also exceed K "
                        f"times the sessions' combined relative spread ({MAD_TO_SIGMA:g} x MAD) and "
                        f"leave the base's range to count (default {NOISE_FACTOR:g})")
    c.add_argument("--allow-missing", action="store_true",
                   help="a figure of the base missing from the target (a target that ran "
                        "fewer tests) does not fail the comparison")
    c.add_argument("--only-moved", action="store_true", help="print only rows that are not ok")
    c.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    c.set_defaults(func=cmd_compare)
    h = sub.add_parser("html", help="write index.html and PNG plots")
    _add_sources(h)
    h.add_argument("--sweep", action="append", default=[], metavar="JSON",
                   help="a `fabric-sweep --json` file (repeat)")
    h.add_argument("-o", "--output", default="report", help="output directory (default report/)")
    h.add_argument("--title", default="fabrictest report")
    h.add_argument("--tolerance", type=tolerance, default=None)
    h.add_argument("--embed", action="store_true", help="embed the PNGs in the HTML (base64)")
    h.add_argument("--history", action="store_true",
                   help="add the change points of every figure over the stored sessions of "
                        "the report's system (as `fabric-report history`), a plot per figure")
    h.set_defaults(func=cmd_html)
    k = sub.add_parser(
        "calibrate", help="write reference/<system>.yaml entries from 3 or more sessions",
        description="reference = the sessions' median; bound = the largest of --floor, "
                    f"--factor x the noise ({MAD_TO_SIGMA:g} MAD, corrected for the number of sessions "
                    "and the median's own error) and the farthest session, on the side that "
                    "matters "
                    "(rates: lower, times: upper). Merged into the system's reference file; "
                    "other tests, entries, comments and provenance are kept as they are.")
    _add_sources(k)
    k.add_argument("--system", help="the system to calibrate (default: the sessions' only one)")
    k.add_argument("--factor", type=positive, default=FACTOR,
                   help=f"times the robust spread ({MAD_TO_SIGMA:g} x MAD) (default {FACTOR:g})")
    k.add_argument("--floor", type=fraction, default=FLOOR,
                   help=f"the tightest bound, a fraction (default {FLOOR:g})")
    k.add_argument("--max-bound", type=positive, default=MAX_BOUND,
                   help="refuse a figure whose bound would be wider than this fraction "
                        f"(default {MAX_BOUND:g})")
    k.add_argument("--only", metavar="REGEX", help="figures whose 'test figure' matches")
    k.add_argument("--exclude", metavar="REGEX", help="leave out figures whose 'test figure' "
                                                      "matches")
    k.add_argument("--reference-dir", metavar="DIR",
                   help="where <system>.yaml is (default $RFM_REFERENCE_PREFIX, else reference/)")
    k.add_argument("-o", "--output", metavar="FILE", help="write this file instead")
    k.add_argument("--dry-run", action="store_true",
                   help="print the entries and the file's diff, write nothing")
    k.set_defaults(func=cmd_calibrate)
    add_history(sub, tolerance)
    add_attribute(sub, _add_sources)
    add_counters(sub, _add_sources)
    add_acceptance(sub, _add_sources)
    return ap


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    try:
        if args.func is cmd_calibrate:
            return cmd_calibrate(args, argv)  # it records its command line
        return args.func(args)
    except (ResultsError, UnitError) as err:
        print(f"fabric-report: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

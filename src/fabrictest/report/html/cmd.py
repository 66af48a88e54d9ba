"""`fabric-report html`: one offline page (index.html and PNGs beside it) of a run, of two
runs compared, or of sweeps."""

from __future__ import annotations

from fabrictest.report.compare.rows import against_references, compare
from fabrictest.report.compare.text import headline
from fabrictest.report.counters.runs import html_section as run_counters_section
from fabrictest.report.options import add_sources, load, tolerance
from fabrictest.report.records.outfiles import write_text
from fabrictest.report.records.results import ResultsError
from fabrictest.report.records.sources import check, writable_dir
from fabrictest.report.records.sweep_files import read_sweep as _read_sweep
from fabrictest.report.records.sweep_files import sweeps_from as _sweeps_from
from fabrictest.report.records.words import counted


def add_parser(sub) -> None:
    h = sub.add_parser("html", help="write index.html and PNG plots")
    add_sources(h)
    h.add_argument("--sweep", action="append", default=[], metavar="JSON",
                   help="a `fabric-sweep --json` file (repeat)")
    h.add_argument("-o", "--output", default="report", help="output directory (default report/)")
    h.add_argument("--title", default="fabrictest report")
    h.add_argument("--tolerance", type=tolerance, default=None)
    h.add_argument("--embed", action="store_true", help="embed the PNGs in the HTML (base64)")
    h.add_argument("--history", action="store_true",
                   help="add the change points of every figure over the stored sessions of "
                        "the report's system (as `fabric-report history`), a plot per figure")
    h.set_defaults(func=run)


def run(args) -> int:
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

    loaded = [load(s) for s in args.sources]
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
    from fabrictest.report.history.view import html_section

    systems = sorted({r.system for r in records})
    return html_section(systems[0] if len(systems) == 1 else None, outdir, args.embed)

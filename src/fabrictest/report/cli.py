"""`fabric-report`: regression comparison and an offline HTML report of ReFrame results.

    fabric-report compare --tag stack=pre-upgrade --tag stack=post-upgrade
    fabric-report compare --session UUID_A --session UUID_B [--tolerance 0.1]
    fabric-report compare --against-references --session UUID   (or --report FILE)
    fabric-report html --report output/reports/run-report-UUID.json --sweep sweep.json -o report/
    fabric-report html --tag stack=pre-upgrade --tag stack=post-upgrade -o report/

Sources, in the order given: `--session UUID|QUERY` (a stored session, through `reframe
--describe-stored-sessions`), `--tag KEY=VALUE[,KEY=VALUE]` (the stored sessions run with
`--session-extras KEY=VALUE`), `--report FILE` (a JSON run report), `--perflog PATH` (perflog
file or directory). The first is the base, the second the target. `compare` exits 1 when a
figure regressed beyond tolerance.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from .compare import against_references, compare, render_table
from .results import (
    PerfRecord,
    ResultsError,
    describe_sessions,
    load_perflogs,
    records_from_report,
    tag_query,
    testcases_from_report,
)


class _Source(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        kind = option_string.lstrip("-")
        ns.sources = [*(ns.sources or []), (kind, values)]


def _add_sources(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sources (the first is the base, the second the target)")
    g.add_argument("--session", action=_Source, metavar="UUID|QUERY")
    g.add_argument("--tag", action=_Source, metavar="KEY=VALUE[,KEY=VALUE]")
    g.add_argument("--report", action=_Source, metavar="FILE")
    g.add_argument("--perflog", action=_Source, metavar="PATH")
    p.set_defaults(sources=[])


class Loaded:
    def __init__(self, label: str, records: list[PerfRecord], testcases: list[dict]):
        self.label = label
        self.records = records
        self.testcases = testcases


def load(kind: str, value: str) -> Loaded:
    if kind == "session":
        data = describe_sessions(value)
        label = value[:8] if re.fullmatch(r"[0-9a-f-]{36}", value) else value
        return Loaded(label, records_from_report(data, value), testcases_from_report(data))
    if kind == "tag":
        query = tag_query(value.split(","))
        data = describe_sessions(query)
        return Loaded(value, records_from_report(data, value), testcases_from_report(data))
    if kind == "report":
        try:
            data = json.loads(Path(value).read_text())
        except (OSError, ValueError) as err:
            raise ResultsError(f"{value}: not a ReFrame JSON run report ({err})") from err
        return Loaded(Path(value).name, records_from_report(data, value),
                      testcases_from_report(data))
    if kind == "perflog":
        return Loaded(Path(value).name, load_perflogs(value), [])
    raise ResultsError(f"unknown source {kind}")


def cmd_compare(args) -> int:
    if args.against_references:
        if len(args.sources) != 1:
            raise ResultsError("--against-references takes exactly one source")
        src = load(*args.sources[0])
        rows = against_references(src.records, args.tolerance)
        base_label, target_label = "reference", src.label
        tol = args.tolerance
    else:
        if len(args.sources) != 2:
            raise ResultsError("compare needs two sources (base, target) or "
                               "--against-references and one")
        a, b = (load(*s) for s in args.sources)
        tol = 0.10 if args.tolerance is None else args.tolerance
        rows = compare(a.records, b.records, tol)
        base_label, target_label = a.label, b.label
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"base": base_label, "target": target_label, "tolerance": tol,
             "rows": [r.to_dict() for r in rows]}, indent=1) + "\n")
    if args.only_moved:
        rows = [r for r in rows if r.status != "ok"]
    sys.stdout.write(render_table(rows, base_label, target_label, tol))
    return 1 if any(r.status == "REGRESSED" for r in rows) else 0


def _sweeps_from(testcases: list[dict]) -> list[tuple[str, dict]]:
    out = []
    for tc in testcases:
        d = tc.get("outputdir")
        if d and (Path(d) / "sweep.json").is_file():
            try:
                data = json.loads((Path(d) / "sweep.json").read_text())
            except ValueError:
                continue
            out.append((f"{tc.get('display_name')} on {tc.get('system')}:{tc.get('partition')}",
                        data))
    return out


def cmd_html(args) -> int:
    from . import html as page
    from . import plots

    outdir = Path(args.output)
    outdir.mkdir(parents=True, exist_ok=True)
    loaded = [load(*s) for s in args.sources]
    target = loaded[-1] if loaded else None
    records = target.records if target else []
    comparison = None
    if len(loaded) >= 2:
        comparison = (loaded[0].label, target.label,
                      compare(loaded[0].records, records, args.tolerance or 0.10))
    elif target:
        comparison = ("reference", target.label, against_references(records, args.tolerance))
    sweeps = []
    for path in args.sweep:
        sweeps.append((path, json.loads(Path(path).read_text())))
    if target:
        sweeps += _sweeps_from(target.testcases)
    sweep_views = []
    for i, (label, data) in enumerate(sweeps):
        sweep_views.append((label, data, plots.sweep_views(data, outdir, tag=f"sweep{i}")))
    text = page.page(
        title=args.title,
        sources=[f"{k} {v}" for k, v in args.sources] + [f"sweep {p}" for p in args.sweep],
        records=records,
        size_images=plots.size_curves(records, outdir),
        stream_images=plots.stream_rates(records, outdir),
        sweeps=sweep_views,
        comparison=comparison,
        outdir=outdir,
        embed=args.embed,
    )
    index = outdir / "index.html"
    index.write_text(text, encoding="utf-8")
    print(f"wrote {index} ({len(records)} figures, {len(sweep_views)} sweeps)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="fabric-report", description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare", help="compare two result sets, or one against references")
    _add_sources(c)
    c.add_argument("--against-references", action="store_true")
    c.add_argument("--tolerance", type=float, default=None,
                   help="fraction a figure may move in the bad direction (default 0.10; with "
                        "--against-references: the references' own bands)")
    c.add_argument("--only-moved", action="store_true", help="print only rows that are not ok")
    c.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    c.set_defaults(func=cmd_compare)
    h = sub.add_parser("html", help="write index.html and PNG plots")
    _add_sources(h)
    h.add_argument("--sweep", action="append", default=[], metavar="JSON",
                   help="a `fabric-sweep --json` file (repeat)")
    h.add_argument("-o", "--output", default="report", help="output directory (default report/)")
    h.add_argument("--title", default="fabrictest report")
    h.add_argument("--tolerance", type=float, default=None)
    h.add_argument("--embed", action="store_true", help="embed the PNGs in the HTML (base64)")
    h.set_defaults(func=cmd_html)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ResultsError as err:
        print(f"fabric-report: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

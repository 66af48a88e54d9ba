"""`fabric-report history`: change points of every figure over the stored sessions.

    fabric-report history                                  # every stored session
    fabric-report history --system vcluster --since 20261101 --tag suite=nightly
    fabric-report history --report 'runs/run-report-*.json' --perflog old/perflogs

Sources: stored sessions through `reframe --describe-stored-sessions` (all of them unless
`--session QUERY` selects), JSON run reports (`--report FILE|GLOB`) and perflogs (`--perflog
PATH`), pooled; `--tag`, `--since`, `--system`, `--test` keep part of them. Exit 0: figures
judged, none regressed; 1: one did (its latest level, a sustained drop over its latest 2-5
sessions, or its latest session alone), or a judged figure is absent from the latest
sessions (unless --allow-missing); 2: nothing to read, a session given twice, too few runs
to judge (N of M), or a bad option (one line on stderr, before any work).
"""

from __future__ import annotations

import datetime as _dt
import re
import sys

from fabrictest.report.history import figures as hist
from fabrictest.report.history import summary, vanished
from fabrictest.report.options import tolerance
from fabrictest.report.records.once import refuse_doubled
from fabrictest.report.records.results import ResultsError, ResultSet
from fabrictest.report.records.sessions import stored_query, tag_query
from fabrictest.report.records.sources import (
    Source,
    check,
    read,
    writable_dir,
    writable_file,
    write_json,
)

_RELATIVE = re.compile(r"^(\d+)([dwh])$")
_FORMATS = ("%Y-%m-%d", "%Y%m%d", "%Y-%m-%dT%H:%M", "%Y%m%dT%H%M")


def since_time(text: str) -> _dt.datetime:
    """`2026-11-01`, `20261101`, `20261101T0930` (UTC), or `30d`, `2w`, `12h` ago."""
    now = _dt.datetime.now(_dt.timezone.utc)
    m = _RELATIVE.match(text.strip())
    if m:
        n, unit = int(m.group(1)), m.group(2)
        unit_name = {"d": "days", "w": "weeks", "h": "hours"}[unit]
        try:
            return now - _dt.timedelta(**{unit_name: n})
        except OverflowError:
            raise ResultsError(f"--since {text!r}: further back than any date (at most "
                               f"{(now - _dt.datetime(1, 1, 2, tzinfo=_dt.timezone.utc)).days}"
                               "d)") from None
    for fmt in _FORMATS:
        try:
            return _dt.datetime.strptime(text.strip(), fmt).replace(tzinfo=_dt.timezone.utc)
        except ValueError:
            continue
    raise ResultsError(f"--since {text!r}: not a date (2026-11-01, 20261101T0930) or an age "
                       "(30d, 2w, 12h)")


def _tags(values: list[str]) -> dict[str, str]:
    out = {}
    for v in values:
        tag_query(v.split(","))  # refuses a malformed one in one line
        for t in v.split(","):
            k, _sep, val = t.partition("=")
            out[k] = val
    return out


def _wanted(info: dict, tags: dict[str, str]) -> bool:
    return all(str(info.get(k)) == v for k, v in tags.items())


def run(args) -> int:
    since = since_time(args.since) if args.since else None
    tags = _tags(args.tag)
    test_re = None
    if args.test:
        try:
            test_re = re.compile(args.test)
        except re.error as err:
            raise ResultsError(f"--test {args.test!r}: not a regular expression ({err})") \
                from err
    files = [Source("report", v) for v in args.report] + [Source("perflog", v)
                                                           for v in args.perflog]
    if tags and args.perflog:
        raise ResultsError("--tag with --perflog: perflogs record no --session-extras")
    sources = files + [Source("session", q) for q in args.session]
    if not files and not args.session:
        sources = [Source("session", stored_query(since, tags))]
    for src in sources:
        check(src)
    if args.json:
        writable_file("--json", args.json)
    outdir = writable_dir("--html", args.html) if args.html else None

    parts = [(src.option, read(src)) for src in sources]
    refuse_doubled(parts, "in two sources")
    res = ResultSet()
    for _src, part in parts:
        res.extend(part)
    for note in res.notes:
        print(f"fabric-report: note: {note}", file=sys.stderr)
    records = res.records
    if args.system:
        records = [r for r in records if r.system == args.system]
    if test_re:
        records = [r for r in records if test_re.search(r.test)]
    if tags:
        records = [r for r in records if _wanted(res.sessions.get(r.session, {}), tags)]
    if since:
        stamp = since.timestamp()
        records = [r for r in records if _start(r, res.sessions) is None
                   or _start(r, res.sessions) >= stamp]
    if not records:
        raise ResultsError("nothing to read: no performance figure left after --system, "
                           "--test, --tag, --since")
    histories = [hist.judge(h, args.tolerance) for h in hist.series(records, res.sessions)]
    ordered = vanished.latest_sessions(res.records, res.sessions, args.system, lambda s: (
        _wanted(res.sessions[s], tags) and (since is None or _start_of(s, res) is None
                                            or _start_of(s, res) >= since.timestamp())))
    absent = vanished.mark(histories, ordered, res.records)
    line, status = summary.verdict(histories, res.unreadable, args.tolerance)
    line, status = vanished.amend(line, status, absent, args.allow_missing)
    if args.json:
        write_json(args.json, {"tolerance": args.tolerance, "verdict": line,
                               "figures": [h.to_dict() for h in histories]})
    if outdir is not None:
        from fabrictest.report.history.view import write_page

        write_page(histories, outdir, line, [s.option.lstrip("-") for s in sources],
                   embed=args.embed)
    if status != 2:
        sys.stdout.write(summary.render(histories, args.all) + "\n")
    if args.characteristics and status != 2:
        from fabrictest.report.history import operating
        from fabrictest.report.records.text_table import text_table

        rows = operating.of_histories(histories, args.characteristics)
        sys.stdout.write("operating characteristics on this store's noise "
                         "(docs/regressions.md):\n"
                         + text_table(operating.table_head(), operating.table(rows)) + "\n")
    print(line, file=sys.stderr if status == 2 else sys.stdout)
    return status


def _start_of(session: str, res: ResultSet) -> float | None:
    t = res.sessions[session].get("time_start_unix")
    return float(t) if isinstance(t, (int, float)) else None


def _start(r, sessions) -> float | None:
    t = (sessions.get(r.session) or {}).get("time_start_unix")
    return float(t) if isinstance(t, (int, float)) else r.time


def _trials(text: str) -> int:
    import argparse

    if not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of trials, 1 to 10000")
    return int(text)


def add_parser(sub) -> None:
    from fabrictest.report.history.changepoints import CONFIDENCE, MIN_SESSIONS

    p = sub.add_parser(
        "history", help="change points of every figure over the stored sessions",
        description=f"Per figure (test, scenario, system, figure: size, link or node), its "
                    f"values over the sessions in the order they ran, and its change points "
                    f"(PELT, as ruptures', then a rank test: at least {100 * CONFIDENCE:g}% sure; "
                    f"a lone outlier is not one). Needs {MIN_SESSIONS} sessions of a figure. "
                    "Exit 1 when a figure regressed beyond --tolerance: its latest level "
                    "against the last stable level before its first regression, a "
                    "sustained drop over its latest 2-5 sessions (one-sided, worst session "
                    "left out), or its latest session alone (beyond the tolerance and the "
                    "noise, not yet confirmed); 0 when none; 2 when there is nothing to read "
                    "or too few runs to judge. Its drops, delays and false alarms: "
                    "docs/regressions.md.")
    g = p.add_argument_group("sources (default: every stored session)")
    g.add_argument("--session", action="append", default=[], metavar="QUERY",
                   help="stored sessions: a UUID, a time period or a ?filter (repeat)")
    g.add_argument("--report", action="append", default=[], metavar="FILE|GLOB",
                   help="JSON run reports (repeat)")
    g.add_argument("--perflog", action="append", default=[], metavar="PATH",
                   help="a perflog file or directory (repeat)")
    f = p.add_argument_group("filters")
    f.add_argument("--tag", action="append", default=[], metavar="KEY=VALUE[,KEY=VALUE]",
                   help="only sessions run with these --session-extras (all of them)")
    f.add_argument("--since", metavar="WHEN",
                   help="only sessions since: 2026-11-01, 20261101T0930 (UTC), 30d, 2w, 12h")
    f.add_argument("--system", help="only this system")
    f.add_argument("--test", metavar="REGEX", help="only tests whose name matches")
    p.add_argument("--tolerance", type=tolerance, default=hist.TOLERANCE,
                   help="a figure regressed when its latest level (or latest session) is "
                        "this fraction worse than the last stable level before its first "
                        f"regression (default {hist.TOLERANCE:g})")
    p.add_argument("--characteristics", type=_trials, default=0, metavar="TRIALS",
                   help="also print, per family, the false alarms, delays and misses of this "
                        "judge on noise resampled from these figures (TRIALS per family, "
                        "e.g. 50; docs/regressions.md)")
    p.add_argument("--allow-missing", action="store_true",
                   help="a judged figure absent from the latest sessions (its test did not "
                        "run there, or gave no value) is said but does not fail")
    p.add_argument("--all", action="store_true",
                   help="also list the figures without a change point")
    p.add_argument("--json", metavar="PATH", help="also write the histories as JSON")
    p.add_argument("--html", metavar="DIR",
                   help="write DIR/index.html: a plot per figure with its change points")
    p.add_argument("--embed", action="store_true", help="embed the PNGs in the HTML")
    p.set_defaults(func=run)

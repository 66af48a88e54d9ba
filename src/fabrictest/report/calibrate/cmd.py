"""`fabric-report calibrate`: reference entries from 3 or more stored sessions or run reports.

The statistics are in :mod:`fabrictest.report.calibrate.method`, the format in :mod:`fabrictest.report.records.refformat`, the merge into the
system's reference file in :mod:`fabrictest.report.calibrate.merge`; this module checks the options, reads the
sessions and prints what it did.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
import shlex
import sys
from pathlib import Path

from fabrictest.references import ReferenceError, read_yaml, reference_dir
from fabrictest.report.calibrate import merge as refmerge
from fabrictest.report.calibrate import method as cal
from fabrictest.report.calibrate.method import FACTOR, FLOOR, MAX_BOUND
from fabrictest.report.options import add_sources, fraction, positive
from fabrictest.report.records import refformat, stats
from fabrictest.report.records.results import ResultsError, ResultSet, params_of
from fabrictest.report.records.sessions import mixed_checkouts
from fabrictest.report.records.sources import check, read, writable_file
from fabrictest.robust import MAD_TO_SIGMA


def add_parser(sub) -> None:
    k = sub.add_parser(
        "calibrate", help="write reference/<system>.yaml entries from 3 or more sessions",
        description="reference = the sessions' median; bound = the largest of --floor, "
                    f"--factor x the noise ({MAD_TO_SIGMA:g} MAD, corrected for the number of sessions "
                    "and the median's own error) and the farthest session, on the side that "
                    "matters "
                    "(rates: lower, times: upper). Merged into the system's reference file; "
                    "other tests, entries, comments and provenance are kept as they are.")
    add_sources(k)
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
    k.set_defaults(func=run)


def run(args) -> int:
    argv = args.argv  # it records its command line
    if not args.sources:
        raise ResultsError("calibrate needs stored sessions (--session, --tag) or run reports "
                           "(--report) of one system")
    for src in args.sources:
        if src.kind == "perflog":
            raise ResultsError(f"{src.option}: perflogs do not record sessions and test "
                               "variables: calibrate from stored sessions or run reports")
        check(src)
    if args.max_bound <= args.floor:
        raise ResultsError(f"--max-bound {args.max_bound:g} must be larger than --floor "
                           f"{args.floor:g}")
    only = _regex("--only", args.only)
    exclude = _regex("--exclude", args.exclude)
    ref_dir = reference_dir(args.reference_dir)
    if args.output is None and not ref_dir.is_dir():
        raise ResultsError(f"--reference-dir {ref_dir}: no such directory")
    if args.output and not args.dry_run:
        writable_file("-o", args.output)

    res = ResultSet()
    read_from: dict[str, str] = {}  # session -> what it was read from (the provenance says)
    for src in args.sources:
        part = read(src)
        for r in part.records:
            read_from.setdefault(r.session, refformat.read_from_report(r.source)
                                 if src.kind == "report" else refformat.STORED_SESSION)
        res.extend(part)
    mixed = mixed_checkouts(res.sessions)
    if mixed:  # a reference from several clones' runs: no one version of the suite measured it
        raise ResultsError(f"{mixed}: calibrate from the sessions of one checkout (select them "
                           "with --session or --tag)")
    systems = sorted({r.system for r in res.records})
    system = args.system
    if system is None:
        if len(systems) > 1:
            raise ResultsError(f"the sessions ran on several systems ({', '.join(systems)}): "
                               "pick one with --system")
        system = systems[0]
    of_system = [r for r in res.records if r.system == system]
    # every session of the system counts, also one that lacks the selected figures
    sessions = sorted({r.session for r in of_system})
    records = [r for r in of_system
               if (only is None or only.search(f"{r.test} {r.pvar}"))
               and not (exclude and exclude.search(f"{r.test} {r.pvar}"))]
    if not records:
        raise ResultsError(f"no figure of system {system!r} in the sources"
                           + (" (after --only/--exclude)" if only or exclude else ""))
    if len(sessions) < stats.MIN_SESSIONS:
        raise ResultsError(f"calibrate needs at least {stats.MIN_SESSIONS} sessions of "
                           f"{system}, got {len(sessions)} ({', '.join(sessions)})")
    path = Path(args.output) if args.output else ref_dir / f"{system}.yaml"
    existing = _existing_index(path)
    if not args.dry_run:
        writable_file("-o" if args.output else "--reference-dir", str(path))

    def index_of(cls: str, r) -> list[str]:
        """The class's `$index` in the file; for a new class, the system and the test's
        parameters."""
        return existing.get(cls) or ["$system", *params_of(r.test)]

    result = cal.calibrate(records, sessions, index_of, factor=args.factor, floor=args.floor,
                           max_bound=args.max_bound)
    if result.refused:
        for line in result.refused:
            print(f"fabric-report: refused: {line}", file=sys.stderr)
        print(f"fabric-report: nothing written ({len(result.refused)} figures refused; "
              "--exclude them, or run more sessions)", file=sys.stderr)
        return 2
    if not result.entries:
        raise ResultsError(f"no figure of {system} to calibrate (all are per-item or "
                           "informational figures)")
    infos = [refformat.session_record(res.sessions.get(s, {"uuid": s}), read_from[s])
             for s in sessions]
    meta = {"command": "fabric-report " + shlex.join(argv),
            "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
            "factor": args.factor, "floor": args.floor, "sessions": infos}
    new_index = {e.cls: index_of(e.cls, next(r for r in records if r.base == e.cls))
                 for e in result.entries if e.cls not in existing}
    print(f"bounds: the largest of the floor {100 * args.floor:g}%, {args.factor:g} x the noise "
          f"and the farthest session, from {len(sessions)} sessions")
    for e in result.entries:
        print(f"{e.name}: {e.summary()}")
    if args.dry_run:
        old = path.read_text() if path.exists() else ""
        text, counts = refmerge.merge_text(old or None, result, new_index, meta)
        refmerge.validate(text, result)
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(True), text.splitlines(True), str(path), f"{path} (calibrated)"))
        print(f"would write {path}: {len(result.entries)} entries ({counts['added']} added, "
              f"{counts['replaced']} replaced) from {len(sessions)} sessions")
        return 0
    _text, counts = refmerge.write(path, result, new_index, meta)
    print(f"wrote {path}: {len(result.entries)} entries ({counts['added']} added, "
          f"{counts['replaced']} replaced) from {len(sessions)} sessions of {system}")
    return 0


def _regex(option: str, text: str | None):
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as err:
        raise ResultsError(f"{option} {text!r}: not a regular expression ({err})") from err


def _existing_index(path: Path) -> dict[str, list[str]]:
    """The `$index` of each class already in the reference file."""
    if not path.exists():
        return {}
    try:
        raw = read_yaml(path)
    except ReferenceError as err:
        raise ResultsError(str(err)) from None
    if not isinstance(raw, dict):
        raise ResultsError(f"{path}: not a reference file (the top level is not a mapping)")
    return {k: list(v["$index"]) for k, v in raw.items()
            if isinstance(v, dict) and isinstance(v.get("$index"), list)}

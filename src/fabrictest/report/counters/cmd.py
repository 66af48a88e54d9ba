"""``fabric-report counters``: every node's link, error and congestion counters over a whole
suite run, from the snapshots its multi-node tests took (kept in their output directories),
and the same as a section of ``fabric-report html``.

    fabric-report counters --report output/reports/run-report-UUID.json [--json FILE]

Per node: the tests that read it, every counter that changed from its first snapshot (before
any test) to its last (after the last test), and the failures: a link that went down, or an
error counter above the system's thresholds (``reference/counters/<system>.yaml``, allowed
once per test and per gap between tests), over the run or while no test ran
(:mod:`fabrictest.counters.whole_run`).

Exit status: 0 every node read and healthy, 1 a failure, 2 nothing to read (no source, no test
with snapshots) or a bad option, 3 a node's counters could not be read or compared (and
nothing failed).
"""

from __future__ import annotations

from fabrictest.report.counters.runs import lines, node_runs
from fabrictest.report.options import add_sources
from fabrictest.report.records.results import ResultsError, ResultSet
from fabrictest.report.records.sources import check, read, writable_file, write_json
from fabrictest.report.records.words import counted

#: exit statuses; nothing to read or a bad option is 2, as for every fabric-report command
EXIT_OK, EXIT_FAILED, EXIT_UNREAD = 0, 1, 3


def add_parser(sub) -> None:
    p = sub.add_parser("counters", help="every node's counters over a whole run (from the "
                       "tests' snapshots)",
                       description="Each node's counters from its first snapshot (before any "
                       "test) to its last (after the last), and what changed while no test "
                       "ran; judged with reference/counters/<system>.yaml.",
                       epilog="Exit: 0 healthy, 1 a link went down or an error passed its "
                              "threshold, 2 nothing to read or a bad option, 3 a counter "
                              "could not be read (nothing failed).")
    add_sources(p)
    p.add_argument("--reference-dir", metavar="DIR",
                   help="where counters/<system>.yaml is (default $RFM_REFERENCE_PREFIX or "
                        "reference/)")
    p.add_argument("--json", metavar="PATH", help="also write the nodes as JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    if not args.sources:
        raise ResultsError("nothing to read: give --report FILE or --session/--tag")
    for src in args.sources:
        check(src)
        if src.kind == "perflog":
            raise ResultsError(f"{src.option}: perflogs do not record the tests' directories: "
                               "give a run report or a stored session")
    if args.json:
        writable_file("--json", args.json)
    res = ResultSet()
    for src in args.sources:
        res.extend(read(src, need_figures=False))
    runs, problems = node_runs(res, args.reference_dir)
    if not runs and not problems:
        raise ResultsError(f"no counter snapshots in the {len(res.testcases)} test cases read "
                           "(only multi-node tests take them; their output directories must "
                           "still exist)")
    print("\n".join(lines(runs, problems)))
    if args.json:
        write_json(args.json, [{"system": s, "node": r.node, "tests": r.tests,
                                "changes": {f"{c.counter.place} {c.counter.name}": c.increase
                                            for c in r.changes},
                                "failures": r.failures, "unread": r.unread}
                               for s, r in runs] + [{"problems": problems}])
    failed = sum(len(r.failures) for _, r in runs)
    unread = sum(len(r.unread) for _, r in runs) + len(problems)
    print(f"{counted(len(runs), 'node')}: {counted(failed, 'failure')}, {unread} unreadable")
    return EXIT_FAILED if failed else EXIT_UNREAD if unread else EXIT_OK

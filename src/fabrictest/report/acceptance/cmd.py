"""``fabric-report acceptance``: one page over the three stages of an acceptance run, verdict
first, and its JSON twin.

    fabric-report acceptance --report 'acceptance/run-report-*.json' -o acceptance/
    fabric-report acceptance --tag acceptance=2026-11 --topology slurm --history -o acceptance/
    fabric-report acceptance --session UUID --health health.txt --sweep sweep.json -o page/

Writes ``DIR/index.html`` (one file, printable to PDF) and ``DIR/acceptance.json``, prints the
verdict and one line per stage. Exit status: 0 ACCEPTED, 1 NOT ACCEPTED (an element failed, or
a stage is incomplete or unjudged), 2 nothing to judge (no stage had anything), a source or
file that cannot be read, or an option that makes no sense: one line, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from fabrictest.parsers.errors import ParseError
from fabrictest.report.acceptance.absent import absent_figures
from fabrictest.report.acceptance.absent import gap as absent_gap
from fabrictest.report.acceptance.cases import (
    BUILD,
    PERFORMANCE,
    STAGE1,
    SWEEP,
    label,
    last_runs,
    role,
)
from fabrictest.report.acceptance.coherence import MIXABLE, STAGE1_WINDOW_HOURS, check_coherence
from fabrictest.report.acceptance.context import headline_keys, history_rows, provenance
from fabrictest.report.acceptance.outputs import TWIN_FORMAT, check_outputs, input_files, marked
from fabrictest.report.acceptance.page import page
from fabrictest.report.acceptance.stage1 import read_health_file, stage1
from fabrictest.report.acceptance.stage2 import stage2
from fabrictest.report.acceptance.stage3 import stage3
from fabrictest.report.acceptance.twin import dumps as twin_dumps
from fabrictest.report.acceptance.twin import proportionate
from fabrictest.report.acceptance.verdict import NothingToJudge, judge
from fabrictest.report.attribute.topology import load_topology
from fabrictest.report.options import add_sources
from fabrictest.report.records.outfiles import write_text
from fabrictest.report.records.results import ResultsError, ResultSet
from fabrictest.report.records.sources import Source, check, read, writable_dir, writable_file
from fabrictest.report.records.sweep_files import read_sweep, sweeps_from

PAGE, TWIN = "index.html", "acceptance.json"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "acceptance", help="one page over the three acceptance stages, verdict first",
        description="ACCEPTED or NOT ACCEPTED with the elements that failed (node, link, "
                    "switch, uplink, group pair) and their stage: 1 pre-flight health per node "
                    "and check, 2 performance per node set as ratios to the references, "
                    "congestion impact and the sweep, 3 counters and flaps over the whole run; "
                    "then the history of the headline figures and the run's provenance.",
        epilog="Exit: 0 ACCEPTED, 1 NOT ACCEPTED, 2 nothing to judge or bad input. "
               "docs/report.md, 'The acceptance page'.")
    add_sources(p, "the acceptance run (several sources are pooled)")
    p.add_argument("--health", action="append", default=[], metavar="FILE",
                   help="stage 1 gathered outside ReFrame: fabric-health's lines or its "
                        "--json documents (repeat)")
    p.add_argument("--sweep", action="append", default=[], metavar="JSON",
                   help="a `fabric-sweep --json` file (repeat); a SweepTest's own is read "
                        "from its directory")
    p.add_argument("--topology", metavar="FILE|slurm",
                   help="where the nodes hang (topology.conf, `scontrol show topology`, our "
                        "own file, or `slurm`): places test cases in edge/local/global sets "
                        "and names switches, uplinks and group pairs")
    p.add_argument("--reference-dir", metavar="DIR",
                   help="the references and counters thresholds (default "
                        "$RFM_REFERENCE_PREFIX, else reference/)")
    p.add_argument("--history", action="store_true",
                   help="the headline figures' history over every stored session")
    p.add_argument("--history-report", action="append", default=[], metavar="FILE|GLOB",
                   help="run reports as the headline figures' history (repeat)")
    p.add_argument("--allow-missing", action="store_true",
                   help="a figure the history's sessions measured and this run did not is "
                        "listed but does not make stage 2 incomplete")
    p.add_argument("-o", "--output", default="acceptance",
                   help=f"output directory: {PAGE} and {TWIN} (default acceptance/)")
    p.add_argument("--title", default="", help="the page's title (default: Fabric "
                                                "acceptance of SYSTEM)")
    p.add_argument("--json", metavar="PATH", help=f"also write the JSON twin here (it is "
                                                  f"always written as DIR/{TWIN})")
    p.add_argument("--allow-mixed", action="append", default=[], choices=MIXABLE,
                   help="pool evidence of several systems, node sets (a sweep of other "
                        "nodes), suite commits or references files (repeat); refused by "
                        "default")
    p.add_argument("--stage1-window", type=_hours, default=STAGE1_WINDOW_HOURS,
                   metavar="HOURS", help="how long before the performance stage the "
                   f"pre-flight checks may have run (default {STAGE1_WINDOW_HOURS:g}); never "
                   "after it")
    p.add_argument("--force", action="store_true",
                   help=f"replace an existing {PAGE} or JSON twin that fabric-report "
                        "acceptance did not write (never an input of the run, a symlink or a "
                        "special file)")
    p.set_defaults(func=run)


def _hours(text: str) -> float:
    import argparse
    import math

    try:
        h = float(text)
    except ValueError:
        h = math.nan
    if not math.isfinite(h) or h <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of hours")
    return h


def _check_args(args) -> None:
    """Everything refused before any work: sources, files, outputs."""
    if not args.sources and not args.health:
        raise ResultsError("nothing to judge: give the run (--report, --session, --tag) or "
                           "--health")
    for src in args.sources:
        check(src)
        if src.kind == "perflog":
            raise ResultsError(f"{src.option}: perflogs record no test cases, nodes or "
                               "directories: give the run report or the stored session")
    for value in args.history_report:
        check(Source("report", value))
    if args.json:
        writable_file("--json", args.json)


def stage1_records(cases: list[dict]) -> list[tuple[str, dict]]:
    """Stage 1's own records beside the partition's output directories (``stage1.json``, the
    health family's: each node's verdict, the system, the time), where there are any."""
    out: dict[str, dict] = {}
    for tc in cases:
        d = tc.get("outputdir")
        path = Path(d).parents[1] / "stage1.json" if d and len(Path(d).parents) > 1 else None
        if path is None or str(path) in out or not path.is_file():
            continue
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("nodes"), dict):
            out[str(path)] = doc
    return list(out.items())


def _left_out(records: list[tuple[str, dict]]) -> dict[str, str]:
    """Nodes stage 1's records kept out of the performance stage: node -> its verdict."""
    return {str(n): str(v) for _path, doc in records for n, v in doc["nodes"].items()
            if v != "pass"}


def _past(args) -> tuple[ResultSet, list[Source], str]:
    """The sessions given as history (``--history-report``, ``--history``): their records, the
    sources, and why they could not be read (then no record)."""
    past = ResultSet()
    sources = [Source("report", v) for v in args.history_report]
    if args.history:
        from fabrictest.report.records.sessions import stored_query

        sources.append(Source("session", stored_query(None, {})))
    for src in sources:
        try:
            past.extend(read(src))
        except ResultsError as err:
            return ResultSet(), sources, f"history not read: {err}"
    return past, sources, ""


def _history(keys, records, sessions, past: ResultSet, sources: list[Source],
             problem: str) -> tuple[list[dict], str]:
    if problem:
        return [], problem
    past_sessions = dict(sessions)
    past_sessions.update(past.sessions)
    rows = history_rows(keys, records, past.records, past_sessions)
    n = len({r.session for r in (*past.records, *records)})
    what = (", ".join(s.option for s in sources) + " and this run" if sources else
            "this run only (give --history or --history-report for more)")
    return rows, (f"{len(rows)} headline figures over {n} sessions ({what}); a figure is "
                  "judged on its history from 10 sessions on, as fabric-report history does.")


def run(args) -> int:
    _check_args(args)
    outdir = writable_dir("-o", args.output)
    for name in (PAGE, TWIN):
        writable_file("-o", str(outdir / name))
    inputs = input_files([s.value for s in args.sources if s.kind in ("report", "perflog")]
                         + args.health + args.sweep + args.history_report
                         + ([args.topology] if args.topology else []))
    check_outputs(outdir, PAGE, TWIN, args.json, inputs, args.force)
    sweep_files = [(path, read_sweep(path)) for path in args.sweep]
    try:
        health = [(path, read_health_file(path)) for path in args.health]
    except ParseError as err:
        raise ResultsError(str(err)) from None
    topo = load_topology(args.topology) if args.topology else None

    res, origin = ResultSet(), {}
    for src in args.sources:
        part = read(src, need_figures=False)
        origin.update({id(tc): src.option for tc in part.testcases})
        res.extend(part)
    for note in res.notes:
        print(f"fabric-report: note: {note}", file=sys.stderr)
    cases = last_runs(res.testcases)
    by_role = {r: [tc for tc in cases if role(tc) == r] for r in (STAGE1, SWEEP, BUILD,
                                                                   PERFORMANCE)}
    perf_cases = by_role[PERFORMANCE]
    perf_labels = {label(tc) for tc in perf_cases}
    records = [r for r in res.records if f"{r.test} on {r.system}:{r.partition}" in perf_labels]
    used = {n for tc in perf_cases for n in tc.get("job_nodelist") or []}
    if topo is not None and used and not any(n in topo.switch_of() for n in used):
        raise ResultsError(f"--topology {args.topology} places none of the run's nodes")

    sweeps = sweep_files + sweeps_from(by_role[SWEEP])
    recorded = stage1_records(by_role[STAGE1])
    check_coherence(by_role[STAGE1], perf_cases + by_role[SWEEP], sweeps, origin,
                    args.allow_mixed, args.stage1_window, recorded)
    left_out = _left_out(recorded)
    past, past_sources, past_problem = _past(args)
    absent = absent_figures(past.records, res.records,
                            set(res.sessions) | {r.session for r in res.records})
    s1 = stage1(by_role[STAGE1], health, used, left_out)
    s2 = stage2(records, perf_cases, topo, sweeps, left_out,
                missing=absent_gap(absent, args.allow_missing))
    perf_res = ResultSet(testcases=perf_cases)
    s3 = stage3(perf_res, records, args.reference_dir)
    try:
        verdict = judge([s1, s2, s3])
    except NothingToJudge as err:
        raise ResultsError(str(err)) from None

    keys = headline_keys(s2.data["figures"], records)
    history, history_note = _history(keys, records, res.sessions, past, past_sources,
                                     past_problem)
    prov = provenance(res.sessions, cases, records, s1.data["rows"], args.reference_dir)
    systems = sorted({str(tc.get("system")) for tc in cases if tc.get("system")})
    title = args.title or f"Fabric acceptance of {', '.join(systems) or 'the fabric'}"
    sources = [s.option for s in args.sources] + [f"--health {h}" for h in args.health] \
        + [f"--sweep {s}" for s in args.sweep]
    twin = {"format": TWIN_FORMAT, "title": title, "sources": sources,
            **verdict.to_dict(), "history": history, "history_note": history_note,
            "absent": absent, "absent_allowed": args.allow_missing, "provenance": prov}
    text = marked(page(title=title, sources=sources, verdict=verdict, history=history,
                       history_note=history_note, provenance=prov,
                       absent=(absent, args.allow_missing)))
    write_text(outdir / PAGE, text, "-o")
    twin_text = twin_dumps(proportionate(twin))
    write_text(outdir / TWIN, twin_text, "-o")
    if args.json:
        write_text(args.json, twin_text, "--json")
    lines = [verdict.headline] + [f"  stage {s.number} ({s.title}): {s.status.upper()}: "
                                  f"{s.summary}" for s in verdict.stages]
    try:
        print("\n".join([*lines, f"wrote {outdir / PAGE} and {outdir / TWIN}"]), flush=True)
    except BrokenPipeError:  # `| head`: the page and its twin are written; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (Python's advice)
    return verdict.status

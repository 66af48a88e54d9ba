"""``fabric-health counters``: this node's link, error and congestion counters, and the
difference of two snapshots.

    fabric-health counters [--json] [--out-dir DIR] [--netdev IF ...] [--node-name N]
    fabric-health counters --diff BEFORE AFTER [--system NAME [--reference-dir DIR] |
                                                --thresholds FILE] [--json]

A snapshot prints ``COUNTER <node> <place> <source> <name> <value|unreadable>`` lines (then
``UNREADABLE <node> <what>: <why>``), or with ``--json`` one JSON object
(:mod:`fabrictest.counters.snapshot`); ``--out-dir DIR`` writes it to ``DIR/<node>.json``
instead (one task per node of a job writes one file each; the node is ``--node-name``, else
``$SLURMD_NODENAME``, else the short hostname).

``--diff`` takes two snapshot files, or two directories of them (one file per node), and
prints ``CHANGE <node> <place> <counter>: <before> -> <after> (+N)`` for every counter that
changed, ``FAIL <node> <place>: ...`` for a link that went down or an error counter above its
threshold, ``FIGURE <node> <counter> <increase>`` for the congestion counters, ``UNKNOWN
<node> ...`` for what could not be compared, and a last line ``N nodes, M counters compared:
F failures, U unknown``. The thresholds are ``--thresholds FILE``, or the system's
``counters/<NAME>.yaml`` in the reference directory (``--reference-dir``, else
``$RFM_REFERENCE_PREFIX``, else the repository's ``reference/``) with ``--system NAME``; with
neither, every error counts.

Exit status: 0 all read (``--diff``: and nothing failed), 1 ``--diff`` found a failure, 3 a
counter could not be read or compared, or a snapshot read nothing (and nothing failed;
``--out-dir`` still writes the file), 64 bad command line, a file that is not a snapshot, two
snapshots of one node, or an ``--out-dir`` that cannot be written.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from pathlib import Path

from fabrictest.parsers.errors import ParseError

from .difference import difference
from .files import load_thresholds, read_snapshots, system_thresholds
from .gather import gather_counters
from .judge import judge
from .thresholds import Thresholds

EXIT_OK, EXIT_FAILED, EXIT_UNREAD, EXIT_USAGE = 0, 1, 3, 64


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="fabric-health counters",
                description="Link, error and congestion counters of this node, or the "
                            "difference of two snapshots.",
                epilog="Exit: 0 read (and --diff: nothing failed), 1 --diff: a link went down "
                       "or an error counter passed its threshold, 3 a counter unreadable or "
                       "not comparable, or nothing read, 64 usage error or not a snapshot.")
    p.add_argument("--json", action="store_true", help="one JSON document instead of lines")
    p.add_argument("--out-dir", type=Path, help="write the snapshot to DIR/<node>.json")
    p.add_argument("--netdev", action="append", help="read only this netdev (repeatable; "
                   "default: every netdev but lo)")
    p.add_argument("--node-name", default=None, help="name of this node (default: short "
                   "hostname)")
    p.add_argument("--no-commands", action="store_true",
                   help="read files only: no ethtool -S, perfquery -x, cxi_stat")
    p.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"), type=Path,
                   help="compare two snapshots (files, or directories of <node>.json)")
    p.add_argument("--thresholds", type=Path, help="with --diff: a counters thresholds file; "
                   "default: --system's, else any error fails")
    p.add_argument("--system", help="with --diff: judge with counters/<SYSTEM>.yaml of the "
                   "reference directory")
    p.add_argument("--reference-dir", metavar="DIR", help="with --system: where "
                   "counters/<SYSTEM>.yaml is (default $RFM_REFERENCE_PREFIX, else the "
                   "repository's reference/)")
    p.add_argument("--sys-root", type=Path, default=Path("/sys"), help=argparse.SUPPRESS)
    p.add_argument("--proc-root", type=Path, default=Path("/proc"), help=argparse.SUPPRESS)
    return p


def thresholds_of(args) -> Thresholds:
    """``--thresholds FILE`` (it must exist and be valid), else ``--system``'s file in the
    reference directory (valid when present), else the defaults; ParseError."""
    if args.thresholds is not None:
        if not args.thresholds.exists():
            raise ParseError(f"{args.thresholds}: no such file")
        thresholds, problem = load_thresholds(args.thresholds)
    elif args.system:
        thresholds, problem, path = system_thresholds(args.system, args.reference_dir)
        if problem is None and not path.exists():
            print(f"note: no {path}: every error counter increase fails", file=sys.stderr)
    else:
        return Thresholds()
    if problem:
        raise ParseError(problem)
    return thresholds


def run_diff(args) -> int:
    try:
        before, after = read_snapshots(args.diff[0]), read_snapshots(args.diff[1])
        thresholds = thresholds_of(args)
    except ParseError as err:
        print(f"fabric-health counters: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    nodes = sorted(set(before) | set(after))
    diffs = [difference(before[n], after[n]) for n in nodes if n in before and n in after]
    verdict = judge(diffs, thresholds, nodes)
    changes = [ch for d in diffs for ch in d.changes if ch.increase]
    compared = sum(len(d.changes) for d in diffs)
    summary = (f"{len(nodes)} node{'s' * (len(nodes) != 1)}, {compared} counters compared: "
               f"{len(verdict.failures)} failures, {len(verdict.unread)} unknown")
    if args.json:
        print(json.dumps({
            "changes": [{"node": ch.node, "source": ch.counter.source,
                         "device": ch.counter.device, "port": ch.counter.port,
                         "counter": ch.counter.name, "before": ch.before, "after": ch.after}
                        for ch in changes],
            "failures": verdict.failures, "figures": verdict.figures,
            "unknown": verdict.unread, "summary": summary}, indent=1))
    else:
        for ch in changes:
            print(f"CHANGE {ch.line()}")
        for line in verdict.failures:
            print(f"FAIL {line}")
        for node, figs in verdict.figures.items():
            for name, value in sorted(figs.items()):
                print(f"FIGURE {node} {name} {value}")
        for line in verdict.unread:
            print(f"UNKNOWN {line}")
        print(summary)
    if verdict.failures:
        return EXIT_FAILED
    return EXIT_UNREAD if verdict.unread else EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.diff:
        if args.out_dir or args.netdev or args.no_commands:
            print("fabric-health counters: error: --diff reads two snapshots; it takes no "
                  "--out-dir, --netdev or --no-commands", file=sys.stderr)
            return EXIT_USAGE
        if args.thresholds and (args.system or args.reference_dir):
            print("fabric-health counters: error: --thresholds names the file: it takes no "
                  "--system or --reference-dir", file=sys.stderr)
            return EXIT_USAGE
        if args.reference_dir and not args.system:
            print("fabric-health counters: error: --reference-dir goes with --system",
                  file=sys.stderr)
            return EXIT_USAGE
        return run_diff(args)
    if args.thresholds or args.system or args.reference_dir:
        print("fabric-health counters: error: --thresholds, --system and --reference-dir go "
              "with --diff", file=sys.stderr)
        return EXIT_USAGE
    node = args.node_name or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if not node.strip() or any(ch.isspace() or ch == "/" for ch in node):
        print(f"fabric-health counters: error: --node-name {node!r}: a node name has no "
              "spaces or slashes", file=sys.stderr)
        return EXIT_USAGE
    snap = gather_counters(node, args.sys_root, args.proc_root, args.netdev,
                           commands=not args.no_commands)
    if snap.read_nothing:
        snap.unreadable.append(f"nothing was read on {node}: no counter has a value")
    status = EXIT_UNREAD if snap.read_nothing else EXIT_OK
    if args.out_dir:
        try:
            args.out_dir.mkdir(parents=True, exist_ok=True)
            (args.out_dir / f"{node}.json").write_text(snap.to_json())
        except OSError as err:
            print(f"fabric-health counters: error: {args.out_dir}: {err}", file=sys.stderr)
            return EXIT_USAGE
        return status  # what could not be read is in the file, judged by the reader
    if args.json:
        sys.stdout.write(snap.to_json(indent=1))
    else:
        print("\n".join(snap.lines()))
    return EXIT_UNREAD if snap.unreadable else status

"""The hostile table's counter cases (issue 27, "Counters that pass unread or hide a flap", and
issue 29's counters as NICs count them): snapshots that read nothing, a counter or a node
twice, thresholds that cannot fail, files that are no snapshots, saturated and reset counters,
a relocated reference directory.

Each ``py`` case calls a function below with the inputs' directory: it writes the files the
case needs under ``<d>/counters-cases/<case>/`` and runs the command for real (a subprocess
under a timeout, the checkout's ``.venv/bin``, or ``HOSTILE_ROOT``'s to count the cases against
another checkout), and returns ``exit N: <first line> | <last line>`` for the case's regex.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from table import py

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("HOSTILE_ROOT") or HERE.parents[1]).resolve()
BIN = ROOT / ".venv" / "bin" if (ROOT / ".venv" / "bin").is_dir() else Path(sys.executable).parent
TIMEOUT = 60
WHY = ("issue 27: snapshots with no counters pass, --diff prints nothing, a counter or a node "
       "twice hides a flap, thresholds of 1e21, --diff SNAP /bin/ls is a traceback")
WHY29 = "issue 29: a saturated counter reads +0, a reset is not named, old OFED names unread"


# -- running and writing ---------------------------------------------------------------------
def _first(text: str) -> str:
    return next((ln for ln in text.splitlines() if ln.strip()), "")


def _run(argv: list[str], env: dict | None = None) -> str:
    full = dict(os.environ, **(env or {}))
    full.setdefault("RFM_REFERENCE_PREFIX", str(ROOT / "reference"))
    try:
        proc = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL, env=full)
    except subprocess.TimeoutExpired:
        return f"hang: no answer within {TIMEOUT}s"
    text = proc.stdout + proc.stderr
    if "Traceback" in text:
        return f"exit {proc.returncode}: Traceback: {text.strip().splitlines()[-1]}"
    last = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.strip()), "")
    return f"exit {proc.returncode}: {_first(proc.stderr) or _first(proc.stdout)} | {last}"


def _dir(d: Path, case: str) -> Path:
    out = Path(d) / "counters-cases" / case
    out.mkdir(parents=True, exist_ok=True)
    return out


def _counter(name: str, value, source: str = "netdev", device: str = "eth0", port: str = "-",
             width: int | None = None) -> dict:
    c = {"source": source, "device": device, "port": port, "name": name, "value": value}
    if width is not None:
        c["width"] = width
    return c


def _snap(node: str, counters: list[dict], **extra) -> str:
    return json.dumps({"node": node, "format": "fabrictest-counters/1", "counters": counters,
                       "unreadable": [], **extra}) + "\n"


HEALTHY = [_counter("carrier_changes", 4), _counter("rx_errors", 0),
           _counter("RetransSegs", 3, "tcp", "tcp")]


def _pair(d: Path, case: str, before: list[dict], after: list[dict], node: str = "node01"):
    base = _dir(d, case)
    for phase, counters in (("before", before), ("after", after)):
        (base / phase).mkdir(exist_ok=True)
        (base / phase / f"{node}.json").write_text(_snap(node, counters))
    return base / "before", base / "after"


def _diff(before: Path, after: Path, *extra: str, env: dict | None = None) -> str:
    return _run(["fabric-health", "counters", "--diff", str(before), str(after), *extra], env)


def _ib(name: str, value, width: int | None = None) -> dict:
    return _counter(name, value, "ib", "mlx5_0", "1", width)


# -- snapshots that read nothing, things twice ----------------------------------------------
def empty_snapshots(d):
    return _diff(*_pair(d, "empty", [], []))


def healthy_diff(d):
    return _diff(*_pair(d, "healthy", HEALTHY, HEALTHY))


def all_unreadable(d):
    unread = [_counter("carrier_changes", None), _counter("RetransSegs", None, "tcp", "tcp")]
    return _diff(*_pair(d, "all-unreadable", unread, unread))


def counter_twice(d):
    """carrier_changes 14 then 18 in the after snapshot: the last read hides the first."""
    before, after = _pair(d, "counter-twice", [_counter("carrier_changes", 14)],
                          [_counter("carrier_changes", 14), _counter("carrier_changes", 18)])
    return _diff(before, after)


def node_twice(d):
    """A second file for node01 in the after directory (a copy of the before one)."""
    before, after = _pair(d, "node-twice", [_counter("carrier_changes", 14)],
                          [_counter("carrier_changes", 18)])
    (after / "node01-copy.json").write_text((before / "node01.json").read_text())
    return _diff(before, after)


def node_twice_before(d):
    before, after = _pair(d, "node-twice-before", HEALTHY, HEALTHY)
    (before / "zz.json").write_text(_snap("node01", HEALTHY))
    return _diff(before, after)


# -- files that are no snapshots ------------------------------------------------------------
def _one(d, case: str) -> Path:
    before, _ = _pair(d, case, HEALTHY, HEALTHY)
    return before / "node01.json"


def versus(d, other: str):
    """--diff SNAP OTHER, OTHER a binary, a device, a pipe, a directory without snapshots."""
    snap = _one(d, f"versus-{Path(other).name}")
    if other == "fifo":
        other = str(snap.parent / "pipe.json")
        if not os.path.exists(other):
            os.mkfifo(other)
    elif other == "emptydir":
        other = str(snap.parent / "nothing-here")
        os.makedirs(other, exist_ok=True)
    return _diff(snap, Path(other))


BAD_SNAPSHOTS = {
    "no-final-newline": _snap("node01", HEALTHY).rstrip("\n"),
    "cut-mid-document": _snap("node01", HEALTHY)[:70],
    "value-above-64-bits": _snap("node01", [_counter("carrier_changes", 1 << 64)]),
    "negative-value": _snap("node01", [_counter("carrier_changes", -1)]),
    "width-65": _snap("node01", [_counter("carrier_changes", 4, width=65)]),
    "empty-node": _snap("", HEALTHY),
    "counters-not-a-list": _snap("node01", {"carrier_changes": 4}),
    "deep-nesting": "[" * 100000 + "]" * 100000 + "\n",
    "float-value": _snap("node01", [_counter("carrier_changes", 4.5)]),
    "unreadable-not-a-list": _snap("node01", HEALTHY).replace('"unreadable": []',
                                                              '"unreadable": "EIO"'),
}


def bad_snapshot(d, name: str):
    path = _dir(d, "bad-snapshots") / f"{name}.json"
    path.write_text(BAD_SNAPSHOTS[name])
    return _diff(_one(d, "bad-snapshot-good"), path)


# -- thresholds ------------------------------------------------------------------------------
BAD_THRESHOLDS = {
    "default-1e21-int": "errors: {default: 1000000000000000000000}\n",
    "default-1e21-float": "errors: {default: 1.0e+21}\n",
    "symbol-error-2-64": "errors: {symbol_error: 18446744073709551615}\n",
    "errors-a-list": "errors: [1]\n",
    "ignore-a-string": "ignore: rx_errors\n",
    "unknown-pass": "unknown: pass\n",
}


def bad_thresholds(d, name: str):
    path = _dir(d, "thresholds") / f"{name}.yaml"
    path.write_text("$provenance: {document: hostile}\n" + BAD_THRESHOLDS[name])
    before, after = _pair(d, "thresholds-pair", HEALTHY, HEALTHY)
    return _diff(before, after, "--thresholds", str(path))


def binary_thresholds(d):
    path = _dir(d, "thresholds") / "binary.yaml"
    path.write_bytes(b"\xff\xfe" + bytes(range(256)) * 4)
    return _diff(*_pair(d, "thresholds-pair", HEALTHY, HEALTHY), "--thresholds", str(path))


def relocated_system(d):
    """--system vcluster with the references moved: the moved file lets 7 rx_errors pass."""
    moved = _dir(d, "moved-references")
    (moved / "counters").mkdir(exist_ok=True)
    (moved / "counters" / "vcluster.yaml").write_text(
        "$provenance: {document: moved}\nerrors: {rx_errors: 10}\n")
    after = [_counter("carrier_changes", 4), _counter("rx_errors", 7)]
    before, after_dir = _pair(d, "relocated", HEALTHY[:2], after)
    return _diff(before, after_dir, "--system", "vcluster",
                 env={"RFM_REFERENCE_PREFIX": str(moved)})


def usage(d, argv: str):
    before, after = _pair(d, "usage", HEALTHY, HEALTHY)
    extra = {"refdir-alone": ["--reference-dir", str(d)],
             "thresholds-and-system": ["--thresholds", str(d), "--system", "vcluster"]}[argv]
    return _diff(before, after, *extra)


def bad_node_name(d):
    return _run(["fabric-health", "counters", "--node-name", "a b", "--no-commands",
                 "--sys-root", str(_dir(d, "nothing")), "--proc-root", str(_dir(d, "nothing"))])


def reads_nothing(d):
    empty = _dir(d, "nothing")
    return _run(["fabric-health", "counters", "--node-name", "n1", "--no-commands",
                 "--sys-root", str(empty), "--proc-root", str(empty),
                 "--out-dir", str(_dir(d, "nothing-out"))])


# -- counters as NICs count ------------------------------------------------------------------
WIDTH_CASES = {
    "xmit-wait-saturated": ([_ib("port_xmit_wait", 4294967295)], [_ib("port_xmit_wait", 4294967295)]),
    "symbol-error-saturates": ([_ib("symbol_error", 10)], [_ib("symbol_error", 65535)]),
    "link-downed-saturates": ([_ib("link_downed", 3)], [_ib("link_downed", 255)]),
    "reset": ([_ib("port_rcv_errors", 9)], [_ib("port_rcv_errors", 2)]),
    "two-widths": ([_ib("symbol_error", 70000, 64)], [_ib("symbol_error", 65535, 16)]),
    "above-its-width": ([_ib("link_downed", 3)], [_ib("link_downed", 300)]),
    "extended-64-bit": ([_ib("symbol_error", 65535, 64)], [_ib("symbol_error", 70000, 64)]),
    "carrier-reset": ([_counter("carrier_changes", 40)], [_counter("carrier_changes", 2)]),
}


def widths(d, case: str, *extra: str):
    before, after = WIDTH_CASES[case]
    return _diff(*_pair(d, f"widths-{case}", before, after), *extra)


def widths_unknown_fail(d, case: str):
    path = _dir(d, "thresholds") / "unknown-fail.yaml"
    path.write_text("$provenance: {document: hostile}\nunknown: fail\n")
    return widths(d, case, "--thresholds", str(path))


def widths_threshold_100(d, case: str):
    path = _dir(d, "thresholds") / "symbol-100.yaml"
    path.write_text("$provenance: {document: hostile}\nerrors: {symbol_error: 100}\n")
    return widths(d, case, "--thresholds", str(path))


# -- fabric-report counters ------------------------------------------------------------------
def _report(d, case: str, phases: dict[str, dict[str, str]], refs: Path | None = None):
    base = _dir(d, f"report-{case}")
    out = base / "output"
    for phase, files in phases.items():
        (out / "counters" / phase).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (out / "counters" / phase / name).write_text(text)
    report = base / "report.json"
    report.write_text(json.dumps({"session_info": {"uuid": "0" * 8}, "runs": [{"testcases": [
        {"name": "T", "display_name": "T", "system": "vcluster", "partition": "default",
         "result": "pass", "outputdir": str(out), "stagedir": str(base / "stage"),
         "job_completion_time_unix": 100.0, "perfvalues": {}}]}]}))
    argv = ["fabric-report", "counters", "--report", str(report)]
    return _run(argv + (["--reference-dir", str(refs)] if refs else []))


def report_all_malformed(d):
    """Every snapshot broken: the message says so, not "only multi-node tests take them"."""
    return _report(d, "malformed", {"before": {"node01.json": '{"node": '},
                                    "after": {"node01.json": "garbage\n"}})


def report_empty_snapshots(d):
    empty = _snap("node01", [])
    return _report(d, "empty", {"before": {"node01.json": empty},
                                "after": {"node01.json": empty}})


def report_node_twice(d):
    return _report(d, "twice", {"before": {"node01.json": _snap("node01", HEALTHY)},
                                "after": {"node01.json": _snap("node01", HEALTHY),
                                          "old.json": _snap("node01", HEALTHY)}})


def report_unbounded_thresholds(d):
    refs = _dir(d, "report-refs")
    (refs / "counters").mkdir(exist_ok=True)
    (refs / "counters" / "vcluster.yaml").write_text(
        "$provenance: {document: hostile}\nerrors: {default: 1000000000000000000000}\n")
    snap = _snap("node01", HEALTHY)
    return _report(d, "unbounded", {"before": {"node01.json": snap},
                                    "after": {"node01.json": snap}}, refs)


# -- the readers (a Python of the checkout under test) ----------------------------------------
READERS = {
    "ethtool-cut-value": "from fabrictest.counters.ethtool import parse_ethtool_stats as p\n"
                         "print(p('NIC statistics:\\n     rx_discards_phy: 58591').values)",
    "cxi-cut-state": "from fabrictest.counters.cxi import parse_cxi_stat as p\n"
                     "print(p('Device: cxi0\\n        Link state: u')[0].link_up)",
    "perfquery-capmask2-0": "from fabrictest.counters.perfquery import parse_perfquery as p\n"
                            "import sys\n(q,) = p(open(sys.argv[1]).read())\n"
                            "print('symbol_error', 'read' if 'symbol_error' in q.counters "
                            "else 'not read')",
    "perfquery-old-ofed": "from fabrictest.counters.perfquery import parse_perfquery as p\n"
                          "import sys\n(q,) = p(open(sys.argv[1]).read())\n"
                          "print(' '.join(sorted(q.counters)))",
}
READER_FILES = {"perfquery-capmask2-0": "perfquery-x-capmask2-0-lid133.txt",
                "perfquery-old-ofed": "perfquery-ofed-oldnames-lid936-tacc.txt"}


def reader(d, case: str):
    real = HERE.parent / "data" / "real-outputs"
    argv = ["python", "-c", READERS[case]]
    if case in READER_FILES:
        argv.append(str(real / READER_FILES[case]))
    return _run(argv)


# -- the table -------------------------------------------------------------------------------
def case(id_: str, spec: str, line: str, why: str = WHY):
    py(f"counters {id_}", f"fn:cases_counters:{spec}", line, why=why)


case("--diff of snapshots with no counters", "empty_snapshots",
     r"^exit 3: UNKNOWN node01: its snapshot before the test holds no counter value")
case("--diff of snapshots that read nothing", "all_unreadable", r"^exit 3: UNKNOWN ")
case("--diff healthy says what it compared", "healthy_diff",
     r"^exit 0: .*\| 1 node, 3 counters compared: 0 failures, 0 unknown$")
case("a counter twice in one snapshot", "counter_twice",
     r"^exit 64: .*netdev eth0 carrier_changes twice \(14 and 18\)")
case("two files for one node (after)", "node_twice",
     r"^exit 64: .*2 snapshots of node01 \(node01-copy.json, node01.json\)")
case("two files for one node (before)", "node_twice_before", r"^exit 64: .*2 snapshots of node01")
for other, line in (("/bin/ls", r"not text \(UTF-8\)"), ("/dev/null", "not a regular file"),
                    ("fifo", "not a regular file"), ("emptydir", r"no \*\.json snapshot"),
                    ("/nonexistent/x.json", "No such file")):
    case(f"--diff SNAP {other}", f"versus:{other}",
         rf"^exit 64: fabric-health counters: error: .*{line}")
for name, line in (("no-final-newline", "cut short"), ("cut-mid-document", "not JSON"),
                   ("value-above-64-bits", "not a counter value"),
                   ("negative-value", "not a counter value"), ("width-65", "width 65"),
                   ("empty-node", "node '' is not a name"),
                   ("counters-not-a-list", "counters is not a list"),
                   ("deep-nesting", "not JSON"), ("float-value", "not a counter value"),
                   ("unreadable-not-a-list", "unreadable is not a list")):
    case(f"a snapshot {name}", f"bad_snapshot:{name}",
         rf"^exit 64: fabric-health counters: error: .*{line}")
for name, line in (("default-1e21-int", "can never be exceeded"),
                   ("default-1e21-float", "is not a count"),
                   ("symbol-error-2-64", "can never be exceeded"),
                   ("errors-a-list", "errors: a mapping"), ("ignore-a-string", "ignore: a list"),
                   ("unknown-pass", "unknown: 'pass' is not one of")):
    case(f"thresholds {name}", f"bad_thresholds:{name}",
         rf"^exit 64: fabric-health counters: error: .*{line}")
case("thresholds a binary file", "binary_thresholds", r"^exit 64: .*not text \(UTF-8\)")
case("--system follows RFM_REFERENCE_PREFIX", "relocated_system",
     r"^exit 0: .*0 failures, 0 unknown$", why="issue 28: the counter thresholds ignore "
     "RFM_REFERENCE_PREFIX: a site that moves its references fails every error at 0")
case("--reference-dir without --system", "usage:refdir-alone",
     r"^exit 64: .*--reference-dir goes with --system")
case("--thresholds with --system", "usage:thresholds-and-system",
     r"^exit 64: .*--thresholds names the file")
case("--node-name with a space", "bad_node_name", r"^exit 64: .*a node name has no spaces")
case("a node that reads nothing", "reads_nothing", r"^exit 3: ")
case("port_xmit_wait saturated is not +0", "widths:xmit-wait-saturated",
     r"^exit 3: UNKNOWN node01 mlx5_0/1 port_xmit_wait: saturated at 4294967295 \(32-bit",
     why=WHY29)
case("saturated with unknown: fail", "widths_unknown_fail:xmit-wait-saturated",
     r"^exit 1: FAIL .*saturated at 4294967295.*counted a failure", why=WHY29)
case("symbol_error saturating past its threshold", "widths_threshold_100:symbol-error-saturates",
     r"^exit 1: FAIL node01 mlx5_0/1: symbol_error rose by at least 65525", why=WHY29)
case("link_downed saturating", "widths:link-downed-saturates",
     r"^exit 1: FAIL node01 mlx5_0/1: link went down at least 252 times", why=WHY29)
case("a counter that went backwards is a reset", "widths:reset",
     r"^exit 3: UNKNOWN .*went backwards \(9 -> 2\): reset during the test", why=WHY29)
case("carrier_changes reset", "widths:carrier-reset", r"^exit 3: UNKNOWN .*reset during",
     why=WHY29)
case("two widths are not compared", "widths:two-widths", r"^exit 3: UNKNOWN .*not comparable",
     why=WHY29)
case("a value above its width", "widths:above-its-width",
     r"^exit 3: UNKNOWN .*more than its 8-bit counter holds \(255\)", why=WHY29)
case("a 64-bit extended counter past 65535", "widths:extended-64-bit",
     r"^exit 1: CHANGE node01 mlx5_0/1 symbol_error: 65535 -> 70000 \(\+4465\)", why=WHY29)
case("report: every snapshot malformed", "report_all_malformed",
     r"^exit 3: .*UNREAD .*not JSON.*\| 0 nodes: 0 failures, 2 unreadable$")
case("report: snapshots with no counters", "report_empty_snapshots",
     r"^exit 3: .*\| 1 node: 0 failures, [1-9]\d* unreadable$")
case("report: two files for one node", "report_node_twice",
     r"^exit 3: .*\| 1 node: 0 failures, [1-9]\d* unreadable$")
case("report: thresholds that cannot fail", "report_unbounded_thresholds",
     r"^exit 3: .*\| 1 node: 0 failures, 1 unreadable$")
case("ethtool cut value is not 58591", "reader:ethtool-cut-value",
     r"^exit 0: \{'rx_discards_phy': None\}", why=WHY29)
case("cxi_stat cut state is not down", "reader:cxi-cut-state", r"^exit 0: None ", why=WHY29)
case("perfquery -x without CapMask2 reads no error counter", "reader:perfquery-capmask2-0",
     r"^exit 0: symbol_error not read ", why=WHY29)
case("perfquery of the older OFED", "reader:perfquery-old-ofed",
     r"^exit 0: VL15_dropped excessive_buffer_overrun_errors link_downed link_error_recovery "
     r"local_link_integrity_errors port_rcv_constraint_errors port_rcv_data", why=WHY29)

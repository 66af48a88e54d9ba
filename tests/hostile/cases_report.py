"""`fabric-report`'s hostile cases (issues 27 and 30): units of one figure that change between
sessions or differ in dimension, counts, histories a person reads (a partial recovery, a last
session far down), outputs onto symlinks and special files, run reports of the wrong shape,
and comparisons without evidence.

Their inputs are written here when the table is loaded (:data:`D`, a directory of its own:
run reports in ReFrame's shape, one session per file, or a list of sessions for the
histories), plus the recordings of tests/report/data (two healthy runs of the suite on
`local`, its perflogs before and after they named their figures). Each case is a command
with its exit status and the line it must print (table.py's docstring).
"""

from __future__ import annotations

import atexit
import copy
import datetime as dt
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

from table import cmd, py

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "report" / "data"
D = Path(tempfile.mkdtemp(prefix="hostile-report-"))
atexit.register(shutil.rmtree, D, True)
START = dt.datetime(2026, 10, 1, tzinfo=dt.timezone.utc).timestamp()
R = "fabric-report"
WHY_UNITS = "units are dropped on the way to history and compare"
WHY_HISTORY = "history misses what a person would see"
WHY_RECORDS = "--json onto a symlink or a device node replaces it with a file"
WHY_SHAPE = "tracebacks: run reports with a string test case, runs: [1], an int display name"
WHY_EVIDENCE = "the report cries wolf: two healthy runs, 16 of 52 figures regressed"


def _session(i: int, figures: dict, test: str = "TxRxTest %scenario=paired",
             prefix: str = "0000", **extra) -> dict:
    """One session (a run report) with `figures` {name: (value, unit[, ref, lower, upper])}."""
    uuid = f"{prefix[:4]:0<4}{i:04d}-0000-4000-8000-{i:012d}"
    when = START + 3600.0 * i
    pv = {}
    for name, (value, unit, *band) in figures.items():
        ref, lower, upper = (list(band) + [None] * 3)[:3]
        pv[f"sys:default:{name}"] = [value, ref, lower, upper, unit, "pass"]
    tc = {"name": test.split(" ")[0], "display_name": test, "system": "sys",
          "partition": "default", "environ": "builtin", "session_uuid": uuid,
          "job_completion_time_unix": when, "job_nodelist": ["node01", "node02"],
          "result": "pass", "fail_phase": None, "perfvalues": pv, **extra}
    start = dt.datetime.fromtimestamp(when, dt.timezone.utc).isoformat()
    return {"session_info": {"uuid": uuid, "time_start_unix": when, "time_start": start,
                             "hostname": "vm"}, "runs": [{"testcases": [tc]}]}


def _report(name: str, sessions: list[dict], **kw) -> str:
    """A JSON file: one session (a run report) or several (stored sessions' list)."""
    data = [_session(i, f, **kw) for i, f in enumerate(sessions)]
    path = D / f"{name}.json"
    path.write_text(json.dumps(data[0] if len(data) == 1 else data))
    return str(path)


def _levels(*steps: tuple[int, float], unit: str = "Gbps", name: str = "stream_gbps"):
    """Sessions of levels with a 0.4 % alternating jitter (deterministic)."""
    out, k = [], 0
    for n, level in steps:
        for _ in range(n):
            out.append({name: (level * (1 + 0.004 * ((-1) ** k) * (1 + k % 3) / 3), unit)})
            k += 1
    return out


# ---------------------------------------------------------------- units (issue 27 item 2)
GB_THEN_MB = _report("gb-then-mb", [{"bw": (v["bw"][0], "GB/s")} for v in
                                    _levels((12, 100.0), name="bw")]
                     + [{"bw": (v["bw"][0], "MB/s")} for v in _levels((8, 90000.0), name="bw")])
US_THEN_MS = _report("us-then-ms", _levels((12, 500.0), unit="us", name="latency")
                     + _levels((8, 0.75), unit="ms", name="latency"))
MB_THEN_GB = _report("mb-then-gb", _levels((12, 5000.0), unit="MB/s", name="bw")
                     + _levels((8, 5.0), unit="GB/s", name="bw"))
RATE_THEN_TIME = _report("rate-then-time", _levels((6, 100.0), unit="MB/s", name="bw")
                         + _levels((6, 2.0), unit="us", name="bw"))
cmd("report history GB/s then MB/s, 10 % down", [R, "history", "--report", GB_THEN_MB], 1,
    r"regressed: TxRxTest %scenario=paired bw -10\.\d% since 00000012$", stream="out",
    match="any", why=WHY_UNITS + ': GB/s then MB/s, a real -10 %: "improved (+89900 %)"')
cmd("report history us then ms, 50 % worse", [R, "history", "--report", US_THEN_MS], 1,
    r"regressed: TxRxTest %scenario=paired latency \+50\.\d% since", stream="out",
    match="any", why=WHY_UNITS + ': us then ms, latency 50 % worse: "improved"')
cmd("report history MB/s then GB/s unchanged", [R, "history", "--report", MB_THEN_GB], 0,
    r"^history of 1 figure over 20 sessions: 0 change points in 0 figures, 0 regressed",
    stream="out", match="any", why=WHY_UNITS + ': MB/s then GB/s unchanged: "REGRESSED"')
cmd("report history a rate then a time", [R, "history", "--report", RATE_THEN_TIME], 2,
    r"^fabric-report: TxRxTest %scenario=paired bw: given in MB/s \(a data rate\), us \(a "
    r"time\): not one figure", why=WHY_UNITS)

G97 = _report("97gbps", [{"stream_gbps": (97.0, "Gbps")}])
M6000 = _report("6000mbs", [{"stream_gbps": (6000.0, "MB/s")}])
M6000_BAND = _report("6000mbs-band", [{"stream_gbps": (6000.0, "MB/s", 12125.0, -0.1)}])
TIME_2US = _report("2us", [{"stream_gbps": (2.0, "us")}])
cmd("report compare 97 Gbps -> 6000 MB/s", [R, "compare", "--report", G97, "--report", M6000],
    0, r"changed by -50\.5% \(noise unknown\)$", stream="out", match="any",
    why=WHY_UNITS + ': 97 Gbps -> 6000 MB/s is "+6085 % improved"')
cmd("report html 97 Gbps -> 6000 MB/s", [R, "html", "--report", G97, "--report", M6000, "-o",
                                         str(D / "page-units")], 0,
    r"^wrote .*; no evidence of regression; 1 figure changed by more than 10% with one "
    r"session per side", stream="out", why=WHY_UNITS + ": the html shows it green")
cmd("report compare 97 Gbps -> 6000 MB/s below its band",
    [R, "compare", "--report", G97, "--report", M6000_BAND], 1,
    r"REGRESSED \(outside its reference band \[1\.091e\+04, -\]\)$", stream="out",
    match="any", why=WHY_UNITS)
cmd("report compare a rate against a time", [R, "compare", "--report", G97, "--report",
                                             TIME_2US], 2,
    r"^fabric-report: .*stream_gbps: given in Gbps \(a data rate\), us \(a time\): not one "
    r"figure", why=WHY_UNITS)
cmd("report html a rate against a time", [R, "html", "--report", G97, "--report", TIME_2US,
                                          "-o", str(D / "page-mixed")], 2,
    r"^fabric-report: .*not one figure", why=WHY_UNITS)
cmd("report compare --against-references in another unit",
    [R, "compare", "--against-references", "--report", M6000_BAND], 1,
    r"REGRESSED \(outside \[1\.091e\+04, -\]\)$", stream="out", match="any", why=WHY_UNITS)

RETR = "counters_node03_RetransSegs"
COUNT_BASE = _report("count-base", [{RETR: (0.0, "count")}, {RETR: (1.0, "count")}])
COUNT_687 = _report("count-687", [{RETR: (687.0, "count")}], prefix="0001")
COUNT_18 = _report("count-18", [{RETR: (18.0, "count")}], prefix="0001")
COUNT_HISTORY = _report("count-history", [{RETR: (float(i % 2), "count")} for i in range(14)]
                        + [{RETR: (687.0, "count")}])
cmd("report compare retransmissions 0-1 -> 687", [R, "compare", "--report", COUNT_BASE,
                                                   "--report", COUNT_687], 1,
    r"REGRESSED \(687 against at most 100 \(the count rule", stream="out", match="any",
    why=WHY_UNITS + ': retransmissions 0-1 -> 687 (count): exit 0 "changed (+inf %)"')
cmd("report compare retransmissions 0-1 -> 18", [R, "compare", "--report", COUNT_BASE,
                                                  "--report", COUNT_18], 0,
    r"ok \(within the count rule: 18 against at most 100", stream="out", match="any")
cmd("report history retransmissions then 687", [R, "history", "--report", COUNT_HISTORY], 1,
    r"REGRESSED \(latest session 687 against at most 100", stream="out", match="any",
    why=WHY_UNITS)

CAL_MIXED = _report("cal-mixed", [{"stream_gbps": (97.0, "Gbps")}, {"stream_gbps": (96.0, "Gbps")},
                                  {"stream_gbps": (12000.0, "MB/s")}],
                    test="TxRxTest %scenario=paired", scenario="paired")
CAL_DIMS = _report("cal-dims", [{"stream_gbps": (97.0, "Gbps")}, {"stream_gbps": (96.0, "Gbps")},
                                {"stream_gbps": (5.0, "us")}],
                   test="TxRxTest %scenario=paired", scenario="paired")
cmd("report calibrate Gbps and MB/s sessions", [R, "calibrate", "--report", CAL_MIXED,
                                                "--dry-run", "-o", str(D / "cal.yaml")], 0,
    r"stream_gbps: median 1\.2e\+04 MB/s, bounds -3\.0% -", stream="out", match="any",
    why=WHY_UNITS)
cmd("report calibrate a rate and a time", [R, "calibrate", "--report", CAL_DIMS, "--dry-run",
                                           "-o", str(D / "cal.yaml")], 2,
    r"^fabric-report: refused: TxRxTest paired stream_gbps: given in Gbps \(a data rate\), "
    r"us \(a time\)", match="any", why=WHY_UNITS)

UNNAMED = str(DATA / "perflog-TxRxTest-local-unnamed.log")
NAMED = str(DATA / "perflog-TxRxTest-local-named.log")
cmd("report compare a perflog whose rows name no figure", [R, "compare", "--perflog", UNNAMED,
                                                           "--perflog", UNNAMED], 0,
    r"^fabric-report: note: .*1 row with other figures than the header's, in a perflog "
    r"format that does not name them: not read",
    why="the suite's own perflog is misread: node_vm_rx_gbps is the first transmitter's rate")
cmd("report compare the perflog that names its figures", [R, "compare", "--perflog", NAMED,
                                                          "--perflog", NAMED], 0,
    r"many-to-one .* node_vm_rx_gbps +Gbps +61\.47 +61\.47", stream="out", match="any",
    why="the suite's own perflog is misread")

# ---------------------------------------------------------------- history (issue 27 item 3)
PARTIAL = _report("partial-recovery", _levels((10, 100.0), (6, 80.0), (6, 84.0)))
LAST_DOWN = _report("last-down", _levels((14, 100.0)) + [{"stream_gbps": (1e-4, "Gbps")}])
LAST_OK = _report("last-ok", _levels((14, 100.0)) + [{"stream_gbps": (98.5, "Gbps")}])
RECOVERED = _report("recovered", _levels((10, 100.0), (6, 80.0), (6, 100.0)))
DRIFT = _report("drift", _levels((6, 100.0), (5, 97.0), (5, 94.0), (5, 91.0)))
cmd("report history -20 % then +5 %", [R, "history", "--report", PARTIAL], 1,
    r"regressed: TxRxTest %scenario=paired stream_gbps -1[56]\.\d% since 00000010$",
    stream="out", match="any", why=WHY_HISTORY + ': -20 % then +5 % is "improved (+5.3 %)"')
cmd("report history a last session 99.9999 % down", [R, "history", "--report", LAST_DOWN], 1,
    r"REGRESSED \(latest session 99\.9999% below, not yet confirmed\)$", stream="out",
    match="any", why=WHY_HISTORY + ': a last session 99.9999 % down: "no change point"')
cmd("report history a last session 1.5 % down", [R, "history", "--report", LAST_OK], 0,
    r"^history of 1 figure over 15 sessions: 0 change points in 0 figures, 0 regressed",
    stream="out", match="any")
cmd("report history a full recovery", [R, "history", "--report", RECOVERED], 0,
    r", 0 regressed beyond 3%", stream="out", match="any")
cmd("report history a drift of three steps", [R, "history", "--report", DRIFT], 1,
    r"regressed: TxRxTest %scenario=paired stream_gbps -[89]\.\d% since 00000006$", stream="out",
    match="any", why=WHY_HISTORY)
for since in ("999999d", "99999999999999999999d", "9999999w"):
    cmd(f"report history --since {since}", [R, "history", "--report", PARTIAL, "--since",
                                            since], 2,
        rf"^fabric-report: --since '{since}': further back than any date",
        why="tracebacks: history --since 999999d")

# ---------------------------------------------------------------- outputs (issue 27 item 7)
THEIRS = D / "theirs.txt"
THEIRS.write_text("not ours\n")
(D / "link.json").symlink_to(THEIRS)
os.mkfifo(D / "fifo.json")
SPECIAL = {"link.json": "is a symlink", "fifo.json": "is a FIFO"}
if os.geteuid() == 0:  # a device node like /dev/full (1, 7), made here
    os.mknod(D / "full", stat.S_IFCHR | 0o600, os.makedev(1, 7))
    SPECIAL["full"] = "is a character device"
ONE = _report("one", [{"bw": (100.0, "MB/s")}])
for fname, why in SPECIAL.items():
    for sub in (["compare", "--report", ONE, "--report", ONE],
                ["history", "--report", PARTIAL], ["attribute", "--report", ONE]):
        cmd(f"report {sub[0]} --json onto {fname}", [R, *sub, "--json", str(D / fname)], 2,
            rf"^fabric-report: --json {D / fname}: {why}: not replaced", why=WHY_RECORDS)
PAGE = D / "page-link"
PAGE.mkdir()
(PAGE / "index.html").symlink_to(THEIRS)
PAGE_FIFO = D / "page-fifo"
PAGE_FIFO.mkdir()
os.mkfifo(PAGE_FIFO / "ratios-0.png")
cmd("report html -o with index.html a symlink", [R, "html", "--report", ONE, "-o", str(PAGE)],
    2, r"^fabric-report: -o .*index\.html: is a symlink: not replaced", why=WHY_RECORDS)
cmd("report html -o with a PNG a FIFO", [R, "html", "--report", ONE, "-o", str(PAGE_FIFO)], 2,
    r"^fabric-report: -o .*ratios-0\.png: is a FIFO: not replaced", why=WHY_RECORDS)
cmd("report history --html with index.html a symlink", [R, "history", "--report", PARTIAL,
                                                        "--html", str(PAGE)], 2,
    r"^fabric-report: --html .*index\.html: is a symlink: not replaced", why=WHY_RECORDS)
cmd("report calibrate -o a symlink", [R, "calibrate", "--report", CAL_MIXED, "-o",
                                      str(D / "link.json")], 2,
    r"^fabric-report: -o .*link\.json: is a symlink: not replaced", why=WHY_RECORDS)


def untouched(d, _arg=None) -> str:
    """After the cases above: the symlinks' target and the special files are as they were."""
    bad = []
    if THEIRS.read_text() != "not ours\n":
        bad.append("the symlinks' target was written")
    if not (D / "link.json").is_symlink() or not (PAGE / "index.html").is_symlink():
        bad.append("a symlink was replaced")
    if not stat.S_ISFIFO(os.lstat(D / "fifo.json").st_mode):
        bad.append("the FIFO was replaced")
    if "full" in SPECIAL and not stat.S_ISCHR(os.lstat(D / "full").st_mode):
        bad.append("the device node was replaced")
    return "; ".join(bad) or "untouched"


py("report outputs: symlinks and special files untouched", "fn:cases_report:untouched",
   r"^untouched$", why=WHY_RECORDS)

# ---------------------------------------------------------- shapes (issue 27 item 8)
GOOD = _session(0, {"bw": (100.0, "MB/s")})


def _shape(name: str, change) -> str:
    data = copy.deepcopy(GOOD)
    data = change(data) or data
    path = D / f"shape-{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def _tc(**kv):
    def change(rep):
        rep["runs"][0]["testcases"][0].update(kv)
    return change


def _unit(u):
    def change(rep):
        rep["runs"][0]["testcases"][0]["perfvalues"]["sys:default:bw"][4] = u
    return change


SHAPES = {
    "a string test case": (lambda r: {**r, "runs": [{"testcases": ["TxRxTest"]}]},
                           r"runs\[0\]\.testcases\[0\] is a string, not a test case"),
    "runs [1]": (lambda r: {**r, "runs": [1]}, r"runs\[0\] is a number, not a run"),
    "an int display name": (_tc(display_name=7), r"display_name is a number, not a string"),
    "an int unit": (_unit(5), r"unit is a number, not a string"),
    "an int nodelist": (_tc(job_nodelist=3), r"job_nodelist is a number, not a list of node"),
    "a list of sessions with a number": (lambda r: [r, 5], r"session 1: no 'runs' list"),
}
for name, (change, line) in SHAPES.items():
    bad = _shape(name.replace(" ", "-"), change)
    for sub in (["compare", "--report", ONE, "--report", bad],
                ["html", "--report", bad, "-o", str(D / "page-shape")],
                ["history", "--report", bad], ["attribute", "--report", bad]):
        cmd(f"report {sub[0]} run report with {name}", [R, *sub], 2,
            rf"^fabric-report: .*shape-.*\.json: not a ReFrame run report.*{line}",
            why=WHY_SHAPE)

# ------------------------------------------------------ evidence (issue 30 item 1)
HEALTHY = [str(DATA / f"run-report-local-healthy-{i}.json") for i in (1, 2)]
cmd("report compare two healthy runs on local", [R, "compare", "--report", HEALTHY[0],
                                                 "--report", HEALTHY[1]], 0,
    r"^no evidence of regression; \d+ figures changed by more than 10% with one session per "
    r"side: run 3 per side to judge \(compared 52 figures, 0 unreadable entries in the "
    r"sources\)$", stream="out", match="any", why=WHY_EVIDENCE)
cmd("report html two healthy runs on local", [R, "html", "--report", HEALTHY[0], "--report",
                                              HEALTHY[1], "-o", str(D / "page-healthy")], 0,
    r"^wrote .* \(52 figures, 0 sweeps, 0 unreadable entries\); no evidence of regression; "
    r"\d+ figures changed", stream="out", why=WHY_EVIDENCE)
THREE_A = _report("three-a", [{"bw": (v, "MB/s")} for v in (100.0, 101.0, 99.0)])
THREE_B = _report("three-b", [{"bw": (v, "MB/s")} for v in (85.0, 86.0, 84.0)], prefix="0002")
THREE_WIDE = _report("three-wide", [{"bw": (v, "MB/s")} for v in (85.0, 130.0, 60.0)],
                     prefix="0003")
HALF = _report("half", [{"bw": (50.0, "MB/s")}], prefix="0004")
cmd("report compare 3 sessions per side, beyond the noise", [R, "compare", "--report", THREE_A,
                                                             "--report", THREE_B], 1,
    r"^1 of 1 figures regressed beyond the noise or outside their reference band",
    stream="out", match="any", why=WHY_EVIDENCE)
cmd("report compare 3 sessions per side, within the noise", [R, "compare", "--report",
                                                             THREE_WIDE, "--report", THREE_A],
    0, r"^no evidence of regression \(compared 1 figure, 1 moved within the noise",
    stream="out", match="any", why=WHY_EVIDENCE)
cmd("report compare one session per side, half", [R, "compare", "--report", ONE, "--report",
                                                  HALF], 0,
    r"changed by -50\.0% \(noise unknown\)$", stream="out", match="any", why=WHY_EVIDENCE)
cmd("report compare says nothing unread before the failing list",
    [R, "compare", "--report", THREE_A, "--report", THREE_B], 1,
    r"\(compared 1 figure, 0 unreadable entries in the sources\); failing: TxRxTest "
    r"%scenario=paired bw \(-15\.0%\)$", stream="out", match="any",
    why="compare ends 'could not read 0: AllToManyTest ...' (the regressed figures)")

# ------------------------------------------------------ output for people (issue 30 item 3)
NOISY = _report("float-noise", [{"t_irecv": (3.2349999999999995e-07, "s")}])
NOISY_B = _report("float-noise-b", [{"t_irecv": (3.3e-07, "s")}], prefix="0005")
cmd("report compare prints 4 significant digits", [R, "compare", "--report", NOISY,
                                                   "--report", NOISY_B], 0,
    r" t_irecv +s +3\.235e-07 +3\.3e-07 ", stream="out", match="any",
    why="figures like 3.2349999999999995e-07 s")

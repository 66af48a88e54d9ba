"""`fabric-report acceptance`'s hostile cases (issue 30 item 2): nothing to judge, a stage
missing, run reports and files of the wrong shape, outputs onto symlinks and special files,
pipes given as inputs (refused without waiting for a writer), figures that are no results,
cut outputs. Each case: its exit status (0 ACCEPTED, 1 NOT ACCEPTED, 2 nothing to judge or bad
input) and the first line it must answer with (table.py's docstring).

Its inputs are written here when the table is loaded, in a directory of its own: a small
healthy acceptance run in ReFrame's run-report shape (a health test's output, two pair tests
with counter snapshots on every node), and its variants.
"""

from __future__ import annotations

import atexit
import copy
import json
import os
import shutil
import tempfile
from pathlib import Path

from table import cmd

from fabrictest.counters.snapshot import Counter, Snapshot

D = Path(tempfile.mkdtemp(prefix="hostile-acceptance-"))
atexit.register(shutil.rmtree, D, True)
R = "fabric-report"
WHY = "no page says accepted or not accepted, with the evidence under it"
NODES = ["node01", "node02"]
HEALTH = "".join(f"HEALTH {n} hsn0/- ip: PASS found 10.0.0.{i}/24, expected a global "
                 f"address\nHEALTH summary: 1 checks, 0 failed\n" for i, n in enumerate(NODES))


def _case(name: str, figures: dict, stdout: str = "", snapshots: bool = True, **kw) -> dict:
    out = D / "out" / name.split(" ")[0]
    out.mkdir(parents=True, exist_ok=True)
    if stdout:
        (out / "rfm_job.out").write_text(stdout)
    if snapshots:
        for phase, t in (("before", 100.0), ("after", 105.0)):
            (out / "counters" / phase).mkdir(parents=True, exist_ok=True)
            for n in NODES:
                s = Snapshot(n, [Counter("netdev", "eth0", "-", "carrier_changes", 4)], [], t)
                (out / "counters" / phase / f"{n}.json").write_text(s.to_json())
    pv = {f"vcluster:nodes:{k}": [v, 0.19, -0.05, None, "Gbps", "pass"]
          for k, v in figures.items()}
    return {"name": name, "display_name": name, "system": "vcluster", "partition": "nodes",
            "environ": "openmpi", "result": "pass", "job_nodelist": NODES,
            "outputdir": str(out), "stagedir": str(D / "stage"), "job_stdout": "rfm_job.out",
            "num_tasks": 2, "job_completion_time_unix": 110.0, "perfvalues": pv, **kw}


HEALTH_CASE = _case("NicHealthTest", {}, HEALTH, snapshots=False, tags=["preflight"])
PAIR = _case("TxRxTest %scenario=paired", {"stream_gbps": 0.19})
RUN = {"session_info": {"uuid": "u1", "hostname": "vm"},
       "runs": [{"testcases": [HEALTH_CASE, PAIR]}]}


def _write(name: str, data) -> str:
    path = D / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def _run_with(*cases: dict) -> dict:
    return {**copy.deepcopy(RUN), "runs": [{"testcases": list(cases)}]}


GOOD = _write("run.json", RUN)
NO_HEALTH = _write("no-health.json", _run_with(PAIR))
ONLY_BUILD = _write("only-build.json", _run_with(
    {"name": "FabricBinaries ~vcluster:nodes+openmpi", "display_name": "FabricBinaries",
     "system": "vcluster", "partition": "nodes", "result": "pass", "fixture": True}))
WRONG_SHAPE = _write("wrong-shape.json", {"runs": [{"testcases": ["TxRxTest"]}]})
NOT_A_REPORT = _write("not-a-report.json", {"hello": "world"})
BINARY = D / "binary.json"
BINARY.write_bytes(b"\x00\xff\xfe" * 100)
INF = _write("inf.json", _run_with(HEALTH_CASE, _case("TxRxTest %scenario=inf",
                                                       {"stream_gbps": float("inf")})))
(D / "cut").mkdir()
CUT_HEALTH = _case("NicHealthTest", {}, snapshots=False, tags=["preflight"])
CUT_HEALTH["outputdir"] = str(D / "cut")
(D / "cut" / "rfm_job.out").write_text(HEALTH[:-40])  # node02 stops mid-line
CUT = _write("cut.json", _run_with(CUT_HEALTH, PAIR))
FAILED_CHECK = _case("NicHealthTest", {}, snapshots=False, tags=["preflight"], result="fail")
FAILED_CHECK["outputdir"] = str(D / "failed")
(D / "failed").mkdir()
(D / "failed" / "rfm_job.out").write_text(HEALTH.replace(
    "HEALTH node01 hsn0/- ip: PASS found 10.0.0.0/24, expected a global address",
    "HEALTH node01 hsn0/- ip: FAIL found no address, expected a global address"))
FAILED = _write("failed-check.json", _run_with(FAILED_CHECK, PAIR))
NO_DIRS = copy.deepcopy(PAIR)
NO_DIRS["outputdir"] = NO_DIRS["stagedir"] = str(D / "gone")
GONE = _write("dirs-gone.json", _run_with(HEALTH_CASE, NO_DIRS))

HEALTH_TEXT = _write("health.txt", HEALTH)
NOT_HEALTH = _write("not-health.txt", "node01 is fine, trust me\n")
BAD_HEALTH_JSON = _write("bad-health.json", '{"node": "node01", "results": "all good"}')
TOPO_ELSEWHERE = _write("topo-elsewhere.txt", "sw1: nid[001-004] parent=top\n")
NOT_SWEEP = _write("not-sweep.json", {"nodes": ["node01"]})
BAD_THRESHOLDS = D / "refs-bad"
(BAD_THRESHOLDS / "counters").mkdir(parents=True)
(BAD_THRESHOLDS / "counters" / "vcluster.yaml").write_text("errors: {default: -1}\n")
os.mkfifo(D / "fifo")
PAGE = D / "page-link"
PAGE.mkdir()
(PAGE / "index.html").symlink_to(D / "run.json")
(D / "twin-link.json").symlink_to(D / "run.json")
(D / "a-file").write_text("x")

OUT = ["-o", str(D / "page")]
A = [R, "acceptance"]
cmd("acceptance healthy run: ACCEPTED", [*A, "--report", GOOD, *OUT], 0,
    r"^ACCEPTED: stage 1 2 nodes, 2 checks: every check passed; stage 2 1 figure against its reference in 1 node set:",
    stream="out", why=WHY)
cmd("acceptance no source", [*A, *OUT], 2, r"^fabric-report: nothing to judge: give the run",
    why=WHY)
cmd("acceptance only the build fixture", [*A, "--report", ONLY_BUILD, *OUT], 2,
    r"^fabric-report: nothing to judge: stage 1 \(pre-flight health\): no pre-flight result",
    why="a gate fed nothing exits non-zero")
cmd("acceptance stage 1 missing", [*A, "--report", NO_HEALTH, *OUT], 1,
    r"^NOT ACCEPTED: stage 1 \(pre-flight health\) unjudged: no pre-flight result",
    stream="out", why="never ACCEPTED on nothing")
cmd("acceptance stage 1 from --health instead", [*A, "--report", NO_HEALTH, "--health",
                                                 HEALTH_TEXT, *OUT], 0, r"^ACCEPTED: ",
    stream="out")
cmd("acceptance a failed pre-flight check", [*A, "--report", FAILED, *OUT], 1,
    r"^NOT ACCEPTED: failed: node01 \(stage 1 \(pre-flight health\)\)", stream="out")
cmd("acceptance a health output cut mid-line", [*A, "--report", CUT, *OUT], 1,
    r"^NOT ACCEPTED: stage 1 \(pre-flight health\) incomplete: NicHealthTest on "
    r"vcluster:nodes: fabric-health: 1 'HEALTH summary' lines for 2 nodes", stream="out")
cmd("acceptance test directories gone", [*A, "--report", GONE, *OUT], 1,
    r"^NOT ACCEPTED: stage 3 \(counters and flaps\) (unjudged|incomplete): ", stream="out",
    why="no counter snapshot: the flaps cannot be judged")
cmd("acceptance a figure of inf", [*A, "--report", INF, *OUT], 2,
    r"^fabric-report: .*stream_gbps = inf Gbps is not a finite positive rate: refused")
cmd("acceptance a report of the wrong shape", [*A, "--report", WRONG_SHAPE, *OUT], 2,
    r"^fabric-report: .*wrong-shape\.json: not a ReFrame run report: runs\[0\]\.testcases\[0\] "
    r"is a string")
cmd("acceptance not a run report", [*A, "--report", NOT_A_REPORT, *OUT], 2,
    r"^fabric-report: .*: not a ReFrame run report \(no 'runs' list\)")
cmd("acceptance a binary report", [*A, "--report", str(BINARY), *OUT], 2,
    r"^fabric-report: .*binary\.json: not a ReFrame JSON run report")
cmd("acceptance a missing report", [*A, "--report", str(D / "nope-*.json"), *OUT], 2,
    r"^fabric-report: --report .*nope-\*\.json: no file matches")
cmd("acceptance a perflog", [*A, "--perflog", str(D / "run.json"), *OUT], 2,
    r"^fabric-report: --perflog .*: perflogs record no test cases")
cmd("acceptance -o with index.html a symlink", [*A, "--report", GOOD, "-o", str(PAGE)], 2,
    r"^fabric-report: -o .*index\.html: is a symlink: not replaced")
cmd("acceptance -o a file", [*A, "--report", GOOD, "-o", str(D / "a-file")], 2,
    r"^fabric-report: -o .*a-file: cannot create it")
cmd("acceptance --json onto a symlink", [*A, "--report", GOOD, "--json",
                                         str(D / "twin-link.json"), *OUT], 2,
    r"^fabric-report: --json .*twin-link\.json: is a symlink: not replaced")
cmd("acceptance --json onto /dev/null", [*A, "--report", GOOD, "--json", "/dev/null", *OUT], 2,
    r"^fabric-report: --json /dev/null: is a character device: not replaced")
cmd("acceptance --health a pipe", [*A, "--report", GOOD, "--health", str(D / "fifo"), *OUT], 2,
    r"^fabric-report: .*fifo: not a regular file", why="a pipe as input waits forever")
cmd("acceptance --health not fabric-health", [*A, "--report", GOOD, "--health", NOT_HEALTH,
                                              *OUT], 2,
    r"^fabric-report: --health .*not-health\.txt: not fabric-health output")
cmd("acceptance --health JSON of the wrong shape", [*A, "--report", GOOD, "--health",
                                                    BAD_HEALTH_JSON, *OUT], 2,
    r"^fabric-report: --health .*: node01: no results list")
cmd("acceptance --sweep a pipe", [*A, "--report", GOOD, "--sweep", str(D / "fifo"), *OUT], 2,
    r"^fabric-report: --sweep .*fifo: not a regular file")
cmd("acceptance --sweep not a sweep", [*A, "--report", GOOD, "--sweep", NOT_SWEEP, *OUT], 2,
    r"^fabric-report: --sweep .*: not a fabric-sweep JSON file \(no pairs")
cmd("acceptance --topology missing", [*A, "--report", GOOD, "--topology", str(D / "no.txt"),
                                      *OUT], 2, r"^fabric-report: --topology .*no\.txt: ")
cmd("acceptance --topology of other nodes", [*A, "--report", GOOD, "--topology",
                                             TOPO_ELSEWHERE, *OUT], 2,
    r"^fabric-report: --topology .*topo-elsewhere\.txt places none of the run's nodes")
cmd("acceptance --history-report missing", [*A, "--report", GOOD, "--history-report",
                                            str(D / "none-*.json"), *OUT], 2,
    r"^fabric-report: --report .*none-\*\.json: no file matches")
cmd("acceptance counter thresholds refused", [*A, "--report", GOOD, "--reference-dir",
                                              str(BAD_THRESHOLDS), *OUT], 1,
    r"^NOT ACCEPTED: stage 3 \(counters and flaps\) incomplete: .*vcluster\.yaml", stream="out",
    why="a thresholds file that cannot be read is said, never read as 'no errors'")

"""`fabric-report counters` and the html page's whole-run counters: the snapshots the tests
kept in their output directories, put together per node (exit 0 healthy, 1 failure, 2
nothing to read, 3 unreadable)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabrictest.counters.snapshot import Counter, Snapshot
from fabrictest.report.cli import main

THRESHOLDS = """$provenance:
  document: "test thresholds"
errors:
  default: 0
"""


def write_case(root: Path, name: str, t0: float, carrier: dict[str, tuple[int, int]],
               retrans: tuple[int, int] = (0, 3)) -> dict:
    """A test case whose output directory holds counters/{before,after}/<node>.json."""
    out = root / name
    for phase, i, t in (("before", 0, t0), ("after", 1, t0 + 5)):
        d = out / "counters" / phase
        d.mkdir(parents=True)
        for node, values in carrier.items():
            s = Snapshot(node, [Counter("netdev", "eth0", "-", "carrier_changes", values[i]),
                                Counter("tcp", "tcp", "-", "RetransSegs", retrans[i])], [], t)
            (d / f"{node}.json").write_text(s.to_json())
    return {"name": name, "display_name": name, "system": "vcluster", "partition": "nodes",
            "environ": "openmpi", "result": "pass", "outputdir": str(out),
            "stagedir": str(root / "stage" / name), "job_completion_time_unix": t0 + 6,
            "perfvalues": {"vcluster:nodes:bw": [1.0, 1.0, -0.1, None, "Gbps", "pass"]}}


def report_file(tmp_path: Path, *cases: dict) -> Path:
    path = tmp_path / f"run-report-{len(list(tmp_path.glob('run-report-*')))}.json"
    path.write_text(json.dumps({"session_info": {"uuid": "u1"},
                                "runs": [{"testcases": list(cases)}]}))
    return path


@pytest.fixture
def refdir(tmp_path):
    (tmp_path / "ref" / "counters").mkdir(parents=True)
    (tmp_path / "ref" / "counters" / "vcluster.yaml").write_text(THRESHOLDS)
    return tmp_path / "ref"


def run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["counters", *argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_healthy_run_lists_every_node(tmp_path, refdir, capsys):
    rep = report_file(tmp_path, write_case(tmp_path, "A", 100, {"node01": (4, 4),
                                                                 "node02": (4, 4)}),
                      write_case(tmp_path, "B", 200, {"node01": (4, 4)}, retrans=(3, 6)))
    rc, out, _ = run(capsys, "--report", str(rep), "--reference-dir", str(refdir))
    assert rc == 0, out
    assert "NODE vcluster:node01: 2 tests; tcp RetransSegs +6" in out
    assert "NODE vcluster:node02: 1 test; tcp RetransSegs +3" in out
    assert out.rstrip().endswith("2 nodes: 0 failures, 0 unreadable")


def test_a_flap_between_two_runs_fails_naming_the_node(tmp_path, refdir, capsys):
    """Each run's test is clean; node03 went down and up between the two runs."""
    first = report_file(tmp_path, write_case(tmp_path, "A", 100, {"node03": (4, 4)}))
    second = report_file(tmp_path, {**write_case(tmp_path, "A2", 200, {"node03": (6, 6)}),
                                    "display_name": "A", "jobid": "17"})
    out_json = tmp_path / "c.json"
    rc, out, _ = run(capsys, "--report", str(first), "--report", str(second),
                     "--reference-dir", str(refdir), "--json", str(out_json))
    assert rc == 1
    assert ("FAIL vcluster:node03 eth0: link went down 1 time during no test (between A and "
            "A (job 17)) (carrier_changes 4 -> 6)") in out
    doc = json.loads(out_json.read_text())
    # one down and up, said once (the whole run's difference holds the same one)
    assert doc[0]["node"] == "node03" and len(doc[0]["failures"]) == 1


def test_a_counter_reset_between_tests_is_unread(tmp_path, refdir, capsys):
    rep = report_file(tmp_path, write_case(tmp_path, "A", 100, {"node01": (4, 4)}),
                      write_case(tmp_path, "B", 200, {"node01": (4, 4)}))
    rc, out, _ = run(capsys, "--report", str(rep), "--reference-dir", str(refdir))
    assert rc == 3
    assert ("UNREAD vcluster:node01 tcp RetransSegs: went backwards (3 -> 0): reset during no "
            "test (between A and B), its increase is unknown") in out


def test_an_unreadable_snapshot_is_exit_3(tmp_path, refdir, capsys):
    case = write_case(tmp_path, "A", 100, {"node01": (4, 4), "node02": (4, 4)})
    (Path(case["outputdir"]) / "counters" / "after" / "node02.json").write_text('{"node": ')
    rc, out, _ = run(capsys, "--report", str(report_file(tmp_path, case)),
                     "--reference-dir", str(refdir))
    assert rc == 3
    assert "UNREAD vcluster:node02: A has no snapshot after its launch" in out
    assert "node02.json: counters snapshot: not JSON" in out


def test_a_missing_thresholds_file_is_noted(tmp_path, capsys):
    rep = report_file(tmp_path, write_case(tmp_path, "A", 100, {"node01": (4, 4)}))
    rc, _, err = run(capsys, "--report", str(rep), "--reference-dir", str(tmp_path / "none"))
    assert rc == 0 and "counters/vcluster.yaml: every error counter increase fails" in err


def test_a_bad_thresholds_file_is_said_and_every_error_counts(tmp_path, capsys):
    bad = tmp_path / "bad"
    (bad / "counters").mkdir(parents=True)
    (bad / "counters" / "vcluster.yaml").write_text("errors: {default: 1}\n")
    rep = report_file(tmp_path, write_case(tmp_path, "A", 100, {"node01": (4, 4)}))
    rc, out, _ = run(capsys, "--report", str(rep), "--reference-dir", str(bad))
    assert rc == 3 and "no $provenance" in out


@pytest.mark.parametrize("argv, message", [
    ([], "nothing to read"),
    (["--report", "{plain}"], "no counter snapshots in the 1 test cases"),
    (["--perflog", "{perflogs}"], "perflogs do not record the tests' directories"),
    (["--report", "{plain}", "--json", "/nonexistent/dir/x.json"], "--json"),
])
def test_nothing_to_read_or_a_bad_option_is_one_line_and_2(tmp_path, capsys, argv, message):
    plain = report_file(tmp_path, {**write_case(tmp_path, "A", 1, {}), "outputdir": "/nope",
                                   "stagedir": "/nope"})
    perflogs = tmp_path / "perflogs"
    perflogs.mkdir()
    (perflogs / "x.log").write_text("")
    argv = [a.format(plain=plain, perflogs=perflogs) for a in argv]
    rc, _, err = run(capsys, *argv)
    assert rc == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_html_page_shows_the_whole_run(tmp_path, refdir, capsys, monkeypatch):
    monkeypatch.setenv("RFM_REFERENCE_PREFIX", str(refdir))
    first = report_file(tmp_path, write_case(tmp_path, "A", 100, {"node03": (4, 4)}),
                        write_case(tmp_path, "B", 200, {"node03": (6, 6)}))
    assert main(["html", "--report", str(first), "-o", str(tmp_path / "html")]) == 0
    page = (tmp_path / "html" / "index.html").read_text()
    assert "<h2>Counters over the whole run</h2>" in page
    assert "link went down 1 time during no test (between A and B)" in page

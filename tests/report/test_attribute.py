"""`fabric-report attribute`: what a run's failures share, on synthetic run reports."""

from __future__ import annotations

import json

import pytest

from fabrictest.parsers.topology import parse_topology_file
from fabrictest.report.attribute.failures import (
    attribute,
    cases_from_records,
    cases_from_testcases,
    link_of,
)
from fabrictest.report.cli import main

TWO_SWITCHES = parse_topology_file(
    "sw1: node[01-02] parent=top\nsw2: node[03-04] parent=top\ntop:\n")


def tc(name, result, nodes, perfvalues=None, system="vcluster", partition="slurm"):
    return {"name": name.replace(" %", "_").replace("=", "_"), "display_name": name,
            "system": system, "partition": partition, "environ": "mpi", "result": result,
            "job_nodelist": nodes, "perfvalues": perfvalues or {}}


def link_pv(value, result):
    return [value, 1.0, -0.2, None, "Gbps", result]


def report(*cases):
    return {"session_info": {"uuid": "u1"}, "runs": [{"testcases": list(cases)}]}


def node03_run():
    """node03 slow: a pair test, a txrx test whose failing figure is node03's link, a
    bisection over all four; healthy pair tests without node03."""
    return [
        tc("TxRxTest %scenario=paired", "fail", ["node01", "node03"]),
        tc("TxRxTest %scenario=pairs-of-three", "fail", ["node01", "node02", "node03"],
           {"vcluster:slurm:stream_node03_to_node01_gbps": link_pv(0.05, "fail"),
            "vcluster:slurm:stream_node01_to_node02_gbps": link_pv(0.19, "pass"),
            "vcluster:slurm:stream_node02_to_node03_gbps": link_pv(0.18, "pass")}),
        tc("BisectionTest", "fail", ["node01", "node02", "node03", "node04"]),
        tc("OsuBwTest %pair=a", "pass", ["node01", "node02"]),
        tc("OsuBwTest %pair=b", "pass", ["node02", "node04"]),
    ]


def test_link_names_of_txrx_figures():
    assert link_of("stream_node03_to_node01_gbps") == ("node03", "node01")
    assert link_of("stream_node03_tx1_to_node01_gbps") == ("node03", "node01")
    assert link_of("stream_gbps") is None


def test_a_node_shared_by_every_failure_is_named_with_its_evidence():
    res = attribute(cases_from_testcases(node03_run()))
    assert res.status == 1
    assert [e.name for e in res.suspects] == ["node03"]
    assert res.lines[0] == "suspect: node03: shared by all 3 failed cases"
    ev = res.lines[1]
    assert ev.startswith("  node03: in 3 of 3 failed cases (TxRxTest %scenario=paired on "
                         "vcluster:slurm, TxRxTest %scenario=pairs-of-three")
    assert ev.endswith("in 0 of 2 passing")
    # node01 is in every failure too, but healthy cases involve it: said, not named
    assert "node01 (1 passing)" in res.lines[-1]


def test_the_failing_link_narrows_a_case_to_its_ends():
    """Without the per-link figure the pairs-of-three case implicates node02 too."""
    cases = cases_from_testcases(node03_run())
    three = next(c for c in cases if "pairs-of-three" in c.name)
    assert three.failing_links == [("node03", "node01")]
    res = attribute(cases)
    node02 = [ln for ln in res.lines if ln.startswith("  node02")]
    assert not node02  # not in every failure: not shared


def test_an_uplink_crossed_by_every_failure_with_healthy_runs_inside_the_switches():
    run = [
        tc("OsuBwTest %pair=13", "fail", ["node01", "node03"]),
        tc("OsuBwTest %pair=24", "fail", ["node02", "node04"]),
        tc("BisectionTest", "fail", ["node01", "node02", "node03", "node04"]),
        tc("OsuBwTest %pair=12", "pass", ["node01", "node02"]),
        tc("OsuBwTest %pair=34", "pass", ["node03", "node04"]),
    ]
    res = attribute(cases_from_testcases(run), TWO_SWITCHES)
    assert res.status == 1
    assert [e.kind for e in res.suspects] == ["uplink"]
    # both uplinks to the top switch carry the same runs: named together
    assert res.suspects[0].name == "sw1<->top or sw2<->top"
    assert res.lines[0].startswith("suspect: uplink sw1<->top or sw2<->top: shared by all 3")
    assert res.lines[1].endswith("in 0 of 2 passing")
    # without the topology no node is in every failure: the failures share nothing
    plain = attribute(cases_from_testcases(run))
    assert plain.suspects == [] and plain.lines[0].startswith("the failures share nothing")


def test_failures_that_share_nothing_are_said_to():
    run = [
        tc("OsuBwTest %pair=12", "fail", ["node01", "node02"]),
        tc("OsuBwTest %pair=34", "fail", ["node03", "node04"]),
        tc("OsuBwTest %pair=56", "pass", ["node05", "node06"]),
    ]
    res = attribute(cases_from_testcases(run))
    assert res.status == 1 and res.suspects == []
    assert res.lines[0].startswith("the failures share nothing")
    assert any("node03, node04" in ln for ln in res.lines)


def test_two_faults_are_covered_by_two_suspects():
    run = [
        tc("A %p=1", "fail", ["node01", "node02"]),
        tc("A %p=2", "fail", ["node01", "node05"]),
        tc("A %p=3", "fail", ["node03", "node04"]),
        tc("A %p=4", "fail", ["node04", "node06"]),
        tc("A %p=5", "pass", ["node02", "node03"]),
    ]
    res = attribute(cases_from_testcases(run))
    assert sorted(e.name for e in res.suspects) == ["node01", "node04"]
    assert "cover 4 of them" in res.lines[0]


def test_nothing_failed():
    res = attribute(cases_from_testcases(node03_run()[3:]))
    assert res.status == 0 and res.suspects == []
    assert res.lines == ["nothing failed (2 passing cases)"]


def test_retries_keep_the_last_run_and_skips_count_for_nothing():
    first = tc("OsuBwTest %pair=12", "fail", ["node01", "node02"])
    retry = tc("OsuBwTest %pair=12", "pass", ["node01", "node02"])
    skipped = tc("GpcnetTest", "skip", [])
    cases = cases_from_testcases([first, retry, skipped])
    assert [(c.name, c.failed) for c in cases] == [
        ("OsuBwTest %pair=12 on vcluster:slurm", False)]


def test_command_on_a_run_report_file(tmp_path, capsys):
    path = tmp_path / "run-report.json"
    path.write_text(json.dumps(report(*node03_run())))
    out_json = tmp_path / "attr.json"
    assert main(["attribute", "--report", str(path), "--json", str(out_json)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("suspect: node03: shared by all 3 failed cases\n")
    assert "in 0 of 2 passing" in out
    data = json.loads(out_json.read_text())
    assert data["suspects"][0]["name"] == "node03" and data["failed"] == 3

    topo = tmp_path / "topo.txt"
    topo.write_text("sw1: node[01-02] parent=top\nsw2: node[03-04] parent=top\ntop:\n")
    assert main(["attribute", "--report", str(path), "--topology", str(topo)]) == 1
    assert capsys.readouterr().out.startswith("suspect: node03:")

    healthy = tmp_path / "healthy.json"
    healthy.write_text(json.dumps(report(*node03_run()[3:])))
    assert main(["attribute", "--report", str(healthy)]) == 0
    assert capsys.readouterr().out == "nothing failed (2 passing cases)\n"


@pytest.mark.parametrize("argv, message", [
    (["attribute"], "attribute takes one source"),
    (["attribute", "--report", "/nonexistent.json"], "is not a file"),
    (["attribute", "--report", "{run}", "--topology", "/nonexistent"], "--topology"),
    (["attribute", "--report", "{run}", "--topology", "{badtopo}"], "--topology"),
    (["attribute", "--report", "{run}", "--topology", "{othertopo}"], "places none"),
    (["attribute", "--report", "{empty}"], "no performance figures"),
    (["attribute", "--report", "{skipped}"], "no test case that passed or failed"),
    (["attribute", "--report", "{run}", "--report", "{run}"], "takes one source"),
])
def test_command_refuses_with_one_line(tmp_path, capsys, argv, message):
    run = tmp_path / "run.json"
    run.write_text(json.dumps(report(*node03_run())))
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not a topology\n")
    other = tmp_path / "other.txt"
    other.write_text("swx: hostA,hostB\n")
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(report()))
    skipped = tmp_path / "skipped.json"
    skipped.write_text(json.dumps(report(tc("GpcnetTest", "skip", []))))
    argv = [a.format(run=run, badtopo=bad, othertopo=other, empty=empty, skipped=skipped)
            for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_perflog_figures_implicate_the_nodes_their_links_name():
    """Perflogs carry no node list: a case is its figures, its nodes those its links name."""
    from fabrictest.report.records.results import PerfRecord

    def rec(test, job, pvar, result):
        return PerfRecord(test=test, base=test.split(" %")[0], system="vc", partition="p",
                          environ="mpi", pvar=pvar, value=0.1, unit="Gbps", result=result,
                          session=job)

    records = [
        rec("TxRxTest %scenario=paired", "1", "stream_node03_to_node01_gbps", "fail"),
        rec("TxRxTest %scenario=paired", "1", "stream_node02_to_node04_gbps", "pass"),
        rec("TxRxTest %scenario=many", "2", "stream_node04_to_node03_gbps", "fail"),
        rec("TxRxTest %scenario=many", "2", "stream_node01_to_node02_gbps", "pass"),
        rec("TxRxTest %scenario=ring", "3", "stream_node01_to_node04_gbps", "pass"),
    ]
    cases = cases_from_records(records)
    assert [c.failed for c in cases] == [True, True, False]
    res = attribute(cases)
    assert [e.name for e in res.suspects] == ["node03"]
    assert res.lines[1].endswith("in 0 of 1 passing")

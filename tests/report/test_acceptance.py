"""`fabric-report acceptance` on runs written here: the verdict over the three stages (every
stage passed: ACCEPTED, exit 0; a failed element named with its stage, exit 1; nothing to
judge, exit 2), each stage shown failing on the fault it exists for, and the JSON twin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report._reports import fabric_report

from fabrictest.counters.snapshot import Counter, Snapshot
from fabrictest.parsers.topology import parse_topology_file
from fabrictest.report.acceptance import verdict as acc
from fabrictest.report.acceptance.stage1 import found_expected
from fabrictest.report.acceptance.stage2 import set_of

THRESHOLDS = '$provenance:\n  document: "test thresholds"\nerrors:\n  default: 0\n'
TOPOLOGY = "sw1: node[01-02] parent=top\nsw2: node[03-04] parent=top\n"
NODES = ("node01", "node02", "node03", "node04")
HEALTHY_LINES = "".join(
    f"HEALTH {n} hsn0/- mac: PASS found 02:00:00:00:00:0{i}, expected 02:00:00:00:00:0{i}\n"
    f"HEALTH {n} hsn0/- ip: PASS found 10.200.1.1{i}/24, expected an address in "
    f"10.200.1.0/24\nHEALTH summary: 2 checks, 0 failed\n" for i, n in enumerate(NODES, 1))


class Run:
    """A run report whose test cases keep their files under `root` (as ReFrame's do)."""

    def __init__(self, root: Path):
        self.root, self.cases, self.t = root, [], 1000.0

    def case(self, name: str, nodes, figures: dict, result: str = "pass", stdout: str = "",
             carrier=None, fail_reason=None, tags=()) -> dict:
        self.t += 10
        out = self.root / "out" / f"c{len(self.cases)}"
        out.mkdir(parents=True)
        if stdout:
            (out / "rfm_job.out").write_text(stdout)
        if carrier is not None:  # counter snapshots before and after, per node
            for phase, i in (("before", 0), ("after", 1)):
                d = out / "counters" / phase
                d.mkdir(parents=True)
                for node in nodes:
                    s = Snapshot(node, [Counter("netdev", "eth0", "-", "carrier_changes",
                                                carrier.get(node, (4, 4))[i])],
                                 [], self.t + 3 * i)
                    (d / f"{node}.json").write_text(s.to_json())
        pv = {f"vcluster:nodes:{k}": [v, ref, lo, hi, unit, verdict]
              for k, (v, unit, ref, lo, hi, verdict) in figures.items()}
        tc = {"name": name, "display_name": name, "system": "vcluster",
              "partition": "nodes", "environ": "openmpi", "result": result,
              "fail_reason": fail_reason, "job_nodelist": list(nodes), "outputdir": str(out),
              "stagedir": str(self.root / "stage" / out.name), "job_stdout": "rfm_job.out",
              "num_tasks": len(nodes), "job_completion_time_unix": self.t + 5,
              "session_uuid": "u1", "tags": list(tags), "perfvalues": pv,
              "suite_commit": "abc123", "mpi_version": "Open MPI 4.1.4"}
        self.cases.append(tc)
        return tc

    def write(self, name: str = "run.json") -> Path:
        path = self.root / name
        path.write_text(json.dumps({"session_info": {"uuid": "u1", "hostname": "vm",
                                                     "time_start": "20261127T000000+0000",
                                                     "version": "4.10.4"},
                                    "runs": [{"testcases": self.cases}]}))
        return path


def fig(value, ref=0.19, lower=-0.05, unit="Gbps"):
    verdict = "pass" if value >= ref * (1 + lower) else "fail"
    return (value, unit, ref, lower, None, verdict)


@pytest.fixture
def env(tmp_path):
    (tmp_path / "ref" / "counters").mkdir(parents=True)
    (tmp_path / "ref" / "counters" / "vcluster.yaml").write_text(THRESHOLDS)
    (tmp_path / "topo.txt").write_text(TOPOLOGY)
    return tmp_path


def healthy(run: Run, slow: float = 0.19, flap: bool = False, health: str = HEALTHY_LINES):
    run.case("NicHealthTest", NODES, {}, stdout=health, tags=["preflight"],
             result="pass" if "FAIL" not in health else "fail")
    run.case("TxRxTest %scenario=paired %span=one", ("node01", "node02"),
             {"stream_gbps": fig(0.19), "stream_node02_to_node01_gbps": fig(0.19)},
             carrier={})
    bad = slow < 0.19 * 0.95
    run.case("TxRxTest %scenario=paired %span=many", NODES,
             {"stream_gbps": fig(min(slow, 0.19)), "stream_node03_to_node01_gbps": fig(slow),
              "stream_node04_to_node02_gbps": fig(0.19)},
             result="fail" if bad else "pass", carrier={},
             fail_reason="performance: stream_node03_to_node01_gbps 15% below" if bad else None)
    run.case("TxRxTest %scenario=paired %span=one %pair=b", ("node03", "node04"),
             {"stream_gbps": fig(slow), "stream_node03_to_node04_gbps": fig(slow)},
             result="fail" if bad else "pass", carrier={"node01": (4, 4)},
             fail_reason="performance: node03" if bad else None)
    run.case("BisectionTest", NODES, {"node_bw": fig(21.5, 22.5, -0.1, "MB/s")},
             carrier={"node01": (6, 6) if flap else (4, 4)})
    return run


def accept(env, *argv) -> tuple[int, str, str, dict]:
    out = env / "page"
    rc, stdout, stderr = fabric_report("acceptance", *argv, "--reference-dir", env / "ref",
                                       "-o", out)
    twin = json.loads((out / "acceptance.json").read_text()) if rc in (0, 1) else {}
    return rc, stdout, stderr, twin


def test_a_healthy_run_is_accepted(env):
    rep = healthy(Run(env)).write()
    rc, out, err, twin = accept(env, "--report", rep, "--topology", env / "topo.txt")
    assert rc == 0, out + err
    assert out.startswith("ACCEPTED: stage 1 4 nodes, 8 checks: every check passed")
    assert twin["verdict"] == "ACCEPTED" and twin["elements"] == []
    assert [s["status"] for s in twin["stages"]] == ["pass", "pass", "pass"]
    sets = {s["set"]: s["figures"] for s in twin["stages"][1]["sets"]}
    assert sets == {"edge": 4, "global": 3, "bisection": 1}, sets
    assert twin["provenance"]["suite_commit"] == ["abc123"]
    page = (env / "page" / "index.html").read_text()
    assert '<div class="word">ACCEPTED</div>' in page and "@media print" in page
    assert "<script" not in page and "http://" not in page and "https://" not in page


def test_a_slow_node_and_a_flap_between_tests_name_both_at_the_top(env):
    rep = healthy(Run(env), slow=0.161, flap=True).write()
    rc, out, _, twin = accept(env, "--report", rep, "--topology", env / "topo.txt")
    assert rc == 1
    head = out.splitlines()[0]
    assert head.startswith("NOT ACCEPTED: failed: "), head
    # node03 is also in the passing bisection: named, as attribute does, a weak suspect
    assert "node03 (stage 2 (performance), a weak suspect)" in head, head
    assert "link node01 eth0 (stage 3 (counters and flaps))" in head, head
    named = {(e["kind"], e["name"]): e["stages"] for e in twin["elements"]}
    assert named[("node", "node03")] == [2] and named[("link", "node01 eth0")] == [3]
    assert not any(k == "node" and n == "node01" for k, n in named), named
    stage3 = twin["stages"][2]
    assert any("during no test (between" in f["evidence"] for f in stage3["findings"])


def test_a_failed_preflight_check_names_its_node_with_found_and_expected(env):
    bad = HEALTHY_LINES.replace("HEALTH node04 hsn0/- mac: PASS found 02:00:00:00:00:04",
                                "HEALTH node04 hsn0/- mac: FAIL found 02:00:00:00:00:7c")
    rep = healthy(Run(env), health=bad).write()
    rc, out, _, twin = accept(env, "--report", rep)
    assert rc == 1
    assert "failed: node04 (stage 1 (pre-flight health))" in out.splitlines()[0]
    row = next(r for r in twin["stages"][0]["rows"] if not r["ok"])
    assert (row["node"], row["check"], row["found"], row["expected"]) == (
        "node04", "mac", "02:00:00:00:00:7c", "02:00:00:00:00:04")


def test_a_stage_with_nothing_to_judge_is_never_accepted(env):
    run = Run(env)
    run.case("TxRxTest %scenario=paired %span=one", ("node01", "node02"),
             {"stream_gbps": fig(0.19)}, carrier={})
    rc, out, _, twin = accept(env, "--report", run.write())
    assert rc == 1
    assert "stage 1 (pre-flight health) unjudged: no pre-flight result" in out
    assert twin["stages"][0]["status"] == "unjudged"


def test_nothing_to_judge_at_all_exits_2(env):
    run = Run(env)
    run.case("FabricBinaries ~vcluster:nodes+openmpi", (), {})
    rc, _, err, _ = accept(env, "--report", run.write())
    assert rc == 2 and err.startswith("fabric-report: nothing to judge: stage 1"), err


def test_performance_nodes_without_a_preflight_result_leave_stage1_incomplete(env):
    run = healthy(Run(env), health=HEALTHY_LINES.split("HEALTH node03")[0])
    rc, out, _, twin = accept(env, "--report", run.write())
    assert rc == 1
    gaps = " ".join(twin["stages"][0]["gaps"])
    assert "2 of 4 nodes reported" in gaps and "no pre-flight result for node03, node04" in gaps


def test_a_short_node_list_from_reframe_does_not_make_stage1_incomplete(env):
    """A real vcluster recording: ReFrame's report gave the 4-node health job's node list as
    ['node01'] (the scheduler's answer to its last poll); the 4 nodes that reported are what
    its 4 tasks (one per node) asked for."""
    run = healthy(Run(env))
    health = next(tc for tc in run.cases if tc["name"].startswith("NicHealthTest"))
    health["job_nodelist"] = ["node01"]
    rc, out, _, twin = accept(env, "--report", run.write())
    assert twin["stages"][0]["status"] == "pass", twin["stages"][0]
    assert rc == 0 and "ACCEPTED" in out


def test_health_from_fabric_health_json(env):
    run = Run(env)
    run.case("TxRxTest %scenario=paired %span=one", ("node01", "node02"),
             {"stream_gbps": fig(0.19)}, carrier={})
    docs = "".join(json.dumps({"node": n, "source": "netdevs", "checks": 1, "failed": 0,
                               "results": [{"node": n, "device": "hsn0", "port": "-",
                                            "check": "ip", "status": "PASS",
                                            "detail": "found 10.0.0.1/24, expected x"}]})
                   for n in ("node01", "node02"))
    (env / "h.json").write_text(docs)
    rc, out, err, twin = accept(env, "--report", run.write(), "--health", env / "h.json")
    assert rc == 0, out + err
    st = twin["stages"][0]  # passing rows are counted, not listed (report/acceptance/twin.py)
    assert (st["rows"], st["passed"], st["rows_total"]) == ([], {"ip": 2}, {"rows": 2})


@pytest.mark.parametrize("detail,found,expected", [
    ("found 02:00:00:00:03:7c, expected 02:00:00:00:03:1b (Slingshot AMA of sw1 port p2)",
     "02:00:00:00:03:7c", "02:00:00:00:03:1b (Slingshot AMA of sw1 port p2)"),
    ("Ethernet (expected InfiniBand)", "Ethernet", "InfiniBand"),
    ("4096 >= 1024", "4096", ">= 1024"),
    ("100 Gb/s (4X 25) < 200 Gb/s", "100 Gb/s (4X 25)", ">= 200 Gb/s"),
    ("node04-hsn0 -> 10.200.1.254, expected 10.200.1.14", "node04-hsn0 -> 10.200.1.254",
     "10.200.1.14"),
    ("PORT_ACTIVE", "PORT_ACTIVE", ""),
])
def test_found_and_expected_from_the_checks_details(detail, found, expected):
    assert found_expected(detail) == (found, expected)


def test_node_sets_from_scope_and_topology():
    topo = parse_topology_file("sw1: n[1-2] parent=g1\nsw2: n[3-4] parent=g1\n"
                               "sw3: n[5-6] parent=g2\ng1: parent=top\ng2: parent=top\n")
    assert set_of("OsuMbwMrTest", {"scope": "group"}, ["n1"], None) == "local"
    assert set_of("TxRxTest", {}, ["n1", "n2"], topo) == "edge"
    assert set_of("TxRxTest", {}, ["n1", "n3"], topo) == "local"
    assert set_of("TxRxTest", {}, ["n1", "n5"], topo) == "global"
    assert set_of("TxRxTest", {}, ["n1", "n5"], None) == "between nodes"
    assert set_of("TxRxTest", {}, ["n1"], topo) == "within a node"
    assert set_of("BisectionTest", {}, ["n1", "n5"], topo) == "bisection"


def test_the_verdict_rule():
    ok = [acc.Stage(i, acc.PASS, "fine") for i in (1, 2, 3)]
    assert acc.judge(ok).accepted
    with pytest.raises(acc.NothingToJudge):
        acc.judge([acc.Stage(i, acc.UNJUDGED, "nothing") for i in (1, 2, 3)])
    f = acc.Finding(2, "uplink", "sw1<->top", "every failed case crosses it", weak=True)
    v = acc.judge([ok[0], acc.Stage(2, acc.FAIL, "x", [f]),
                   acc.Stage(3, acc.INCOMPLETE, "y", gaps=["node02: unread"])])
    assert not v.accepted and v.status == 1
    assert v.headline == ("NOT ACCEPTED: failed: uplink sw1<->top (stage 2 (performance), a "
                          "weak suspect); stage 3 (counters and flaps) incomplete: node02: unread")


def _tc(name, nodes, result):
    return {"name": name, "display_name": name, "system": "vc", "partition": "p",
            "environ": "e", "result": result, "job_nodelist": list(nodes), "perfvalues": {},
            "fail_reason": "performance: below its reference" if result == "fail" else None}


def test_a_sweeps_measurement_beats_which_cases_failed_together():
    """node04 is in 2 of the 3 failures and in no passing case, node03 in all 3 and in one
    passing case: attribute names node04. The sweep measured node04 healthy both ways and
    named node03: node03 is named, node04 is not."""
    from fabrictest.report.acceptance.stage2 import stage2

    cases = [_tc("Bisection", NODES, "fail"), _tc("Congestion", NODES, "fail"),
             _tc("PairsOfThree", NODES[:3], "pass"), _tc("PairedOne", NODES[:2], "pass"),
             _tc("PairedMany", ("node01", "node03"), "fail")]
    sweep = {"healthy": False, "nodes": list(NODES),
             "suspects": [{"node": "node03", "line": "suspect: node03 16% below"}],
             "nodes_table": [{"node": n, "status": "below reference" if n == "node03"
                              else "ok"} for n in NODES], "verdict": ["suspect: node03"]}
    without = stage2([], cases, None, [])
    assert "node04" in {f.name for f in without.findings}
    st = stage2([], cases, None, [("s.json", sweep)])
    assert {f.name for f in st.findings} == {"node03"}, st.findings
    assert any("not named: node04" in x for x in st.data["attribution"])


def test_an_uplink_the_sweep_names_is_an_uplink_not_a_node():
    """The sweep lists a slow uplink among its suspects (`node`: its label, kind `uplink`)
    and in `uplinks`: the page names the uplink once, with the sweep's line, names no node
    `uplink sw2<->top` and drains none (16-node vcluster, sw2's uplink at 100mbit, 2026-12-02:
    the headline named it twice, once as a node)."""
    from fabrictest.report.acceptance.stage2 import stage2

    line = ("suspect: uplink sw2<->top: 12/12 crossing runs at 0.34 of the cluster level; "
            "runs inside sw2 healthy")
    sweep = {"healthy": False, "nodes": list(NODES),
             "suspects": [{"node": "uplink sw2<->top", "kind": "uplink", "line": line}],
             "uplinks": [{"name": "sw2<->top", "label": "uplink sw2<->top", "suspect": True,
                          "slow": 12, "crossing": 12}],
             "nodes_table": [{"node": n, "status": "ok"} for n in NODES], "verdict": [line]}
    st = stage2([], [_tc("PairedOne", NODES[:2], "pass")], None, [("s.json", sweep)])
    assert [(f.kind, f.name) for f in st.findings] == [("uplink", "sw2<->top")]
    assert st.findings[0].evidence == f"the sweep: {line}"
    (shown,) = st.data["sweeps"]
    assert shown["drain"] == [] and shown["suspects"] == [line]


def test_global_failures_that_no_node_explains_name_their_group_pair():
    from fabrictest.report.acceptance.stage2 import stage2

    topo = parse_topology_file("sw1: n[1-2] parent=g1\nsw2: n[3-4] parent=g2\n"
                               "g1: parent=top\ng2: parent=top\n")
    cases = [_tc("A", ("n1", "n3"), "fail"), _tc("B", ("n2", "n4"), "fail"),
             _tc("C", ("n1", "n2"), "pass"), _tc("D", ("n3", "n4"), "pass")]
    st = stage2([], cases, topo, [])
    kinds = {(f.kind, f.name) for f in st.findings}
    assert ("group pair", "g1<->g2") in kinds and not any(k == "node" for k, _ in kinds)

"""`fabric-report acceptance` fails closed (issue 40, items 1-3): it judges every figure against
the band recorded with the run and refuses ReFrame's word where the two disagree; it refuses
impossible references; it calls incomplete, never accepted, a stage whose evidence is not
whole; and it calls "not judged", never failed, a case that failed only for a missing
reference."""

from __future__ import annotations

import json
from pathlib import Path

from report.test_acceptance import HEALTHY_LINES, NODES, Run, accept, env, fig, healthy

__all__ = ["env"]  # the fixture, used by name


def _case(run: Run, prefix: str) -> dict:
    return next(tc for tc in run.cases if tc["name"].startswith(prefix))


def _pv(tc: dict, figure: str) -> list:
    return tc["perfvalues"][f"vcluster:nodes:{figure}"]


def test_a_figure_at_half_its_reference_that_reframe_passed_is_not_accepted(env):
    run = healthy(Run(env))
    pv = _pv(_case(run, "TxRxTest %scenario=paired %span=one"), "stream_gbps")
    pv[0], pv[5] = 0.095, "pass"  # half the reference; ReFrame's result left at pass
    rc, out, _, twin = accept(env, "--report", run.write(), "--topology", env / "topo.txt")
    head = out.splitlines()[0]
    assert rc == 1, out
    assert head.startswith("NOT ACCEPTED: failed: TxRxTest %scenario=paired %span=one "
                           "stream_gbps (stage 2"), head
    assert twin["stages"][1]["status"] == "fail"
    ev = " ".join(e for el in twin["elements"] for e in el["evidence"])
    assert "outside its recorded band" in ev and "disagree" in ev, ev


def test_a_figure_inside_its_band_that_reframe_failed_is_not_accepted(env):
    run = healthy(Run(env))
    _pv(_case(run, "BisectionTest"), "node_bw")[5] = "fail"
    rc, out, _, _ = accept(env, "--report", run.write())
    assert rc == 1 and "failed: BisectionTest node_bw (stage 2" in out.splitlines()[0], out


def test_impossible_recorded_references_are_refused(env):
    for ref, lower, upper, why in ((-0.19, -0.05, None, "negative"),
                                   (0.19, 0.1, -0.1, "inverted"),
                                   (0.19, -0.05, float("inf"), "not a finite number")):
        run = healthy(Run(env / why.split()[0]))
        (env / why.split()[0] / "ref").symlink_to(env / "ref")
        pv = _pv(_case(run, "BisectionTest"), "node_bw")
        pv[1:4] = [ref, lower, upper]
        rc, _, err, _ = accept(env / why.split()[0], "--report", run.write())
        assert rc == 2, (why, err)
        assert err.count("\n") == 1 and why in err and "BisectionTest node_bw" in err, err


NO_REF = ("performance error: no reference for node_bw: BisectionTest has no reference for "
          "$system=vcluster, num_nodes=8 in reference/vcluster.yaml (missing key 'num_nodes') "
          "(use -S missing_reference=warn to only warn)")


def test_a_case_failed_only_for_a_missing_reference_is_not_judged_never_failed(env):
    run = healthy(Run(env))
    bis = _case(run, "BisectionTest")
    bis.update(result="fail", fail_phase="performance", fail_reason=NO_REF)
    bis["perfvalues"] = {"vcluster:nodes:node_bw": [21.5, None, None, None, "MB/s", "pass"]}
    rc, out, _, twin = accept(env, "--report", run.write(), "--topology", env / "topo.txt")
    head = out.splitlines()[0]
    assert rc == 1, out
    assert "failed:" not in head and "stage 2 (performance) incomplete" in head, head
    st = twin["stages"][1]
    assert st["status"] == "incomplete" and st["failed_cases"] == [], st
    assert any("not judged (failed only for a missing reference): BisectionTest" in g
               for g in st["gaps"]), st["gaps"]


def test_a_missing_reference_is_no_evidence_against_a_slow_nodes_neighbour(env):
    """node03 slow in two cases; the 4-node bisection failed only for a missing reference:
    node03 is named by the two cases it is in, the bisection counts for nothing."""
    run = healthy(Run(env), slow=0.161)
    bis = _case(run, "BisectionTest")
    bis.update(result="fail", fail_phase="performance", fail_reason=NO_REF)
    bis["perfvalues"] = {"vcluster:nodes:node_bw": [21.5, None, None, None, "MB/s", "pass"]}
    rc, out, _, twin = accept(env, "--report", run.write(), "--topology", env / "topo.txt")
    assert rc == 1
    assert [c["test"].split(" on ")[0] for c in twin["stages"][1]["failed_cases"]] == [
        "TxRxTest %scenario=paired %span=many", "TxRxTest %scenario=paired %span=one %pair=b"]
    assert not any("BisectionTest" in e for el in twin["elements"] for e in el["evidence"])


def test_every_case_skipped_is_never_accepted(env):
    run = healthy(Run(env))
    for tc in run.cases[1:]:
        tc.update(result="skip", perfvalues={})
    rc, out, _, twin = accept(env, "--report", run.write())
    assert rc == 1, out
    st = twin["stages"][1]
    assert st["status"] != "pass" and any("4 test cases ran nothing to judge" in g
                                          for g in st["gaps"]), st


def test_a_case_with_no_figures_and_a_null_figure_are_gaps(env):
    run = healthy(Run(env))
    _case(run, "BisectionTest")["perfvalues"] = {}
    pv = _pv(_case(run, "TxRxTest %scenario=paired %span=one"),
             "stream_node02_to_node01_gbps")
    pv[0] = None
    rc, out, _, twin = accept(env, "--report", run.write())
    assert rc == 1, out
    gaps = " | ".join(twin["stages"][1]["gaps"])
    assert "1 test case gave no figure: BisectionTest" in gaps, gaps
    assert "1 figure has no value (null): TxRxTest %scenario=paired %span=one " \
           "stream_node02_to_node01_gbps" in gaps, gaps
    assert twin["stages"][1]["status"] == "incomplete"


def test_figures_whose_bands_judge_nothing_are_not_counted_as_within(env):
    run = Run(env)
    run.case("NicHealthTest", NODES, {}, stdout=HEALTHY_LINES, tags=["preflight"])
    run.case("CongestionTest %aggressors=incast", NODES,
             {"lat_impact": (7.7, "x", 1.0, None, 99.0, "pass"),
              "lat_isolated_us": (9.0, "us", 50.0, None, 199.0, "pass")}, carrier={})
    rc, out, _, twin = accept(env, "--report", run.write())
    st = twin["stages"][1]
    assert rc == 1 and st["status"] == "unjudged", st
    assert "within their band" not in st["summary"] and "not judged" in st["summary"], st
    # beside a judged figure they are named apart
    run = healthy(Run(env / "b"))
    (env / "b" / "ref").symlink_to(env / "ref")
    run.case("CongestionTest %aggressors=incast", NODES,
             {"lat_impact": (7.7, "x", 1.0, None, 99.0, "pass")}, carrier={})
    rc, out, _, twin = accept(env / "b", "--report", run.write())
    assert rc == 0, out
    assert "8 figures against their references" in out and \
        "1 figure with bands that judge nothing (not judged)" in out, out


def test_a_node_missing_checks_the_others_ran_leaves_stage1_incomplete(env):
    summary = "HEALTH summary: 2 checks, 0 failed\n"
    blocks = HEALTHY_LINES.split(summary)  # one per node, in NODES' order
    blocks[1] = blocks[1].splitlines(keepends=True)[0] + summary.replace("2 checks", "1 checks")
    lines = summary.join(blocks[:1]) + summary + blocks[1] + summary.join(blocks[2:])
    assert lines.count("ip: PASS") == 3
    rc, out, _, twin = accept(env, "--report", healthy(Run(env), health=lines).write())
    st = twin["stages"][0]
    assert rc == 1 and st["status"] == "incomplete", st
    assert any("node02: 1 pre-flight checks where the nodes ran 2; no ip" in g
               for g in st["gaps"]), st["gaps"]


def test_health_lines_without_their_summary_leave_stage1_incomplete(env):
    run = Run(env)
    run.case("TxRxTest %scenario=paired %span=one", ("node01", "node02"),
             {"stream_gbps": fig(0.19)}, carrier={})
    cut = env / "health.txt"
    cut.write_text(HEALTHY_LINES.split("HEALTH summary")[0])  # node01's checks, no summary
    rc, out, _, twin = accept(env, "--report", run.write(), "--health", cut)
    st = twin["stages"][0]
    assert rc == 1 and st["status"] == "incomplete", st
    assert any("'HEALTH summary' lines" in g for g in st["gaps"]), st["gaps"]


def test_a_node_without_counter_snapshots_leaves_stage3_incomplete(env):
    run = healthy(Run(env))
    bis = _case(run, "BisectionTest")
    (Path(bis["outputdir"]) / "counters" / "after" / "node04.json").unlink()
    rc, out, _, twin = accept(env, "--report", run.write())
    st = twin["stages"][2]
    assert rc == 1 and st["status"] == "incomplete", st
    assert any("BisectionTest" in g and "no counter snapshots before and after it of node04"
               in g for g in st["gaps"]), st["gaps"]


def test_the_twin_lists_the_failing_figures_and_counts_the_passing(env):
    rc, _, _, twin = accept(env, "--report", healthy(Run(env)).write())
    st = twin["stages"][1]
    assert rc == 0 and st["figures"] == [], json.dumps(st["figures"])[:300]
    assert st["passed"] == {"BisectionTest": 1, "TxRxTest %scenario=paired %span=many": 3,
                            "TxRxTest %scenario=paired %span=one": 2,
                            "TxRxTest %scenario=paired %span=one %pair=b": 2}
    assert st["rows_total"] == {"figures": 8}
    (env / "slow").mkdir()
    (env / "slow" / "ref").symlink_to(env / "ref")
    rc, _, _, twin = accept(env / "slow", "--report", healthy(Run(env / "slow"), 0.15).write())
    st = twin["stages"][1]
    assert rc == 1 and st["rows_total"] == {"figures": 8}
    listed = {(r["test"], r["figure"]): (r["judges"], r["failing"]) for r in st["figures"]}
    assert listed == {("TxRxTest %scenario=paired %span=many", "stream_gbps"): (True, True),
                      ("TxRxTest %scenario=paired %span=many", "stream_node03_to_node01_gbps"):
                          (True, True),
                      ("TxRxTest %scenario=paired %span=one %pair=b", "stream_gbps"): (True, True),
                      ("TxRxTest %scenario=paired %span=one %pair=b",
                       "stream_node03_to_node04_gbps"): (True, True)}, listed
    assert sum(st["passed"].values()) == 8 - len(listed)


def test_provenance_shows_the_references_the_run_used(env):
    run = healthy(Run(env))
    for tc in run.cases:
        tc["reference_sha256"] = "ab" * 32
    rc, _, _, _ = accept(env, "--report", run.write())
    assert rc == 0
    page = (env / "page" / "index.html").read_text()
    assert "References the run was judged with on vcluster: sha256 abababababababab..." in page
    assert "judged against the bounds recorded with it in the run report" in page


def test_a_node_set_the_topology_plans_without_figures_leaves_stage2_incomplete(env):
    """sw1 and sw2 under top: the run's nodes make an edge and a global set. A run whose
    only figures are global (no test on one switch) has not measured the edge set."""
    run = Run(env)
    run.case("NicHealthTest", NODES, {}, stdout=HEALTHY_LINES, tags=["preflight"])
    run.case("TxRxTest %scenario=paired %span=many", NODES,
             {"stream_gbps": fig(0.19)}, carrier={})
    topo = ("--topology", env / "topo.txt")
    rc, out, _, twin = accept(env, "--report", run.write(), *topo)
    st = twin["stages"][1]
    assert rc == 1 and st["status"] == "incomplete", st
    assert "no figures for the edge node set (switch sw1 holds 2 of the run's nodes)" in \
        st["gaps"], st["gaps"]
    (env / "h").mkdir()
    (env / "h" / "ref").symlink_to(env / "ref")
    rc, out, _, _ = accept(env / "h", "--report", healthy(Run(env / "h")).write(), *topo)
    assert rc == 0, out  # edge and global measured


def test_which_failures_are_a_missing_reference_only():
    from fabrictest.report.acceptance.evidence import failed_for_no_reference as only

    def tc(why, phase="performance"):
        return {"result": "fail", "fail_phase": phase, "fail_reason": why}

    measured = ("performance error: no reference for num_nodes=8: vcluster.yaml holds "
                "BisectionTest figures on vcluster measured with num_nodes=4 (figures "
                "node_bw, min_node_bw) (use -S missing_reference=warn to only warn)")
    assert only(tc(measured)) and only(tc(NO_REF))
    assert not only(tc("performance error: failed to meet reference: node_bw=10.1, expected "
                       "22.5 (l=-0.1, u=inf)"))
    assert not only(tc(measured, phase="sanity"))
    assert not only({**tc(measured), "result": "pass"})

"""`fabric-report acceptance` pools only evidence that belongs together (issue 40, item 4):
one system, one node set, one suite commit and references file, stage 1 within a stated time
before stage 2 (default a day), never after; anything else is refused in one line naming the
source (exit 2) unless `--allow-mixed RULE` / `--stage1-window HOURS` says otherwise. A
stage-1 record that says a node failed is a stage-1 failure."""

from __future__ import annotations

import json
from pathlib import Path

from report.test_acceptance import Run, accept, env, healthy

__all__ = ["env"]  # the fixture, used by name

DAY = 86400.0


def _split(run: Run, edit_health=None, edit_perf=None) -> tuple[Path, Path]:
    """The health case in one report, the performance cases in another (as the suite's
    acceptance runs them: one session per stage)."""
    cases = run.cases
    health, perf = cases[:1], cases[1:]
    for tc in health:
        (edit_health or (lambda _tc: None))(tc)
    for tc in perf:
        (edit_perf or (lambda _tc: None))(tc)
    run.cases = health
    a = run.write("stage1.json.report")
    run.cases = perf
    b = run.write("stage2.json.report")
    run.cases = cases
    return a, b


def test_a_report_of_another_system_is_refused_naming_it(env):
    a, b = _split(healthy(Run(env)), edit_health=lambda tc: tc.update(system="other"))
    rc, _, err, _ = accept(env, "--report", a, "--report", b)
    assert rc == 2 and err.count("\n") == 1, err
    assert "stage1.json.report: of system other" in err and "another system" in err, err
    rc, _, err, _ = accept(env, "--report", a, "--report", b, "--allow-mixed", "systems")
    assert rc in (0, 1), err


def test_preflight_a_month_before_or_a_day_after_is_refused(env):
    a, b = _split(healthy(Run(env)), edit_health=lambda tc: tc.update(
        job_completion_time_unix=tc["job_completion_time_unix"] - 30 * DAY))
    rc, _, err, _ = accept(env, "--report", a, "--report", b)
    assert rc == 2 and "stale pre-flight evidence" in err and "30.0 days before" in err, err
    assert "stage1.json.report: NicHealthTest" in err, err
    rc, out, err, _ = accept(env, "--report", a, "--report", b, "--stage1-window", str(31 * 24))
    assert rc == 0, out + err
    a, b = _split(healthy(Run(env / "later")), edit_health=lambda tc: tc.update(
        job_completion_time_unix=tc["job_completion_time_unix"] + DAY))
    (env / "later" / "ref").symlink_to(env / "ref")
    rc, _, err, _ = accept(env / "later", "--report", a, "--report", b)
    assert rc == 2 and "after the performance stage began" in err, err


def test_a_bad_window_is_refused(env):
    rep = healthy(Run(env)).write()
    rc, _, err, _ = accept(env, "--report", rep, "--stage1-window", "-3")
    assert rc == 2 and "not a positive number of hours" in err, err


def test_other_commits_or_references_are_refused_unless_allowed(env):
    for key, rule in (("suite_commit", "commits"), ("reference_sha256", "references")):
        root = env / rule
        run = healthy(Run(root))
        (root / "ref").symlink_to(env / "ref")
        for tc in run.cases:
            tc[key] = "fedcba9876543210f"
        run.cases[-1][key] = "0123456789abcdef0"
        rep = run.write()
        rc, _, err, _ = accept(root, "--report", rep)
        assert rc == 2 and f"--allow-mixed {rule}" in err and "0123456789abcdef" in err, err
        rc, out, err, _ = accept(root, "--report", rep, "--allow-mixed", rule)
        assert rc == 0, out + err


def test_a_sweep_of_other_nodes_is_refused(env):
    rep = healthy(Run(env)).write()
    sweep = env / "sweep.json"
    sweep.write_text(json.dumps({"kind": "fabrictest-sweep", "nodes": ["node07", "node08"],
                                 "pairs": [], "verdict": ["healthy"], "level": {},
                                 "nodes_table": [], "unit": "Gbps", "rounds_used": 1,
                                 "healthy": True}))
    rc, _, err, _ = accept(env, "--report", rep, "--sweep", sweep)
    assert rc == 2 and "measured node07, node08" in err and "other nodes" in err, err


def test_a_stage1_record_saying_a_node_failed_is_a_failure(env):
    run = healthy(Run(env))
    health = run.cases[0]
    record = Path(health["outputdir"]).parents[1] / "stage1.json"
    record.write_text(json.dumps({"format": "fabrictest-stage1/1", "test": "NicHealthTest",
                                  "time": health["job_completion_time_unix"],
                                  "system": "vcluster", "partition": "nodes",
                                  "nodes": {"node01": "pass", "node04": "fail"}}))
    rc, out, _, twin = accept(env, "--report", run.write())
    assert rc == 1, out
    assert "failed: node04 (stage 1 (pre-flight health))" in out.splitlines()[0], out
    assert twin["stages"][0]["status"] == "fail"

"""`fabric-plan`'s bad input: one line on stderr, exit 2, before any dry run starts; `--json`
never writes over a file it did not write."""

from __future__ import annotations

import json

import pytest

from fabrictest.plan import cli
from fabrictest.plan.output import FORMAT, json_target_problem


@pytest.fixture
def no_dry_run(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("the dry run started for bad input")

    monkeypatch.setattr(cli, "dry_run", refuse)


@pytest.mark.parametrize("argv, says", [
    ([], "--system"),
    (["--system", "atlantis"], "--system atlantis: no such system (one of"),
    (["--system", "_x"], "no such system"),
    (["--system", "slingshot", "--generate", "torus:x=1"], "the kind is one of"),
    (["--system", "slingshot", "--topology", "/nonexistent/topology.conf"],
     "--topology /nonexistent/topology.conf: No such file"),
    (["--system", "slingshot", "--topology", "a", "--generate", "b"], "not allowed with"),
    (["--system", "slingshot", "--pair-seconds", "0"], "--pair-seconds 0"),
    (["--system", "slingshot", "--pair-seconds", "nan"], "--pair-seconds"),
    (["--system", "slingshot", "--from-run", "/nonexistent.json"],
     "--from-run /nonexistent.json: not a ReFrame run report"),
])
def test_bad_input_is_one_line_and_exit_2(argv, says, capsys, no_dry_run):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err


def test_a_topology_that_cannot_be_parsed(tmp_path, capsys, no_dry_run):
    bad = tmp_path / "t.conf"
    bad.write_text("SwitchName=s1 Nodes=n[1-\n")
    assert cli.main(["--system", "slingshot", "--topology", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"--topology {bad}" in err and err.count("\n") == 1


def test_a_topology_of_one_node(tmp_path, capsys, no_dry_run):
    one = tmp_path / "t.conf"
    one.write_text("SwitchName=s1 Nodes=n1\n")
    assert cli.main(["--system", "slingshot", "--topology", str(one)]) == 2
    assert "1 node(s), a plan needs 2" in capsys.readouterr().err


def test_json_never_replaces_a_file_it_did_not_write(tmp_path, capsys, no_dry_run):
    theirs = tmp_path / "notes.json"
    theirs.write_text('{"mine": 1}\n')
    assert cli.main(["--system", "slingshot", "--json", str(theirs)]) == 2
    assert "is not a plan fabric-plan wrote: not replaced" in capsys.readouterr().err
    assert theirs.read_text() == '{"mine": 1}\n'
    text = tmp_path / "t.txt"
    text.write_text("not json")
    assert json_target_problem(str(text))
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    assert "symbolic link" in json_target_problem(str(link))
    assert json_target_problem(str(tmp_path / "dir")) is None  # a new file
    assert cli.main(["--system", "slingshot", "--json", str(tmp_path / "no" / "p.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_plan_it_wrote_may_be_replaced(tmp_path):
    ours = tmp_path / "plan.json"
    ours.write_text(json.dumps({"format": FORMAT, "jobs": []}))
    assert json_target_problem(str(ours)) is None


def test_measured_times_come_from_passed_cases_of_the_system(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"runs": [{"testcases": [
        {"display_name": "A", "system": "vc:nodes", "result": "pass", "time_run": 12.5},
        {"display_name": "B", "system": "vc:nodes", "result": "fail", "time_run": 3.0},
        {"display_name": "C", "system": "other:p", "result": "pass", "time_run": 4.0},
        {"display_name": "D", "system": "vc", "result": "pass", "time_run": float("nan")},
        {"display_name": "E", "system": "vc", "result": "pass", "time_run": None},
    ]}]}))
    assert cli._measured([str(report)], "vc") == {"A": 12.5}


def _fake_dry_run(cases):
    from fabrictest.plan.dry_run import DryRun

    def run(_system, _work, _topology, nodes, _repo):
        return DryRun(cases=cases, partitions=[{"name": "p", "max_jobs": 8,
                                                "num_nodes": len(nodes or [])}], seconds=1.0)
    return run


def test_a_node_list_past_the_hostlist_bound_is_one_line_exit_1(monkeypatch, capsys, tmp_path):
    from fabrictest.plan.dry_run import Case

    huge = Case(name="BisectionTest", family="BisectionTest", tags=[], partition="p",
                time_limit_s=1200.0, num_tasks=2, tasks_per_node=1,
                sbatch={"nodes": "100800", "nodelist": "nid[000001-100800]", "time": "20"})
    monkeypatch.setattr(cli, "dry_run", _fake_dry_run([huge]))
    assert cli.main(["--system", "slingshot", "--generate",
                     "dragonfly:groups=2,switches=2,nodes=2"]) == 1
    err = capsys.readouterr().err
    assert "more than 100000 names" in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_plan_end_to_end_over_a_stand_in_dry_run(monkeypatch, capsys, tmp_path):
    from fabrictest.plan.dry_run import Case

    def c(name, nodes, nodelist=None, tags=()):
        sbatch = {"nodes": str(nodes), "time": "0:10:0"}
        if nodelist:
            sbatch["nodelist"] = nodelist
        return Case(name=name, family=name.split()[0], tags=list(tags), partition="p",
                    time_limit_s=600.0, num_tasks=nodes, tasks_per_node=1, sbatch=sbatch,
                    counter_snapshots=2)

    cases = [c("OsuMbwMrTest %scope=global", 4, "nid[00001-00002,00005-00006]"),
             c("NicHealthTest", 8, tags=("preflight",)),
             c("OsuMbwMrTest %scope=switch", 2, "nid[00001-00002]")]
    monkeypatch.setattr(cli, "dry_run", _fake_dry_run(cases))
    out = tmp_path / "plan.json"
    assert cli.main(["--system", "slingshot", "--generate",
                     "dragonfly:groups=2,switches=2,nodes=2", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    plan = json.loads(out.read_text())
    assert [j["step"] for j in plan["jobs"]] == ["preflight", "edge", "global"]
    assert [j["start_s"] for j in plan["jobs"]] == [0, 600, 1200]
    assert plan["total"]["wall_s"] == 1800 and plan["nodes"] == 8
    assert plan["total"]["node_hours"] == (8 + 2 + 4) * 600 / 3600
    assert "wall time 30 min against the goal of 2h00 (fits)" in printed
    # run again: the plan it wrote may be replaced
    assert cli.main(["--system", "slingshot", "--generate",
                     "dragonfly:groups=2,switches=2,nodes=2", "--json", str(out)]) == 0

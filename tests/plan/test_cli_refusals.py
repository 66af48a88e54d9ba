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

"""`fabric-report` as a gate, black-box: it cannot pass on nothing, and it refuses what makes
no sense before any work, in one line with exit 2 (never a traceback).

The inputs are the real run reports and perflogs of the `stored` sessions, and files derived
from them (emptied, cut, renamed) the way a broken run or a wrong path would leave them.
"""

from __future__ import annotations

import copy
import json

import pytest
from _rfm_sessions import fabric_report


def _error(rc_out_err) -> str:
    """The one line of a refusal: exit 2, nothing on stdout, one line on stderr."""
    rc, out, err = rc_out_err
    assert rc == 2, (rc, out, err)
    assert "Traceback" not in out + err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def inputs(stored, tmp_path_factory):
    tmp, _env, _uuids = stored
    d = tmp_path_factory.mktemp("gates")
    pre = json.loads((tmp / "pre-upgrade.json").read_text())
    (d / "empty").mkdir()
    (d / "empty.log").write_text("")
    (d / "garbage.log").write_text("this is not a perflog\n\x00\x01 nor this\n")
    perflog = next((tmp / "perflogs").rglob("*.log"))
    header = perflog.read_text().splitlines()[0]
    (d / "header-only.log").write_text(header + "\n")
    lines = perflog.read_text().splitlines()
    (d / "half-garbage.log").write_text(
        "\n".join([lines[0], "garbage|line", *lines[1:], "more garbage"]) + "\n")
    no_cases = copy.deepcopy(pre)
    for run in no_cases["runs"]:
        run["testcases"] = []
    (d / "no-cases.json").write_text(json.dumps(no_cases))
    renamed = copy.deepcopy(pre)
    for run in renamed["runs"]:
        for tc in run["testcases"]:
            tc["perfvalues"] = {f"{k}_other": v for k, v in tc["perfvalues"].items()}
    (d / "renamed.json").write_text(json.dumps(renamed))
    no_refs = copy.deepcopy(pre)
    for run in no_refs["runs"]:
        for tc in run["testcases"]:
            tc["perfvalues"] = {k: [v[0], None, None, None, *v[4:]]
                                for k, v in tc["perfvalues"].items()}
    (d / "no-refs.json").write_text(json.dumps(no_refs))
    one_test = copy.deepcopy(pre)
    for run in one_test["runs"]:
        run["testcases"] = [tc for tc in run["testcases"] if "same-node" in tc["display_name"]]
    (d / "one-test.json").write_text(json.dumps(one_test))
    (d / "not-json.json").write_text("{ not json")
    return {"pre": tmp / "pre-upgrade.json", "post": tmp / "post-upgrade.json",
            "perflogs": tmp / "perflogs", "d": d}


def test_two_empty_perflog_directories_cannot_pass(inputs):
    e = inputs["d"] / "empty"
    line = _error(fabric_report("compare", "--perflog", e, "--perflog", e))
    assert line == f"fabric-report: --perflog {e}: no perflog (*.log) under it"


def test_an_empty_perflog_file_cannot_pass(inputs):
    f = inputs["d"] / "empty.log"
    line = _error(fabric_report("compare", "--perflog", f, "--perflog", inputs["perflogs"]))
    assert line == f"fabric-report: --perflog {f}: no performance figures in it"


def test_a_garbage_perflog_cannot_pass(inputs):
    g = inputs["d"] / "garbage.log"
    line = _error(fabric_report("compare", "--perflog", g, "--perflog", g))
    assert line == f"fabric-report: --perflog {g}: no performance figures in it " \
                   "(2 unreadable entries)"


def test_a_base_against_an_empty_target_cannot_pass(inputs):
    h = inputs["d"] / "header-only.log"
    line = _error(fabric_report("compare", "--perflog", inputs["perflogs"], "--perflog", h))
    assert line == f"fabric-report: --perflog {h}: no performance figures in it"
    n = inputs["d"] / "no-cases.json"
    line = _error(fabric_report("compare", "--report", inputs["pre"], "--report", n))
    assert line == f"fabric-report: --report {n}: no performance figures in it"


def test_sources_without_a_figure_in_common_cannot_pass(inputs):
    line = _error(fabric_report("compare", "--report", inputs["pre"],
                                "--report", inputs["d"] / "renamed.json"))
    assert line == ("fabric-report: nothing to compare: no figure of the base (24 figures) "
                    "has a value in the target (24 figures)")


def test_missing_and_unreadable_sources_are_one_line(inputs, tmp_path):
    line = _error(fabric_report("compare", "--perflog", "/nonexistent", "--perflog",
                                inputs["perflogs"]))
    assert line == "fabric-report: --perflog /nonexistent: no such file or directory"
    line = _error(fabric_report("compare", "--report", inputs["pre"], "--report",
                                tmp_path / "nope.json"))
    assert line == f"fabric-report: --report {tmp_path / 'nope.json'}: " \
                   f"{tmp_path / 'nope.json'} is not a file"
    line = _error(fabric_report("compare", "--report", inputs["pre"], "--report",
                                inputs["d"] / "not-json.json"))
    assert line.startswith(f"fabric-report: {inputs['d'] / 'not-json.json'}: not a ReFrame JSON "
                           "run report")
    line = _error(fabric_report("compare", "--report", inputs["pre"], "--report",
                                str(tmp_path / "*.json")))
    assert line == f"fabric-report: --report {tmp_path / '*.json'}: no file matches"
    line = _error(fabric_report("compare", "--tag", "no-equals-sign", "--report", inputs["pre"]))
    assert line.startswith("fabric-report: bad tag 'no-equals-sign'")


@pytest.mark.parametrize("value", ["-5", "-0.1", "1", "7", "nan", "inf", "ten"])
def test_a_tolerance_that_makes_no_sense_is_refused(inputs, value):
    line = _error(fabric_report("compare", "--tolerance", value, "--report", inputs["pre"],
                                "--report", inputs["post"]))
    assert line.startswith("fabric-report compare: argument --tolerance: ")
    assert value in line


def test_an_unwritable_json_is_refused_before_any_work(inputs, tmp_path):
    line = _error(fabric_report("compare", "--report", inputs["pre"], "--report", inputs["post"],
                                "--json", "/nonexistent/dir/rows.json"))
    assert line == ("fabric-report: --json /nonexistent/dir/rows.json: directory "
                    "/nonexistent/dir does not exist")
    line = _error(fabric_report("compare", "--report", inputs["pre"], "--report", inputs["post"],
                                "--json", tmp_path))
    assert line == f"fabric-report: --json {tmp_path}: is a directory"


def test_wrong_number_of_sources_is_one_line(inputs):
    line = _error(fabric_report("compare", "--report", inputs["pre"]))
    assert line == ("fabric-report: compare needs two sources (base, target) or "
                    "--against-references and one")
    line = _error(fabric_report("compare", "--against-references", "--report", inputs["pre"],
                                "--report", inputs["post"]))
    assert line == "fabric-report: --against-references takes exactly one source"
    line = _error(fabric_report("compare", "--frobnicate"))
    assert line.startswith("fabric-report: unrecognized arguments: --frobnicate")


def test_against_references_needs_a_figure_with_a_reference(inputs):
    n = inputs["d"] / "no-refs.json"
    line = _error(fabric_report("compare", "--against-references", "--report", n))
    assert line == (f"fabric-report: --report {n}: none of its 24 figures has a reference to "
                    "compare with")


def test_exit_0_only_when_figures_were_compared_and_none_regressed(inputs):
    rc, out, err = fabric_report("compare", "--report", inputs["pre"], "--report", inputs["pre"])
    assert rc == 0 and err == ""
    assert out.splitlines()[-1] == ("no evidence of regression (compared 24 figures, 0 "
                                    "unreadable entries in the sources)")
    rc, out, _err = fabric_report("compare", "--report", inputs["pre"], "--report",
                                  inputs["post"])
    assert rc == 1
    assert out.splitlines()[-1].startswith(
        "22 of 24 figures regressed beyond the noise or outside their reference band "
        "(compared 24 figures, 0 unreadable entries in the sources); failing: TinyFabric")


def test_unreadable_lines_are_counted(inputs):
    rc, out, _err = fabric_report("compare", "--perflog", inputs["d"] / "half-garbage.log",
                                  "--perflog", inputs["d"] / "half-garbage.log")
    assert rc == 0
    assert out.splitlines()[-1] == ("no evidence of regression (compared 24 figures, 4 "
                                    "unreadable entries in the sources)")


def test_a_figure_missing_from_the_target_fails_unless_allowed(inputs):
    one = inputs["d"] / "one-test.json"
    rc, out, _err = fabric_report("compare", "--report", inputs["pre"], "--report", one)
    assert rc == 1
    last = out.splitlines()[-1]
    assert last.startswith("no evidence of regression; 12 figures missing from the target "
                           "(compared 12 figures, 12 missing from the target, 0 unreadable "
                           "entries in the sources); failing: TinyFabric %scenario=paired")
    rc, out, _err = fabric_report("compare", "--allow-missing", "--report", inputs["pre"],
                                  "--report", one)
    assert rc == 0
    assert out.splitlines()[-1] == ("no evidence of regression (compared 12 figures, 12 "
                                    "missing from the target (allowed), 0 unreadable entries "
                                    "in the sources)")


def test_html_refuses_what_it_cannot_do_before_any_work(inputs, tmp_path):
    line = _error(fabric_report("html", "--report", inputs["pre"], "-o", "/proc/x"))
    assert line == "fabric-report: -o /proc/x: cannot create it (No such file or directory)"
    line = _error(fabric_report("html", "-o", tmp_path / "r"))
    assert line == ("fabric-report: nothing to report: give a source (--session, --tag, "
                    "--report, --perflog) or --sweep")
    assert not (tmp_path / "r").exists()
    g = inputs["d"] / "garbage.log"
    line = _error(fabric_report("html", "--report", inputs["pre"], "--sweep", g, "-o",
                                tmp_path / "r"))
    assert line.startswith(f"fabric-report: --sweep {g}: not a fabric-sweep JSON file")
    line = _error(fabric_report("html", "--perflog", g, "-o", tmp_path / "r"))
    assert line == f"fabric-report: --perflog {g}: no performance figures in it " \
                   "(2 unreadable entries)"
    line = _error(fabric_report("html", "--tolerance", "-1", "--report", inputs["pre"]))
    assert line.startswith("fabric-report html: argument --tolerance: ")
    rc, out, err = fabric_report("html", "--report", inputs["pre"], "-o", tmp_path / "ok")
    assert rc == 0, err
    assert out.splitlines()[0] == (f"wrote {tmp_path / 'ok' / 'index.html'} (24 figures, "
                                   "0 sweeps, 0 unreadable entries); no figure regressed "
                                   "beyond their reference bands")

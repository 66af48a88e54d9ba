"""What `fabric-report` writes and what it reads (issue 27, items 7 and 8): an output path
(`--json`, `-o`, `--html`'s files) that is a symlink or a special file is refused, not
replaced; a run report of the wrong shape is refused in one line naming the place, in every
command that reads run reports.

On the code before this change, as root, `--json` onto a device node replaced the device with
a regular file and onto a symlink replaced the link; the wrong shapes below were tracebacks.
"""

from __future__ import annotations

import copy
import json
import os
import stat

import pytest
from _reports import fabric_report, report, write

FIG = {"bw": (100.0, "MB/s")}


@pytest.fixture
def two(tmp_path):
    return (write(tmp_path / "a", [FIG], name="a"), write(tmp_path / "b", [FIG], name="b"))


def _one_line(rc, out, err) -> str:
    assert rc == 2 and "Traceback" not in out + err, out + err
    assert len(err.splitlines()) == 1, err
    return err.strip()


def _special(tmp_path):
    """A FIFO and (as root) a character device like /dev/full, made here."""
    out = {}
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out["fifo"] = (fifo, "is a FIFO")
    if os.geteuid() == 0:
        dev = tmp_path / "full"
        os.mknod(dev, stat.S_IFCHR | 0o600, os.makedev(1, 7))
        out["device"] = (dev, "is a character device")
    return out


def test_json_never_replaces_a_symlink_or_a_special_file(tmp_path, two):
    target = tmp_path / "theirs.txt"
    target.write_text("not ours\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    cases = {"symlink": (link, "is a symlink"), **_special(tmp_path)}
    hist = write(tmp_path / "h", [FIG] * 10, name="h")
    for name, (path, why) in cases.items():
        for cmd in (["compare", "--report", two[0], "--report", two[1]],
                    ["history", "--report", hist],
                    ["attribute", "--report", two[1]]):
            line = _one_line(*fabric_report(*cmd, "--json", path))
            assert line == (f"fabric-report: --json {path}: {why}: not replaced (give the path "
                            "of a regular file, or of none)"), (name, cmd, line)
    assert link.is_symlink() and target.read_text() == "not ours\n"
    assert stat.S_ISFIFO(os.lstat(cases["fifo"][0]).st_mode)
    if "device" in cases:
        assert stat.S_ISCHR(os.lstat(cases["device"][0]).st_mode)


def test_html_never_writes_through_a_symlink_or_onto_a_special_file(tmp_path, two):
    theirs = tmp_path / "theirs.html"
    theirs.write_text("not ours\n")
    page = tmp_path / "page"
    page.mkdir()
    (page / "index.html").symlink_to(theirs)
    line = _one_line(*fabric_report("html", "--report", two[0], "-o", page))
    assert line == (f"fabric-report: -o {page / 'index.html'}: is a symlink: not replaced "
                    "(give the path of a regular file, or of none)")
    assert theirs.read_text() == "not ours\n"
    (page / "index.html").unlink()
    os.mkfifo(page / "ratios-0.png")
    line = _one_line(*fabric_report("html", "--report", two[0], "-o", page))
    assert line.endswith("ratios-0.png: is a FIFO: not replaced (give the path of a regular "
                         "file, or of none)")
    hist = write(tmp_path / "h", [FIG] * 10, name="h")
    line = _one_line(*fabric_report("history", "--report", hist, "--html", page))
    assert "ratios-0.png: is a FIFO" in line


def test_calibrate_never_replaces_a_symlinked_reference_file(tmp_path):
    glob = write(tmp_path / "r", [{"stream_gbps": (v, "Gbps")} for v in (97.0, 96.0, 98.0)],
                 test="TxRxTest %scenario=paired", scenario="paired")
    real = tmp_path / "real.yaml"
    real.write_text("# theirs\n")
    link = tmp_path / "sys.yaml"
    link.symlink_to(real)
    line = _one_line(*fabric_report("calibrate", "--report", glob, "-o", link))
    assert line == (f"fabric-report: -o {link}: is a symlink: not replaced (give the path of a "
                    "regular file, or of none)")
    assert real.read_text() == "# theirs\n" and link.is_symlink()


def test_a_regular_file_is_replaced_atomically(tmp_path, two):
    out = tmp_path / "rows.json"
    out.write_text("old")
    rc, _out, err = fabric_report("compare", "--report", two[0], "--report", two[1],
                                  "--json", out)
    assert rc == 0, err
    assert json.loads(out.read_text())["rows"][0]["pvar"] == "bw"
    assert not list(tmp_path.glob(".rows.json.tmp*"))


def _shapes() -> dict[str, tuple[dict | list, str]]:
    good = report(0, FIG)
    tc = good["runs"][0]["testcases"][0]

    def with_tc(**changes):
        rep = copy.deepcopy(good)
        rep["runs"][0]["testcases"][0].update(changes)
        return rep

    def unit(u):
        rep = copy.deepcopy(good)
        rep["runs"][0]["testcases"][0]["perfvalues"]["sys:default:bw"][4] = u
        return rep

    return {
        "a string test case": ({**good, "runs": [{"testcases": ["TxRxTest"]}]},
                               "runs[0].testcases[0] is a string, not a test case"),
        "runs: [1]": ({**good, "runs": [1]}, "runs[0] is a number, not a run"),
        "an int display name": (with_tc(display_name=7),
                                "runs[0].testcases[0].display_name is a number, not a string"),
        "an int unit": (unit(5), "runs[0].testcases[0].perfvalues['sys:default:bw'] unit is "
                                 "a number, not a string"),
        "an int nodelist": (with_tc(job_nodelist=3),
                            "runs[0].testcases[0].job_nodelist is a number, not a list of "
                            "node names"),
        "a nodelist of numbers": (with_tc(job_nodelist=[1, 2]),
                                  "runs[0].testcases[0].job_nodelist is a list, not a list of "
                                  "node names"),
        "testcases a mapping": ({**good, "runs": [{"testcases": {"a": tc}}]},
                                "runs[0].testcases is a mapping, not a list"),
        "perfvalues a list": (with_tc(perfvalues=[1]),
                              "runs[0].testcases[0].perfvalues is a list, not a mapping"),
        "session_info a string": ({**good, "session_info": "x"},
                                  "session_info is a string, not a mapping"),
        "a text time": (with_tc(job_completion_time_unix="noon"),
                        "runs[0].testcases[0].job_completion_time_unix is a string, not a "
                        "number"),
        "stored sessions with a number": ([good, 5], "session 1: no 'runs' list"),
    }


@pytest.mark.parametrize("name", list(_shapes()))
def test_a_run_report_of_the_wrong_shape_is_refused_naming_the_place(name):
    from fabrictest.report.records.results import ResultsError, read_report

    data, where = _shapes()[name]
    with pytest.raises(ResultsError) as err:
        read_report(data, "bad.json")
    line = str(err.value)
    assert line.startswith("bad.json: not a ReFrame run report") and where in line, line
    assert "\n" not in line


def test_every_command_refuses_a_run_report_of_the_wrong_shape_in_one_line(tmp_path, two):
    data, where = _shapes()["a string test case"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    for cmd in (["compare", "--report", two[0], "--report", bad],
                ["html", "--report", bad, "-o", tmp_path / "page"],
                ["history", "--report", bad],
                ["attribute", "--report", bad],
                ["calibrate", "--report", bad, "--dry-run", "-o", tmp_path / "x.yaml"]):
        line = _one_line(*fabric_report(*cmd))
        assert line == (f"fabric-report: {bad}: not a ReFrame run report: {where} (a "
                        "mapping)"), (cmd, line)

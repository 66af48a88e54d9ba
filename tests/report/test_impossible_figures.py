"""Figures that are not numbers are no results: a perflog row or a run report whose figure is
`inf`, `nan`, negative, or a zero rate (what a benchmark printing `inf` left in the records) is
refused by every fabric-report command in one line, exit 2, never a traceback."""

from __future__ import annotations

import json

import pytest

from fabrictest.report.cli import main

HEADER = ("job_completion_time|reframe version|display_name|system|partition|environ|jobid|"
          "result|peak_bw_value|peak_bw_unit|peak_bw_ref|peak_bw_lower_thres|"
          "peak_bw_upper_thres")
ROW = ("2026-11-24T18:40:05|reframe 4.10.4|OsuPt2PtTest %benchmark=osu_bw|local|default|"
       "openmpi|{job}|pass|{value}|MB/s|{ref}|-0.5|None")
BAD = [("inf", "5000.0"), ("nan", "5000.0"), ("-12.5", "5000.0"), ("0", "5000.0"),
       ("12000.0", "inf"), ("12000.0", "nan")]


def _perflog(tmp_path, value: str, ref: str):
    log = tmp_path / "perflogs" / "local" / "default" / "OsuPt2PtTest.log"
    log.parent.mkdir(parents=True)
    rows = [ROW.format(job=1, value="12000.0", ref="5000.0"), ROW.format(job=2, value=value,
                                                                          ref=ref)]
    log.write_text("\n".join([HEADER, *rows]) + "\n")
    return tmp_path / "perflogs"


def _report(tmp_path, value: float, ref: float):
    tc = {"name": "OsuPt2PtTest_1", "display_name": "OsuPt2PtTest %benchmark=osu_bw",
          "system": "local", "partition": "default", "environ": "openmpi", "result": "pass",
          "perfvalues": {"local:default:peak_bw": [value, ref, -0.5, None, "MB/s", "pass"]}}
    path = tmp_path / "report.json"
    # Python's json writes inf/nan as Infinity/NaN, as a run report of such a value has them
    path.write_text(json.dumps({"session_info": {"uuid": "u1"},
                                "runs": [{"testcases": [tc]}]}))
    return path


def _one_line_refusal(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(("value", "ref"), BAD)
def test_perflog_with_an_impossible_figure_is_refused(tmp_path, capsys, value, ref):
    logs = _perflog(tmp_path, value, ref)
    for argv in (["compare", "--perflog", str(logs), "--perflog", str(logs)],
                 ["compare", "--against-references", "--perflog", str(logs)],
                 ["html", "--perflog", str(logs), "-o", str(tmp_path / "out.html")]):
        line = _one_line_refusal(capsys, argv)
        assert "OsuPt2PtTest %benchmark=osu_bw peak_bw" in line, line
        assert "refused" in line, line


@pytest.mark.parametrize(("value", "ref"), [(float(v), float(r)) for v, r in BAD])
def test_run_report_with_an_impossible_figure_is_refused(tmp_path, capsys, value, ref):
    report = _report(tmp_path, value, ref)
    for argv in (["compare", "--report", str(report), "--report", str(report)],
                 ["calibrate", "--report", str(report), "--report", str(report), "--report",
                  str(report)],
                 ["html", "--report", str(report), "-o", str(tmp_path / "out.html")]):
        line = _one_line_refusal(capsys, argv)
        assert "peak_bw" in line and "refused" in line, line


def test_healthy_perflog_is_read(tmp_path, capsys):
    logs = _perflog(tmp_path, "11000.0", "5000.0")
    assert main(["html", "--perflog", str(logs), "-o", str(tmp_path / "out.html")]) == 0

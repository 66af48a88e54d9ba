"""A figure whose unit column was cut is refused in history's (and every command's) input, not
read as a bare number (report/records/cut_units.py)."""

from __future__ import annotations

import json

from report._reports import fabric_report, report

HEADER = ("job_completion_time|reframe version|display_name|system|partition|environ|jobid|"
          "result|stream_gbps_var|stream_gbps_value|stream_gbps_ref|stream_gbps_lower_thres|"
          "stream_gbps_upper_thres")


def _one_line(rc, out, err):
    assert rc == 2 and "Traceback" not in out + err, out + err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def _sessions(tmp_path, cut_after: int | None, unit="Gbps"):
    d = tmp_path / "h"
    d.mkdir()
    for i in range(12):
        doc = report(i, {"stream_gbps": (0.19 * (1 + 0.002 * (i % 3)), unit)})
        pvs = doc["runs"][0]["testcases"][0]["perfvalues"]
        if cut_after is not None:
            pvs["sys:default:stream_gbps"] = pvs["sys:default:stream_gbps"][:cut_after]
        (d / f"run-{i:05d}.json").write_text(json.dumps(doc))
    return str(d / "run-*.json")


def test_history_refuses_run_reports_cut_before_the_unit(tmp_path):
    line = _one_line(*fabric_report("history", "--report", _sessions(tmp_path, 4)))
    assert line.startswith("fabric-report: ") and "run-00000.json: TxRxTest %scenario=paired " \
        "stream_gbps: its entry [0.19, None, None, None] stops after 4 fields, before the unit" \
        in line
    assert line.endswith("refused, a figure is never read without its unit")


def test_a_whole_entry_and_a_declared_empty_unit_are_read(tmp_path):
    rc, out, err = fabric_report("history", "--report", _sessions(tmp_path, None, unit=""))
    assert rc == 0, out + err


def test_history_refuses_a_perflog_header_without_a_unit_column(tmp_path):
    log = tmp_path / "TxRxTest.log"
    rows = [f"2026-10-01T{h:02d}:00:00|4.7|TxRxTest %scenario=paired|sys|default|builtin|"
            f"{100 + h}|pass|stream_gbps|0.19|0|None|None" for h in range(12)]
    log.write_text("\n".join([HEADER, *rows]) + "\n")
    line = _one_line(*fabric_report("history", "--perflog", log))
    assert line == (f"fabric-report: {log}: its header names the figures' fields (var, value, "
                    "ref, lower_thres, upper_thres) without a unit column: refused, a figure "
                    "is never read without its unit (the suite's perflog format writes "
                    "%(check_perf_unit)s)")

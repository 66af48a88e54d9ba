"""A session given twice is refused (compare and history), and history says, and fails on, a
figure absent from the latest sessions (report/records/once.py, report/history/vanished.py)."""

from __future__ import annotations

import json
import shutil

from report._reports import fabric_report, report, write

STEADY = [{"stream_gbps": (0.19 * (1 + 0.002 * (i % 3)), "Gbps")} for i in range(14)]


def _one_line(rc, out, err, status=2):
    assert rc == status and "Traceback" not in out + err, out + err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_compare_refuses_a_session_given_twice_on_one_side(tmp_path):
    base = write(tmp_path / "b", STEADY[:3], name="base")
    target = write(tmp_path / "t", STEADY[3:6], name="target", prefix="1111")
    shutil.copy(tmp_path / "t" / "target-00000.json", tmp_path / "t" / "target-00009.json")
    line = _one_line(*fabric_report("compare", "--report", base, "--report", target))
    assert "session 11110000-0000-4000-8000-000000000000 is in two of its files" in line
    assert line.endswith("refused, it would be counted twice; give each session once")


def test_history_refuses_a_session_in_two_sources(tmp_path):
    glob = write(tmp_path / "h", STEADY)
    one = str(tmp_path / "h" / "run-00003.json")
    line = _one_line(*fabric_report("history", "--report", glob, "--report", one))
    assert "session 00000003-0000-4000-8000-000000000003 is in two sources" in line
    assert f"--report {one}" in line


def test_history_refuses_a_session_in_two_files_of_a_glob(tmp_path):
    write(tmp_path / "h", STEADY)
    shutil.copy(tmp_path / "h" / "run-00005.json", tmp_path / "h" / "run-99999.json")
    line = _one_line(*fabric_report("history", "--report", str(tmp_path / "h" / "run-*.json")))
    assert "session 00000005-0000-4000-8000-000000000005 is in two of its files" in line


def _with(tmp_path, later: list[dict]) -> str:
    """14 steady sessions of TxRxTest on sys, then `later` (run report documents)."""
    glob = write(tmp_path / "h", STEADY)
    for i, doc in enumerate(later, len(STEADY)):
        (tmp_path / "h" / f"run-{i:05d}.json").write_text(json.dumps(doc))
    return glob


def test_history_healthy_store_is_not_called_absent(tmp_path):
    rc, out, err = fabric_report("history", "--report", _with(tmp_path, []))
    assert rc == 0, out + err
    assert "absent" not in out + err


def test_history_names_a_figure_absent_from_the_latest_sessions(tmp_path):
    other = [report(i, {"bw": (90.0, "MB/s")}, test="OsuPt2PtTest %benchmark=osu_bw")
             for i in range(14, 17)]
    glob = _with(tmp_path, other)
    rc, out, err = fabric_report("history", "--report", glob)
    assert rc == 1, out + err
    last = out.strip().splitlines()[-1]
    assert last.endswith("1 figure absent from the latest sessions: TxRxTest %scenario=paired "
                         "stream_gbps (absent from the latest 3 sessions)"), last
    rc, out, err = fabric_report("history", "--report", glob, "--allow-missing", "--json",
                                 tmp_path / "h.json")
    assert rc == 0, out + err
    assert "1 figure absent from the latest sessions (allowed)" in out
    fig = next(f for f in json.loads((tmp_path / "h.json").read_text())["figures"]
               if f["figure"] == "stream_gbps")
    assert fig["absent_latest"] == 3
    assert "absent from the latest 3 sessions (since 00000014): not measured there" in fig["note"]


def test_history_names_a_figure_whose_latest_sessions_recorded_nothing(tmp_path):
    empty = [report(i, {}) for i in range(14, 16)]
    for doc in empty:
        doc["runs"][0]["testcases"] = []
    rc, out, err = fabric_report("history", "--report", _with(tmp_path, empty))
    assert rc == 1, out + err
    assert "stream_gbps (absent from the latest 2 sessions)" in out


def test_history_latest_sessions_of_another_system_say_so_and_system_selects(tmp_path):
    cori = [report(i, STEADY[0]) for i in range(14, 16)]
    for doc in cori:
        tc = doc["runs"][0]["testcases"][0]
        tc["system"] = "cori"
        tc["perfvalues"] = {k.replace("sys:", "cori:"): v for k, v in tc["perfvalues"].items()}
    glob = _with(tmp_path, cori)
    rc, out, err = fabric_report("history", "--report", glob, "--json", tmp_path / "h.json")
    assert rc == 1, out + err
    fig = next(f for f in json.loads((tmp_path / "h.json").read_text())["figures"]
               if f["system"].startswith("sys:"))
    assert fig["note"].endswith("they ran on cori only (select a system with --system)")
    rc, out, err = fabric_report("history", "--report", glob, "--system", "sys")
    assert rc == 0, out + err

"""A figure measured in earlier sessions and absent from the latest is shown on the pages, not
only by `fabric-report history`'s verdict: `history --html` and `html --history` list it
(report/history/view.py, report/history/vanished.py)."""

from __future__ import annotations

import json

import pytest
from report._reports import fabric_report, report, write

from fabrictest.report.history import view
from fabrictest.report.records.sources import Source, read

STEADY = [{"stream_gbps": (0.19 * (1 + 0.002 * (i % 3)), "Gbps")} for i in range(14)]
OSU = "OsuPt2PtTest %benchmark=osu_bw"


def _store(tmp_path, later: int = 3) -> str:
    """14 steady sessions of TxRxTest on sys, then `later` sessions of osu_bw only."""
    glob = write(tmp_path / "h", STEADY)
    for i in range(len(STEADY), len(STEADY) + later):
        doc = report(i, {"bw": (90.0, "MB/s")}, test=OSU)
        (tmp_path / "h" / f"run-{i:05d}.json").write_text(json.dumps(doc))
    return glob


def _absent_rows(page: str) -> list[str]:
    return [row for row in page.split("<tr")[1:] if row.startswith(' class="missing"')]


def test_the_history_page_lists_a_figure_absent_from_the_latest_sessions(tmp_path):
    rc, out, err = fabric_report("history", "--report", _store(tmp_path), "--html",
                                 tmp_path / "page")
    assert rc == 1, out + err
    page = (tmp_path / "page" / "index.html").read_text()
    assert "1 figure absent from the latest sessions</b>" in page
    (row,) = _absent_rows(page)
    assert "<td>stream_gbps</td>" in row and "<td>00000013</td>" in row
    assert "<td class=num>3</td>" in row  # the sessions since its last value


def test_the_history_page_of_a_healthy_store_lists_nothing_absent(tmp_path):
    rc, out, err = fabric_report("history", "--report", write(tmp_path / "h", STEADY),
                                 "--html", tmp_path / "page")
    assert rc == 0, out + err
    page = (tmp_path / "page" / "index.html").read_text()
    assert "absent" not in page and not _absent_rows(page)


@pytest.fixture
def stored_reports(tmp_path, monkeypatch):
    """`html --history` reads the stored sessions: here, the run reports of _store."""
    glob = _store(tmp_path)
    monkeypatch.setattr(view, "read", lambda _src: read(Source("report", glob)))
    return tmp_path / "h" / f"run-{len(STEADY) + 2:05d}.json"


def test_the_html_report_with_history_names_the_absent_figure(tmp_path, stored_reports):
    rc, out, err = fabric_report("html", "--report", stored_reports, "--history", "-o",
                                 tmp_path / "page")
    assert rc == 0, out + err
    page = (tmp_path / "page" / "index.html").read_text()
    verdict = page.split('<div class="verdict">')[-1].split("</div>")[0]
    assert verdict.endswith("1 figure absent from the latest sessions: TxRxTest "
                            "%scenario=paired stream_gbps (absent from the latest 3 "
                            "sessions)"), verdict
    (row,) = _absent_rows(page)
    assert "<td>stream_gbps</td>" in row

"""No regression without evidence (issue 30): two healthy runs of the suite on `local`, back
to back (tests/report/data/SOURCES.md), compared: no red, and the verdict says why (one
session per side: the changes are "noise unknown", and what would judge them).

Before this change the same two runs gave "8 regressed beyond 10%" (exit 1), "8 of 52 figures
regressed" in red in the html, and a closing "could not read 0: AllToManyTest ..." whose list
was the regressed figures."""

from __future__ import annotations

import re
from pathlib import Path

from _reports import fabric_report

DATA = Path(__file__).resolve().parent / "data"
RUNS = [DATA / "run-report-local-healthy-1.json", DATA / "run-report-local-healthy-2.json"]
HEAD = re.compile(r"^no evidence of regression; (\d+) figures changed by more than 10% with "
                  r"one session per side: run 3 per side to judge")


def test_compare_two_healthy_runs_says_no_evidence_of_regression():
    rc, out, err = fabric_report("compare", "--report", RUNS[0], "--report", RUNS[1])
    assert rc == 0 and err == "", out + err
    last = out.splitlines()[-1]
    m = HEAD.match(last)
    assert m and int(m.group(1)) > 0, last
    assert "(compared 52 figures, 0 unreadable entries in the sources)" in last
    assert "could not read" not in out and "failing:" not in last
    assert "REGRESSED" not in out and "improved" not in out
    assert re.search(r"changed by [+-]\d+\.\d% \(noise unknown\)", out)
    assert "ok (informational)" in out  # local's all-to-many timings


def test_html_of_two_healthy_runs_has_no_red(tmp_path):
    rc, out, err = fabric_report("html", "--report", RUNS[0], "--report", RUNS[1], "-o",
                                 tmp_path / "page")
    assert rc == 0, err
    assert HEAD.search(out.split("; ", 1)[1]), out
    page = (tmp_path / "page" / "index.html").read_text()
    assert 'class="REGRESSED"' not in page and '<tr class="fail">' not in page
    assert 'class="improved"' not in page
    verdict = re.search(r'<div class="verdict">(.*?)</div>', page).group(1)
    assert HEAD.match(verdict) and "0 of 16 figures with a reference are outside its band" \
        in verdict, verdict
    assert "(noise unknown)" in page and "A figure is called regressed only with evidence" in page
    assert "<td>pass (informational)</td>" in page  # the all figures table

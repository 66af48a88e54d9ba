"""The acceptance page at scale (tests/report/acceptance_scale.py, scaled from the recorded
vcluster run, three planted faults): every planted fault is named, every failure sits before
the first passing row and near the top of the file, the page stays small. 300 nodes here (a
few seconds); bench/bench_acceptance.py times 500 to 10,000."""

from __future__ import annotations

import json

import pytest
from report._reports import fabric_report
from report.acceptance_scale import faults, generate, node_names

NODES = 300
#: where the first failure must sit, and the page's size, at NODES nodes
FIRST_FAILURE_KB, PAGE_KB = 16, 400
#: the JSON twin's size at NODES nodes (every row listed and indented, it was 1,441 KB)
TWIN_KB = 64


@pytest.mark.slow  # about 4 s idle, 10 s on a loaded 2-core machine
def test_a_scaled_run_names_its_three_faults_at_the_top(tmp_path, monkeypatch):
    reports = generate(tmp_path, NODES, snapshots=True)
    monkeypatch.chdir(tmp_path)
    args = [a for r in reports for a in ("--report", r.name)]
    rc, out, err = fabric_report("acceptance", *args, "--topology", "topology.txt",
                                 "-o", "page")
    assert rc == 1, out + err
    bad = faults(node_names(NODES))
    head = out.splitlines()[0]
    assert f"{bad['bad_mac']} (stage 1" in head and f"{bad['slow']} (stage 2" in head, head
    assert f"link {bad['flapping']} eth0, hsn0 (stage 3" in head, head
    assert "1 failure (" in out  # the double flap on eth0 and its macvlan: once
    # counted nouns as a person reads them: one failed node, one failed case
    assert f"1 node failed ({bad['bad_mac']})" in out and "; 1 test case failed" in out, out
    page = (tmp_path / "page" / "index.html").read_text()
    first_fail, failures, rows = (page.find('class="fail"'), page.find('id="failures"'),
                                  page.find('id="rows"'))
    assert 0 < failures < first_fail < FIRST_FAILURE_KB * 1024, (failures, first_fail)
    assert first_fail < page.find("data:image") < rows  # the chart after the failures
    for node in bad.values():  # each named in the failures section, before any passing row
        assert 0 < page.find(node, failures) < rows, node
    assert len(page) < PAGE_KB * 1024, len(page)
    text = (tmp_path / "page" / "acceptance.json").read_text()
    assert len(text) < TWIN_KB * 1024, len(text)
    twin = json.loads(text)
    s1, s2, s3 = twin["stages"]
    assert s1["rows_total"] == {"rows": 8 * NODES}  # every row counted, the failing listed
    assert sum(s1["passed"].values()) + len(s1["rows"]) == 8 * NODES
    assert [r["node"] for r in s1["rows"]] == [bad["bad_mac"]]
    assert {bad["slow"]} <= {n for r in s2["figures"] if r["failing"]
                             for n in node_names(NODES) if n in r["figure"]}
    assert [n["node"] for n in s3["nodes"]] == [bad["flapping"]]
    assert {e["name"] for e in twin["elements"]} >= {bad["bad_mac"], bad["slow"]}

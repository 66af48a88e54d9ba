"""fabric-report on real results: two real ReFrame runs stored with --session-extras (one
with a degraded link), compared per test, scenario, node and figure; the HTML page and PNGs
produced from them."""

from __future__ import annotations

import json
import re

import pytest
from _rfm_sessions import fabric_report
from _rfm_sessions import reframe as _reframe

from fabrictest.report.cli import main
from fabrictest.report.compare import rows as cmp
from fabrictest.report.compare import text as ctext
from fabrictest.report.records.perflogs import load_perflogs
from fabrictest.report.records.results import load_report_file
from fabrictest.report.records.sessions import tag_query


def test_stored_sessions_are_listed_by_reframe(stored):
    tmp, env, uuids = stored
    out = _reframe(env, tmp, "--list-stored-sessions", "--nocolor").stdout
    for u in uuids.values():
        assert u in out
    assert "pre-upgrade" in out and "post-upgrade" in out


def test_compare_by_tag_flags_the_degraded_figures(rfm_env, capsys, tmp_path):
    out_json = tmp_path / "cmp.json"
    rc = main(["compare", "--tag", "stack=pre-upgrade", "--tag", "stack=post-upgrade",
               "--json", str(out_json)])
    text = capsys.readouterr().out
    assert rc == 1
    rows = json.loads(out_json.read_text())["rows"]
    status = {(r["test"], r["pvar"]): r["status"] for r in rows}
    paired = "TinyFabric %scenario=paired"
    assert status[(paired, "bw_1048576")] == "REGRESSED"  # bandwidth halved
    assert status[(paired, "lat_64")] == "REGRESSED"  # latency doubled
    assert status[(paired, "rx0_tx0_gbps")] == "ok"  # the healthy stream did not move
    assert status[(paired, "rx1_tx1_gbps")] == "REGRESSED"  # the degraded one did
    assert all(r["nodes"] for r in rows)  # per node (job_nodelist)
    assert all(r["scenario"] in ("paired", "same-node") for r in rows)
    row = next(r for r in rows if r["test"] == paired and r["pvar"] == "bw_1048576")
    assert row["change"] == pytest.approx(-0.5)
    # one session per side: the evidence is the reference band the degraded figures left
    assert "outside its reference band" in row["note"]
    assert text.splitlines()[-1].startswith(
        "22 of 24 figures regressed beyond the noise or outside their reference band ")


def test_compare_by_session_uuid_same_session_is_clean(rfm_env, capsys):
    _tmp, uuids = rfm_env
    u = uuids["pre-upgrade"]
    assert main(["compare", "--session", u, "--session", u]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "no evidence of regression (compared 24 figures, 0 unreadable entries in the sources)")


def test_against_references(rfm_env, capsys):
    _tmp, uuids = rfm_env
    assert main(["compare", "--against-references", "--session", uuids["pre-upgrade"]]) == 0
    capsys.readouterr()
    assert main(["compare", "--against-references", "--tag", "stack=post-upgrade"]) == 1
    text = capsys.readouterr().out
    assert re.search(r"rx1_tx1_gbps .* REGRESSED \(outside", text)


def test_against_references_a_test_failed_for_no_reference_fails_the_gate(unreferenced_run):
    # it used to pass (exit 0) saying "12 not in the base": there is no base in this mode
    rc, out, err = fabric_report("compare", "--against-references", "--report",
                                 unreferenced_run)
    assert rc == 1, out + err
    assert "not in the base" not in out
    assert out.splitlines()[-1].startswith(
        "no figure regressed beyond their reference bands; 12 figures without a reference in "
        "failed tests (compared 12 figures, 12 without a reference (12 of them in failed "
        "tests), 0 unreadable entries in the sources); failing: TinyFabric "
        "%scenario=same-node bw_1 (no reference), ")
    assert re.search(r"same-node .* rx1_tx1_gbps .* unreferenced \(no reference, the test "
                     r"failed\)", out)


def test_against_references_a_figure_without_a_reference_in_a_passing_test():
    from fabrictest.report.records.results import PerfRecord

    def rec(pvar, ref, result="pass"):
        return PerfRecord("T", "T", "s", "p", "e", pvar, 10.0, "Gbps", ref=ref, lower=-0.1,
                          upper=None, variables={"result": result})

    # informational, or -S missing_reference=warn: not judged, said, and not failing the gate
    rows = cmp.against_references([rec("bw", 10.0), rec("sim_bw", None)])
    assert [(r.status, r.note) for r in rows] == [("ok", ""), ("unreferenced", "no reference")]
    line, status = ctext.verdict(rows, 0, None, against_references=True)
    assert status == 0
    assert line == ("no figure regressed beyond their reference bands (compared 1 figure, 1 "
                    "without a reference, 0 unreadable entries in the sources)")
    rows = cmp.against_references([rec("bw", 10.0, "fail"), rec("sim_bw", None, "fail")])
    assert ctext.verdict(rows, 0, None, against_references=True) == (
        "no figure regressed beyond their reference bands; 1 figure without a reference in "
        "failed tests (compared 1 figure, 1 without a reference (1 of them in failed tests), "
        "0 unreadable entries in the sources); failing: T sim_bw (no reference)", 1)


def test_report_file_and_perflogs_read_the_same_figures(stored):
    tmp, _env, _uuids = stored
    recs = load_report_file(tmp / "post-upgrade.json")
    assert len(recs) == 24
    r = next(x for x in recs if x.pvar == "bw_1048576" and x.scenario == "paired")
    assert r.value == pytest.approx(50.0) and r.unit == "MB/s" and r.ref == pytest.approx(100)
    logs = load_perflogs(tmp / "perflogs")
    assert {x.pvar for x in logs} == {x.pvar for x in recs}
    assert len(logs) == 48  # both runs append to the same perflog


def test_compare_pure():
    from fabrictest.report.records.results import PerfRecord

    def rec(v, unit="Gbps", nodes=("n1", "n2"), pvar="bw"):
        return PerfRecord("T", "T", "s", "p", "e", pvar, v, unit, nodes=list(nodes))

    rows = cmp.compare([rec(10.0)], [rec(9.5)], 0.1)
    assert rows[0].status == "ok"
    rows = cmp.compare([rec(10.0)], [rec(8.0, nodes=("n3", "n4"))], 0.1)
    # one session per side, no reference: no evidence, only a change
    assert rows[0].status == "changed" and rows[0].nodes == "n[1-2] -> n[3-4]"
    band = rec(8.0, nodes=("n3", "n4"))
    band.ref, band.lower = 10.0, -0.1
    rows = cmp.compare([rec(10.0)], [band], 0.1)  # below its band: the evidence
    assert rows[0].status == "REGRESSED" and rows[0].note == (
        "outside its reference band [9, -]")
    rows = cmp.compare([rec(5.0, "us")], [rec(4.0, "us")], 0.1)
    assert rows[0].status == "changed" and rows[0].note == "changed by -20.0% (noise unknown)"
    rows = cmp.compare([rec(5.0, pvar="a")], [rec(5.0, pvar="b")], 0.1)
    assert sorted(r.status for r in rows) == ["missing", "new"]
    assert tag_query(["stack=post-upgrade", "site=x"]) == (
        "?stack=='post-upgrade' and site=='x'")


def test_html_report_from_real_results(rfm_env, tmp_path, capsys):
    from fabrictest.sweep.core import run_sweep
    from fabrictest.sweep.simulate import SimulatedRunner

    nodes = [f"node{i:02d}" for i in range(1, 9)]
    res = run_sweep(nodes, SimulatedRunner(nodes, base=0.19, sigma=0.05,
                                           slow={"node03": 0.25}, down=["node06"], seed=1),
                    seed=1)
    sweep_json = tmp_path / "sweep.json"
    res.write_json(str(sweep_json))
    out = tmp_path / "report"
    rc = main(["html", "--tag", "stack=pre-upgrade", "--tag", "stack=post-upgrade",
               "--sweep", str(sweep_json), "-o", str(out)])
    assert rc == 0, capsys.readouterr()
    page = (out / "index.html").read_text()
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert "streams.png" in pngs and "sweep0-matrix.png" in pngs and "sweep0-nodes.png" in pngs
    assert any(p.startswith("size-TinyFabric") for p in pngs)
    for p in pngs:
        assert (out / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="{p}"' in page
    assert "Regression table" in page and "REGRESSED" in page
    assert "suspect: node03 send" in page and "suspect: node06 unreachable" in page
    # offline: no external URL of any kind
    assert not re.search(r"(?:https?:)?//[a-z0-9]", page, re.I)
    assert "@import" not in page and "<script" not in page


def test_html_embed_single_file(stored, tmp_path):
    tmp, _env, _uuids = stored
    out = tmp_path / "r"
    assert main(["html", "--report", str(tmp / "pre-upgrade.json"), "--embed", "-o",
                 str(out)]) == 0
    page = (out / "index.html").read_text()
    assert "data:image/png;base64," in page
    assert 'src="streams.png"' not in page

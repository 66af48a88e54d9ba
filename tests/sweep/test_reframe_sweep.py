"""The ReFrame SweepTest records its figures whatever its verdict, and still fails on a suspect.

Black-box: `reframe -c reframe_tests/sweep.py -r --system local -S SweepTest.launcher=sim`
(the sweep's simulation inside a real ReFrame run), then the JSON run report, the perflog,
and `fabric-report compare` / `html` on those reports, as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.slow


def reframe(tmp: Path, name: str, *extra: str) -> dict:
    """Run SweepTest (simulation) once; its test case from the JSON run report."""
    if not (BIN / "reframe").exists():
        pytest.skip("reframe is not installed in this environment")
    env = dict(os.environ)
    env.update({
        "RFM_CONFIG_FILES": str(ROOT / "config" / "reframe" / "settings.py"),
        "RFM_REFERENCE_PREFIX": str(ROOT / "reference"),
        "FABRICTEST_RESULTS_DB": str(tmp / "results.db"),
        "FABRICTEST_RFM_LOG": str(tmp / f"{name}.log"),
        "RFM_COLORIZE": "n",
    })
    report = tmp / f"{name}.json"
    cmd = [str(BIN / "reframe"), "-c", str(ROOT / "reframe_tests" / "sweep.py"), "-r",
           "--system", "local", "-n", "SweepTest", "--prefix", str(tmp / name),
           "--perflogdir", str(tmp / f"{name}-perflogs"), "--report-file", str(report),
           "-S", "SweepTest.launcher=sim", "-S", "SweepTest.seed=3", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=tmp)
    (tmp / f"{name}.out").write_text(proc.stdout + proc.stderr)
    data = json.loads(report.read_text())
    cases = [tc for run in data["runs"] for tc in run["testcases"]
             if tc["result"] != "skip"]
    assert len(cases) == 1, proc.stdout[-3000:]
    cases[0]["_returncode"] = proc.returncode
    cases[0]["_stdout"] = proc.stdout
    return cases[0]


def figures(case: dict) -> dict[str, float]:
    return {k.split(":")[-1]: v[0] for k, v in (case.get("perfvalues") or {}).items()}


def test_a_suspect_fails_the_test_with_its_figures_recorded(tmp_path):
    case = reframe(tmp_path, "slow", "-S", "SweepTest.sweep_options=--sim-slow=node03=0.25")
    assert case["_returncode"] != 0
    assert case["result"] == "fail"
    assert case["fail_phase"] == "performance", case["fail_reason"]
    assert "suspect: node03 " in case["fail_reason"]
    figs = figures(case)
    # every node's own figure, the cluster level and every pair, although the test failed
    assert {f"node0{i}" for i in range(1, 9)} <= set(figs), sorted(figs)
    assert figs["node03"] < 0.5 * figs["cluster_level"]
    assert figs["node01"] > 0.8 * figs["cluster_level"]
    assert figs["suspects"] == 1
    assert any("->" in k and "node03" in k for k in figs)
    assert {"node03_send", "node03_recv", "node01_send", "node01_recv"} <= set(figs)
    perflog = (tmp_path / "slow-perflogs" / "local" / "default" / "SweepTest.log").read_text()
    assert "node03_value" in perflog and "|fail|" in perflog
    # the sweep's JSON is where fabric-report looks for it, also for a failed test
    assert (Path(case["outputdir"]) / "sweep.json").is_file()


def test_a_healthy_sweep_passes_with_the_same_figures(tmp_path):
    case = reframe(tmp_path, "healthy")
    assert case["_returncode"] == 0, case["_stdout"][-3000:]
    assert case["result"] == "pass"
    figs = figures(case)
    assert {f"node0{i}" for i in range(1, 9)} <= set(figs)
    assert figs["suspects"] == 0


def test_fail_on_suspect_false_passes_and_records(tmp_path):
    case = reframe(tmp_path, "slow", "-S", "SweepTest.sweep_options=--sim-slow=node03=0.25",
                   "-S", "SweepTest.fail_on_suspect=false")
    assert case["result"] == "pass"
    assert figures(case)["suspects"] == 1


def test_sanity_fails_when_the_sweep_could_not_run(tmp_path):
    case = reframe(tmp_path, "bad", "-S", "SweepTest.sweep_options=--rounds=0")
    assert case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "fabric-sweep exited 2" in case["fail_reason"]


def test_report_compares_and_draws_the_sweep_that_found_a_suspect(tmp_path):
    reframe(tmp_path, "healthy")
    reframe(tmp_path, "slow", "-S", "SweepTest.sweep_options=--sim-slow=node03=0.25")
    cmp = subprocess.run(
        [str(BIN / "fabric-report"), "compare", "--report", str(tmp_path / "healthy.json"),
         "--report", str(tmp_path / "slow.json"), "--json", str(tmp_path / "cmp.json")],
        capture_output=True, text=True, timeout=120)
    rows = json.loads((tmp_path / "cmp.json").read_text())["rows"]
    assert not [r for r in rows if r["status"] == "failed"], cmp.stdout
    regressed = {r["pvar"] for r in rows if r["status"] == "REGRESSED"}
    assert "node03" in regressed and all("node03" in p for p in regressed), cmp.stdout
    assert cmp.returncode == 1
    html = subprocess.run(
        [str(BIN / "fabric-report"), "html", "--report", str(tmp_path / "slow.json"), "-o",
         str(tmp_path / "html")], capture_output=True, text=True, timeout=120)
    assert html.returncode == 0, html.stderr
    page = (tmp_path / "html" / "index.html").read_text()
    assert "No sweep results given" not in page
    assert "suspect: node03 " in page


def test_expected_rate_from_a_reference_fails_a_uniform_drop(tmp_path):
    """Every node 30 % slow: relative to the cluster nothing stands out (the test passes);
    with the calibrated pair rate (`expect_from`) the test fails naming the drop."""
    slow = ",".join(f"--sim-slow=node{i:02d}=0.7" for i in range(1, 9))
    case = reframe(tmp_path, "uniform", "-S", f"SweepTest.sweep_options={slow}")
    assert case["result"] == "pass", case["fail_reason"]
    ref = tmp_path / "sim.yaml"
    ref.write_text(
        "$provenance:\n  TxRxTest:\n    sim: {document: test, table: test, measured_with: "
        "{msg_size: 65536, num_blks: 10, num_cmsgs: 100}}\nTxRxTest:\n  $index: ['$system', "
        "'scenario', 'method', 'buffer']\n  sim:\n    paired:\n      mpi:\n        host:\n"
        "          stream_gbps: [1.0, -0.15, null, Gbps]\n")
    case = reframe(tmp_path, "expected", "-S", f"SweepTest.sweep_options={slow}",
                   "-S", f"SweepTest.expect_from={ref}")
    assert case["result"] == "fail"
    assert case["fail_phase"] == "performance", case["fail_reason"]
    assert "below reference: cluster level 0." in case["fail_reason"]
    assert "below the expected 1 Gbps (sim.yaml TxRxTest paired mpi" in case["fail_reason"]


def test_an_undecidable_sweep_fails_the_test_not_its_launch(tmp_path):
    """2 healthy nodes, no reference: fabric-sweep exits 3 (undecidable). The test is not a
    failed launch (`exited 3: it could not sweep`): its figures are recorded and the verdict
    fails it with the line saying what could not be decided, never a pass."""
    case = reframe(tmp_path, "two", "-S", "SweepTest.sim_nodes=node[01-02]")
    assert case["result"] == "fail" and case["fail_phase"] == "performance", case["fail_reason"]
    assert "undecidable: node01–node02 (" in case["fail_reason"]
    assert "cluster_level" in figures(case)

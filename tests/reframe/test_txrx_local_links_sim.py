"""TxRxTest on `local` for real: per-link figures named by host (transmitter -> receiver), a
missed reference named by node, scenario, link, figure, drop and bound; and `--method rdma`
over the simulated verbs provider with -S TxRxTest.verbs=sim (passes, figures sim_*, an
injected drop fails with the loss named), skipped with a reason when not asked."""

from __future__ import annotations

import re
import shutil
import socket

import pytest
import yaml
from _rfm import ROOT, run_reframe

pytestmark = [pytest.mark.slow, pytest.mark.mpi]

M2O = "TxRxTest%scenario=many-to-one%span=one%method={method}%buffer=host"
HOST = socket.gethostname()
SIM = ["-S", "TxRxTest.verbs=sim"]


@pytest.fixture(autouse=True)
def _mpi():
    if shutil.which("mpirun") is None or shutil.which("mpicc") is None:
        pytest.skip("mpirun/mpicc not on PATH: run scripts/install.sh and activate .venv")


def test_missed_reference_names_node_link_drop_and_bound(tmp_path):
    refdir = tmp_path / "refs"
    refdir.mkdir()
    data = yaml.safe_load((ROOT / "reference" / "local.yaml").read_text())
    data["TxRxTest"]["local"]["many-to-one"]["mpi"]["host"]["stream_gbps"] = [
        1000.0, -0.05, None, "Gbps"]
    (refdir / "local.yaml").write_text(yaml.safe_dump(data))
    run = run_reframe(["--system", "local", "-r", "-n", M2O.format(method="mpi")],
                      tmp_path / "run", timeout=300, env={"RFM_REFERENCE_PREFIX": str(refdir)})
    assert run.returncode != 0, run.output[-4000:]
    reason = run.case("TxRxTest %scenario=many-to-one")["fail_reason"]
    link = rf"{re.escape(HOST)}->{re.escape(HOST)} from transmitter [01]"
    want = (rf"failed to meet reference\(s\): {re.escape(HOST)} \(many-to-one, stream {link}\): "
            r"stream_gbps [\d.]+ Gbps is 9\d(\.\d+)? % below its reference 1000 "
            r"\(lower bound -5 %\)")
    assert re.search(want, reason), reason
    # both streams judged (one line each, no duplicate for the slowest = the headline)
    assert len(re.findall(r"stream_gbps [\d.]+ Gbps is", reason)) == 2, reason
    # ReFrame's own wording of the headline figure is kept
    assert re.search(r"stream_gbps=[\d.e+-]+ Gbps, expected 1000 \(l=950", reason), reason
    perflog = next((tmp_path / "run" / "perflogs").rglob("TxRxTest.log")).read_text()
    name = re.sub(r"[^A-Za-z0-9_]+", "_", HOST).strip("_")
    for var in (f"stream_{name}_to_{name}_tx0_gbps", f"stream_{name}_to_{name}_tx1_gbps",
                f"tx_{name}_tx1_gbps", f"node_{name}_rx_gbps"):
        assert var in perflog, var
    assert "rx0_tx" not in perflog


def test_rdma_runs_on_local_only_when_the_simulated_provider_is_asked(tmp_path):
    rdma = M2O.format(method="rdma")
    # by default the rdma cases need +rdma: local (no NIC) neither lists nor runs them
    default = run_reframe(["--system", "local", "-l", "-n", rdma], tmp_path / "default",
                          timeout=300)
    assert default.returncode == 0, default.output[-3000:]
    assert "Found 0 check(s)" in default.output, default.output[-3000:]

    sim = run_reframe(["--system", "local", "-r", "-n", rdma, *SIM, "--keep-stage-files"],
                      tmp_path / "sim", timeout=300)
    assert sim.returncode == 0, sim.output[-4000:]
    case = sim.case("TxRxTest %scenario=many-to-one %span=one %method=rdma")
    assert case["result"] == "pass"
    assert "simulated verbs provider" in case["descr"] and case["verbs"] == "sim"
    assert set(case["perfvalues"]) and all(":sim_" in k for k in case["perfvalues"])
    out = sim.output
    assert re.search(r"P: sim_stream_gbps: [\d.e+-]+ Gbps", out), out[-3000:]
    assert "P: stream_gbps" not in out  # every figure says it was simulated
    script = sim.job_script("TxRxTest %scenario=many-to-one %span=one %method=rdma")
    assert "export FABRICTEST_VERBS=sim" in script
    assert f"export FABRICTEST_VERBS_SIM_DIR={case['stagedir']}" in script
    assert "--method rdma" in script and "--nmsg 3000" in script
    stdout = (ROOT / case["stagedir"] / "rfm_job.out").read_text()
    assert "verbs provider is simulated" in stdout


def test_simulated_run_that_loses_messages_fails_naming_the_loss(tmp_path):
    run = run_reframe(["--system", "local", "-r", "-n", M2O.format(method="rdma"), *SIM],
                      tmp_path / "drop", timeout=300,
                      env={"FABRICTEST_VERBS_SIM_FAULTS": "drop=0.01@1"})
    assert run.returncode != 0, run.output[-3000:]
    reason = run.case("TxRxTest %scenario=many-to-one %span=one %method=rdma")["fail_reason"]
    # rank 1 is transmitter 0: only its stream loses messages, and the reason says which
    assert re.search(rf"stream {re.escape(HOST)}->{re.escape(HOST)} from transmitter 0: "
                     r"received \d+ of 3000, loss rate 0\.0", reason), reason
    assert "from transmitter 1:" not in reason, reason


def test_tool_bound_run_fails_as_tool_bound_not_as_a_slow_link(tmp_path):
    # 8-byte messages against a declared 100 Gbps: 0.64 ns per message, which txrx cannot do;
    # the figures measure the tool, and the test says so instead of judging the link
    case = M2O.format(method="mpi")
    run = run_reframe(["--system", "local", "-r", "-n", case, "-S", "TxRxTest.msg_size=8",
                       "-S", "TxRxTest.nmsg=2000", "-S", "TxRxTest.txrx_line_rate=100"],
                      tmp_path, timeout=300)
    assert run.returncode != 0, run.output[-4000:]
    reason = run.case("TxRxTest %scenario=many-to-one")["fail_reason"]
    us = r"[\d.e+-]+ us"
    assert re.search(rf"tool-bound, not judged against the link: txrx's own time per message "
                     rf"\((?=[^)]*receiver 0 {us})[^)]*\) is above the 0\.00064 us that 100 Gbps "
                     r"allows at 8 B, so the stream rates \([\d.e+-]+, [\d.e+-]+ Gbps\) measure "
                     r"the tool", reason), reason
    assert "--line-rate 100.0" in run.job_script(case)

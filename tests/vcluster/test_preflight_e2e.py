"""Stage 1 on the vcluster, end to end: 4 nodes on 2 switches with real LLDP (lldpd on every
node and switch port), algorithmic MACs, fabric addresses and names, and a cabling inventory
(`vcluster up --preflight`); then Slurm's health check (`--health-check 3`).

1. Healthy: `srun -N4 fabric-health ...` passes on every node, 10 runs of 10.
2. Each fault fails its checks on the node it was put on, naming it, and only there:
   `swap-cable node01 node03` (lldp and mac on both), `set-mac node02` (mac), `drop-ip node03`
   (ip and both name checks), `bad-dns node04` (both name checks); `restore` makes them pass.
3. The acceptance order with ReFrame: `-t preflight` fails NicHealthTest naming node04 (its
   bad name), then a paired tx/rx test leaves node04 out (`--exclude`, said in the run's
   output) and a case that needs all 4 nodes is refused before it is submitted.
4. The cluster again with `--health-check 3`: no node is drained while healthy; a wrong MAC
   drains its node with fabric-health's line as the reason, and `restore` brings it back.

One module, two clusters in turn under the vcluster lock; about 2 minutes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vcluster_session import env_of, held_cluster, vcluster

from fabrictest.parsers.health import missing, parse_health
from fabrictest.vcluster import preflight_plan as pp
from fabrictest.vcluster.plan import Plan

pytestmark = [pytest.mark.vcluster, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
NODES = ["node01", "node02", "node03", "node04"]
UP = ["--nodes", "4", "--switches", "2", "--preflight"]


def options(state: Path) -> list[str]:
    return pp.check_options(Plan.from_json(json.loads((state / "cluster.json").read_text())))


def check(state: Path, env: dict, nodes: list[str] = NODES, whole: bool = True) -> dict:
    """`srun fabric-health` on ``nodes``: {node: {check: (ok, detail)}}; an output that is not
    whole fails the test (``whole``), or gives {} (a step the test waits out)."""
    cmd = ["srun", "-p", "vc", f"-N{len(nodes)}", "--ntasks-per-node=1", f"-w{','.join(nodes)}",
           "--time=2", str(BIN / "fabric-health"), *options(state)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    try:
        rep = parse_health(proc.stdout)
        problems = missing(rep, len(nodes))
    except ValueError as err:
        problems = [str(err)]
    if problems:
        assert not whole, f"{problems}: {proc.stdout}{proc.stderr}"
        return {}
    out: dict[str, dict] = {}
    for r in rep.results:
        out.setdefault(r.node, {})[r.check] = (r.ok, r.detail)
    return out


def failing(found: dict) -> dict[str, list[str]]:
    return {n: sorted(c for c, (ok, _) in checks.items() if not ok)
            for n, checks in found.items() if any(not ok for ok, _ in checks.values())}


def until(what: str, predicate, timeout: float = 30.0, interval: float = 1.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:g} s")
        time.sleep(interval)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not all(shutil.which(c) or Path("/usr/sbin", c).exists() for c in ("lldpd", "lldpcli")):
        pytest.skip("lldpd not found (scripts/install.sh as root installs it)")
    state = tmp_path_factory.mktemp("vc-preflight") / "state"
    with held_cluster(state, *UP, wait_s=540, up_timeout=300):
        yield state, env_of(state)


def test_healthy_cluster_passes_ten_of_ten(cluster):
    state, env = cluster
    passed = 0
    for _ in range(10):
        found = check(state, env)
        assert failing(found) == {}, found
        assert set(found) == set(NODES)
        passed += 1
    assert passed == 10
    ok, detail = found["node03"]["lldp"]
    assert ok and detail == "found sw2 port p1, expected sw2 port p1 (inventory line 4)"


@pytest.mark.parametrize("fault,args,expected", [
    ("swap-cable", ["node01", "node03"], {"node01": ["lldp", "mac"], "node03": ["lldp", "mac"]}),
    ("set-mac", ["node02", "02:00:00:00:00:99"], {"node02": ["mac"]}),
    ("drop-ip", ["node03"], {"node03": ["ip", "name_forward", "name_reverse"]}),
    ("bad-dns", ["node04"], {"node04": ["name_forward", "name_reverse"]}),
])
def test_each_fault_fails_on_its_node_only(cluster, fault, args, expected):
    state, env = cluster
    vcluster(state, fault, *args)
    try:
        # a moved cable shows once the new port's lldpd has spoken (about a second)
        found = until(f"{fault}: {expected}", lambda: (
            lambda f: f if f and failing(f) == expected else None)(
                check(state, env, whole=False)), timeout=60)
    finally:
        vcluster(state, "restore")
    if fault == "swap-cable":
        assert found["node01"]["lldp"][1] == ("found sw2 port p1, expected sw1 port p1 "
                                              "(inventory line 2)")
        assert found["node01"]["mac"][1].startswith("found 02:00:00:00:00:41, expected "
                                                    "02:00:00:00:00:81")
    if fault == "bad-dns":
        assert found["node04"]["name_forward"][1] == ("node04-hsn0 -> 10.200.1.254, expected "
                                                      "10.200.1.14")
    assert until("restored", lambda: (lambda f: f and failing(f) == {})(
        check(state, env, whole=False)), timeout=60)


def test_tcp_loopback_runs_txrx_on_the_node(cluster):
    """`--loopback` without RDMA: two txrx ranks on the node over TCP pinned to hsn0 (the
    kernel's loopback: the line says so), inside a Slurm step."""
    state, env = cluster
    cmd = ["srun", "-p", "vc", "-N1", "-wnode02", "--time=3", str(BIN / "fabric-health"),
           "--no-rdma", "--no-arp", "--nic", pp.NIC, "--loopback", "0.5", "--port-rate", "0.2"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
    [line] = [ln for ln in proc.stdout.splitlines() if " loopback: " in ln]
    m = re.match(r"HEALTH node02 hsn0/- loopback: PASS found ([\d.]+) Gb/s, expected >= 0\.1 Gb/s "
                 r"\(0\.5 x 0\.2 Gb/s; txrx over TCP on hsn0: the kernel's loopback, not the "
                 r"wire\)$", line)
    assert m and float(m.group(1)) > 0.1, proc.stdout + proc.stderr


def _reframe(env: dict, prefix: Path, *args: str) -> tuple[int, str]:
    cmd = ["reframe", "-c", str(ROOT / "reframe_tests"), "-r", "--system", "vcluster",
           "--prefix", str(prefix), "-S", "size_profile=quick", "-S", "TxRxTest.nmsg=2000",
           *args]
    env = {**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
           "RFM_CONFIG_FILES": str(ROOT / "config" / "reframe" / "settings.py"),
           "RFM_REFERENCE_PREFIX": str(ROOT / "reference"), "RFM_COLORIZE": "n",
           "FABRICTEST_RESULTS_DB": str(prefix / "results.db"),
           "FABRICTEST_RFM_LOG": str(prefix / "reframe.log")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=400,
                          start_new_session=True)
    return proc.returncode, proc.stdout + proc.stderr


def test_acceptance_order_leaves_a_failed_node_out(cluster, tmp_path):
    state, env = cluster
    vcluster(state, "bad-dns", "node04")
    try:
        rc, out = _reframe(env, tmp_path, "-t", "preflight")
        assert rc != 0 and "NicHealthTest" in out
        assert re.search(r"node04 hsn0/- name_forward: node04-hsn0 -> 10\.200\.1\.254", out), \
            out[-3000:]
        record = json.loads((tmp_path / "output/vcluster/nodes/stage1.json").read_text())
        assert record["nodes"]["node04"].startswith("hsn0/- name_forward: ")
        assert [n for n, v in record["nodes"].items() if v == "pass"] == NODES[:3]
        rc, out = _reframe(env, tmp_path, "-n",
                           "TxRxTest%scenario=paired%span=one%method=mpi%buffer=host",
                           "-n", "TxRxTest%scenario=paired%span=many%method=mpi%buffer=host")
    finally:
        vcluster(state, "restore")
    assert "left out node04: hsn0/- name_forward" in out, out[-3000:]
    scripts = [*tmp_path.glob("stage/vcluster/nodes/*/TxRxTest_*/rfm_job.sh"),
               *tmp_path.glob("output/vcluster/nodes/*/TxRxTest_*/rfm_job.sh")]
    assert any("#SBATCH --exclude=node04" in s.read_text() for s in scripts), scripts
    assert re.search(r"this case needs 4 nodes and 3 passed \(node04: hsn0/- name_forward",
                     out), out[-3000:]
    assert re.search(r"\[\s+OK \] .*%scenario=paired %span=one", out), out[-3000:]


def test_slurm_health_check_drains_and_returns(cluster):
    state, env = cluster
    vcluster(state, "down")
    up = vcluster(state, "up", *UP, "--health-check", "3", timeout=300, check=False)
    assert up.returncode == 0, up.stderr
    env = env_of(state)

    def slurm() -> dict[str, tuple[str, str]]:
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N|%T|%E"], capture_output=True,
                             text=True, env=env, timeout=30).stdout
        return {n: (s, r) for n, s, r in (line.split("|", 2) for line in out.splitlines())}

    time.sleep(8)  # two runs of the health check on a healthy cluster
    assert {n: s for n, (s, _) in slurm().items()} == dict.fromkeys(NODES, "idle")
    vcluster(state, "set-mac", "node02", "02:00:00:00:00:99")
    # within seconds on a quiet machine; minutes when CI loads its 2 cores 8-fold
    drained = until("node02 drained", lambda: (lambda s: s if "drain" in s["node02"][0]
                                               else None)(slurm()), timeout=120)
    assert drained["node02"][1] == (
        "fabric-health: hsn0/- mac: found 02:00:00:00:00:99, expected 02:00:00:00:00:42 "
        "(Slingshot AMA of sw1 port p2, 02:fe:00:00:00:42)")
    assert {n: s for n, (s, _) in drained.items() if n != "node02"} == dict.fromkeys(
        ["node01", "node03", "node04"], "idle")
    # fixed (its AMA again), not resumed by hand: the health check resumes it
    vcluster(state, "set-mac", "node02", "02:00:00:00:00:42")
    until("node02 back", lambda: slurm()["node02"][0] == "idle", timeout=120)
    log = (state / "log" / "healthcheck-node02.log").read_text()
    assert "slurm: resumed (was: fabric-health: hsn0/- mac: found 02:00:00:00:00:99" in log \
        or "slurm: unchanged: IDLE" in log, log
    assert os.access(state / "etc" / "healthcheck.sh", os.X_OK)

"""Counters around the tests, for real on the vcluster (issue: diagnostics during the
benchmarks). One 4-node cluster (no accounting), the paired tests twice (one pair on
node01-node02, two pairs over the four nodes), three times:

1. healthy: both pass, every node's retransmission figure is under its reference;
2. node03's link flapping (`vcluster flap`) while they run: exactly the test with node03
   fails, naming node03, its eth0 and the number of downs (carrier_changes before -> after);
3. 1 % loss on node03 (`vcluster degrade node03 --loss 1`): node03's retransmission figure
   is far above the other nodes' and fails its reference; the pair without node03 passes;
4. node01's link flapping once *between* two runs: both pass, and `fabric-report counters`
   over the two run reports names node01 and the gap between the tests.

Takes the vcluster lock the other vcluster tests take; skipped with the reason where the
vcluster cannot run (as test_e2e.py).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from vcluster.test_e2e import ROOT, Suite, summary
from vcluster_session import held_cluster, vcluster

from fabrictest import references

pytestmark = [pytest.mark.vcluster, pytest.mark.slow]

ONE = "TxRxTest%scenario=paired%span=one%method=mpi%buffer=host"
MANY = "TxRxTest%scenario=paired%span=many%method=mpi%buffer=host"
# the base's counter figures, printed by ReFrame as 'P: counters_node03_RetransSegs: 687 count'
FIGURE_RE = re.compile(r"P: counters_(node\d+)_RetransSegs: (\d+) count")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("vcc")
    work = base / "work"
    work.mkdir()
    with held_cluster(base / "state", "--nodes", "4") as state:
        yield Suite(state, work)


def retrans_ceiling() -> float:
    """The largest retransmission count per node the paired tests' reference accepts."""
    ref_file = references.load(ROOT / "reference" / "vcluster.yaml")
    ref = references.lookup(ref_file, "TxRxTest", "vcluster", {
        "scenario": "paired", "method": "mpi", "buffer": "host"})["counters_RetransSegs"]
    return ref.bounds()[1]


def figures(result: dict) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for node, value in FIGURE_RE.findall(result["out"]):
        out.setdefault(node, []).append(int(value))
    return out


def test_healthy_runs_raise_no_alarm(cluster):
    res = cluster.run("counters-healthy", [ONE, MANY])
    assert {n: tc["result"] for n, tc in res["cases"].items() if "TxRx" in n} == {
        n: "pass" for n in res["cases"] if "TxRx" in n}, summary(res)
    figs = figures(res)
    assert set(figs) == {"node01", "node02", "node03", "node04"}, res["out"][-2000:]
    assert max(max(v) for v in figs.values()) <= retrans_ceiling()


def test_flapping_node03_fails_exactly_its_test(cluster):
    flapper = subprocess.Popen(
        [sys.executable, "-m", "fabrictest.vcluster.cli", "--state-dir", str(cluster.state),
         "flap", "node03", "--times", "200", "--interval", "1.5"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        res = cluster.run("counters-flap", [ONE, MANY])
    finally:
        flapper.terminate()
        flapper.wait(timeout=30)
        vcluster(cluster.state, "restore", "node03")
    cases = {n: tc for n, tc in res["cases"].items() if "TxRx" in n}
    one = next(tc for n, tc in cases.items() if "span=one" in n)
    many = next(tc for n, tc in cases.items() if "span=many" in n)
    assert one["result"] == "pass", summary(res)
    assert many["result"] == "fail", summary(res)
    reason = many["fail_reason"] or ""
    m = re.search(r"node03 eth0: link went down (\d+) times? during the test "
                  r"\(carrier_changes (\d+) -> (\d+)\)", reason)
    assert m, reason
    downs, before, after = map(int, m.groups())
    assert downs >= 1 and after - before in (2 * downs, 2 * downs - 1)
    assert "node01" not in reason and "node02" not in reason and "node04" not in reason


def test_loss_on_node03_shows_in_its_retransmissions(cluster):
    vcluster(cluster.state, "degrade", "node03", "--loss", "1")
    try:
        res = cluster.run("counters-loss", [ONE, MANY])
    finally:
        vcluster(cluster.state, "restore", "node03")
    figs = figures(res)
    node03 = max(figs["node03"])
    others = max(max(v) for n, v in figs.items() if n != "node03")
    assert node03 > retrans_ceiling() and node03 > 5 * max(others, 1), figs
    cases = {n: tc for n, tc in res["cases"].items() if "TxRx" in n}
    one = next(tc for n, tc in cases.items() if "span=one" in n)
    many = next(tc for n, tc in cases.items() if "span=many" in n)
    assert one["result"] == "pass", summary(res)
    assert many["result"] == "fail" and "counters_RetransSegs" in (many["fail_reason"] or ""), (
        summary(res))


def test_a_flap_between_runs_shows_only_in_the_whole_run(cluster):
    """node01's link goes down and up between two runs of the one-pair test: both runs pass
    (each test's own span is clean), and `fabric-report counters` over the two run reports
    names node01 and the gap; over the first run alone it is healthy."""
    first = cluster.run("counters-between-1", [ONE])
    vcluster(cluster.state, "flap", "node01", "--times", "1")
    second = cluster.run("counters-between-2", [ONE])
    for res in (first, second):
        assert [tc["result"] for n, tc in res["cases"].items() if "TxRx" in n] == ["pass"], (
            summary(res))

    def counters(*names):
        argv = [a for n in names for a in ("--report", str(cluster.workdir / f"{n}.json"))]
        return subprocess.run([sys.executable, "-m", "fabrictest.report.cli", "counters", *argv,
                               "--reference-dir", str(ROOT / "reference")],
                              capture_output=True, text=True, timeout=120, cwd=ROOT)

    alone = counters("counters-between-1")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "NODE vcluster:node01: 1 test" in alone.stdout
    both = counters("counters-between-1", "counters-between-2")
    assert both.returncode == 1, both.stdout + both.stderr
    assert re.search(r"FAIL vcluster:node01 eth0: link went down 1 time during no test "
                     r"\(between TxRxTest.* and TxRxTest.*\) \(carrier_changes \d+ -> \d+\)",
                     both.stdout), both.stdout
    assert "NODE vcluster:node01: 2 tests" in both.stdout
    assert "FAIL vcluster:node02" not in both.stdout

"""A reference indexed by a shaping variable is looked up by the value it took in the run:
BisectionTest's `num_nodes` is None (the partition's nodes) and resolves to 1 on `local`, so a
file indexed by `num_nodes` gives the run the figures at 1 and refuses it where it holds
none at 1 (on `vcluster` the entries at 4 and 16 nodes, issue 42). Real runs of
`reframe --system local -n BisectionTest` against a copy of the references."""

from __future__ import annotations

import shutil

import pytest
from _rfm import ROOT, run_reframe

pytestmark = [pytest.mark.slow, pytest.mark.mpi]

LOCAL_INDEX = "BisectionTest:\n  $index: ['$system']\n"


def _references(tmp, nodes: int):
    ref = tmp / "reference"
    shutil.copytree(ROOT / "reference", ref)
    text = (ref / "local.yaml").read_text()
    assert LOCAL_INDEX in text, "reference/local.yaml's BisectionTest changed: update the test"
    # local's bisection figures are informational (no entry, a reason): here they are judged
    informational = next(ln for ln in text.splitlines(keepends=True)
                         if ln.startswith("      informational:") and "0.25-19.5 GB/s" in ln)
    text = text.replace(informational, "")
    (ref / "local.yaml").write_text(text.replace(LOCAL_INDEX, (
        "BisectionTest:\n  $index: ['$system', 'num_nodes']\n  local:\n"
        f"    {nodes}:\n      node_bw: [100.0, -0.5, null, MB/s]\n"
        "      aggregate_bw: [0.1, -0.5, null, GB/s]\n")))
    return ref


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for nodes in (1, 2):
        tmp = tmp_path_factory.mktemp(f"index-{nodes}")
        out[nodes] = run_reframe(
            ["--system", "local", "-r", "-n", "BisectionTest"], tmp / "run", timeout=300,
            env={"RFM_REFERENCE_PREFIX": str(_references(tmp, nodes))})
    return out


def test_the_entry_at_the_nodes_it_ran_on_is_the_one_judged(runs):
    case = runs[1].case("BisectionTest")
    assert case["result"] == "pass", (case.get("fail_reason"), runs[1].output[-2000:])
    refs = {k.split(":")[-1]: v[1] for k, v in case["perfvalues"].items()}
    assert refs["node_bw"] == 100.0 and refs["aggregate_bw"] == 0.1


def test_no_entry_at_those_nodes_is_refused_naming_them(runs):
    case = runs[2].case("BisectionTest")
    assert case["result"] == "fail"
    assert "has no reference for $system=local, num_nodes=1" in case["fail_reason"]

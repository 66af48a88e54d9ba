"""Real sweeps of the vcluster's fat tree and dragonfly (tests/data/topology/vcluster-sweeps,
bench/bench_fabric_shapes.py): the sweep's own verdict and `fabric-report attribute --sweep`
name the degraded link, the degraded node, or nothing, in 5 of 5 runs of each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fabrictest.report.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "topology"
SWEEPS = DATA / "vcluster-sweeps"
TOPOLOGY = {
    "fat-tree": ["--topology", str(DATA / "scontrol-show-topology-vcluster-fat-tree-4x2.txt"),
                 "--routing", "dmodk"],
    "dragonfly": ["--topology", str(SWEEPS / "dragonfly-2x2.fabric.topology")],
}
WANT = {
    ("fat-tree", "degraded-link"): ("suspect: uplink leaf1<->spine1: ",) * 2,
    ("dragonfly", "degraded-link"): ("suspect: global link g1s1<->g2s1: ",) * 2,
    # (the sweep's verdict must start so; attribute's first line must match)
    # a healthy sweep may hold one run below its cut (dragonfly-healthy-1: node07->node08 at
    # 0.72x, its nodes in 5 passing runs each): nothing is named
    ("fat-tree", "healthy"): ("suspects: none", "nothing failed|one failed case"),
    ("dragonfly", "healthy"): ("suspects: none", "nothing failed|one failed case"),
    ("fat-tree", "degraded-node"): ("suspect: node03 send ", "suspect: node03: shared by all"),
    ("dragonfly", "degraded-node"): ("suspect: node03 send ", "suspect: node03: shared by all"),
}


@pytest.mark.parametrize("shape, case", sorted(WANT))
def test_five_of_five(shape, case, capsys):
    sweep_line, attribute_line = WANT[(shape, case)]
    files = sorted(SWEEPS.glob(f"{shape}-{case}-*.json"))
    assert len(files) == 5
    for path in files:
        verdict = json.loads(path.read_text())["verdict"]
        assert len(verdict) == 1 and verdict[0].startswith(sweep_line), (path.name, verdict)
        rc = main(["attribute", "--sweep", str(path), *TOPOLOGY[shape]])
        out = capsys.readouterr().out.splitlines()
        assert re.match(attribute_line, out[0]), (path.name, out[:3])
        assert rc == (0 if out[0].startswith("nothing failed") else 1)

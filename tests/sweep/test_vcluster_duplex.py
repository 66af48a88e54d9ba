"""Full duplex on the real vcluster: 4 nodes at 200mbit, node03 at 100mbit both ways, the sweep
with one step per round and direction (`--duplex half`, the default) and with both directions
of every pair in one step (`--duplex full`), side by side: job steps, per-run figures,
verdict. The vcluster's links are veth pairs shaped by tc on each side's egress: full duplex,
each direction its own 200mbit. The figures are printed (pytest -s) for docs/sweep.md.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from vcluster_session import env_of, held_cluster, vcluster

pytestmark = [pytest.mark.vcluster, pytest.mark.slow]

BIN = Path(sys.executable).parent


def sweep(env: dict, tmp_path: Path, duplex: str):
    out = tmp_path / f"{duplex}.json"
    cmd = [
        "salloc", "--partition=vc", "--nodes=4", "--exclusive", "--no-kill", "--time=15",
        f"--job-name=sweep-{duplex}", str(BIN / "fabric-sweep"), "--launcher", "slurm",
        "--duplex", duplex, "--seed", "7", "--nmsg", "300", "--pair-timeout", "40",
        "--no-reference", "--json", str(out),
    ]  # fmt: skip
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900,
                          cwd=tmp_path)
    secs = time.monotonic() - t0
    (tmp_path / f"{duplex}.log").write_text(proc.stdout + "\n--- stderr\n" + proc.stderr)
    data = json.loads(out.read_text()) if out.exists() else {}
    m = re.search(r"^fabric-sweep: (\d+) job steps \(", proc.stderr, re.M)
    assert m, proc.stderr
    return proc.returncode, proc.stdout, int(m.group(1)), data, secs


def geomean(values) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def test_full_duplex_names_the_same_node_with_the_same_figures_in_fewer_steps(
        tmp_path, tmp_path_factory):
    state = tmp_path_factory.mktemp("vc-duplex") / "state"
    got = {}
    with held_cluster(state, "--nodes", "4", wait_s=540, up_timeout=400):
        env = env_of(state)
        vcluster(state, "degrade", "node03", "100mbit")
        for duplex in ("half", "full"):
            rc, out, steps, data, secs = sweep(env, tmp_path, duplex)
            runs = data.get("pairs", [])
            slow = [p["value"] for p in runs if "node03" in (p["src"], p["dst"]) and p["value"]]
            fast = [p["value"] for p in runs if "node03" not in (p["src"], p["dst"])
                    and p["value"]]
            got[duplex] = dict(rc=rc, out=out, steps=steps, data=data, slow=slow, fast=fast)
            print(f"\n[{duplex}] exit {rc}, {steps} job steps, {len(data.get('rounds', []))} "
                  f"rounds, {secs:.1f} s; node03's runs {geomean(slow):.4f} Gbps "
                  f"({len(slow)}), the others {geomean(fast):.4f} Gbps ({len(fast)}); "
                  + " | ".join(ln for ln in out.splitlines() if ln.startswith("suspect")))
    for mode in got.values():
        assert mode["rc"] == 1, mode["out"]
        assert [s["node"] for s in mode["data"]["suspects"]] == ["node03"], mode["out"]
        assert all(p["status"] == "ok" for p in mode["data"]["pairs"]), mode["out"]
        assert mode["steps"] <= 2 * len(mode["data"]["rounds"]) + 2
    half, full = got["half"], got["full"]
    assert full["steps"] < half["steps"]
    # each direction has its own 200mbit: the figures within 15 % (measured: full 7 % lower,
    # 0.930-0.934x in 2 runs: each stream's TCP acks queue behind the other direction's data
    # in the same shaped egress)
    for key in ("slow", "fast"):
        assert abs(geomean(full[key]) / geomean(half[key]) - 1) < 0.15, (key, half, full)

"""The plan's job list is what `reframe --dry-run` submits: for the vcluster (its 4-node
default, as ``tests/reframe/golden/job_scripts-vcluster.json`` records it, held to today's dry
run by ``tests/reframe/test_job_scripts_golden.py``), every job script recorded there is a job
of the plan, with the same nodes, node list and time limit, and no other. With the recorded
vcluster acceptance's run reports (``--from-run``) the cases they ran are planned with their
measured run times, the others with their time limits."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from fabrictest.plan.dry_run import read_job_script
from fabrictest.plan.jobs import parse_time

# one dry run of the vcluster's 17 cases: 10-20 s (the brief's "what reframe --dry-run would
# submit" needs the real one)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "reframe" / "golden" / "job_scripts-vcluster.json"
RUNS = ROOT / "tests" / "report" / "data" / "acceptance" / "healthy"


def test_the_plan_holds_the_jobs_the_dry_run_submits(tmp_path):
    state = tmp_path / "vc"
    state.mkdir()
    out = tmp_path / "plan.json"
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "OSU_HOME": "",
           "IMB_HOME": "", "VCLUSTER_STATE_DIR": str(state), "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "fabrictest.plan.cli", "--system", "vcluster",
                           "--json", str(out),
                           *(a for i in range(3) for a in ("--from-run", str(RUNS / f"run{i}.json")))],
                          cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(out.read_text())
    want = {}
    for key, script in json.loads(GOLDEN.read_text()).items():
        name, _, rest = key.partition(" @")
        if not rest.endswith(" rfm_job.sh"):
            continue
        options, snapshots = read_job_script(script)
        if not options:  # no #SBATCH: a job ReFrame runs itself (AllToManyScalingTest)
            want[name] = (0, "local (no allocation)", 1200.0, snapshots)
            continue
        nodes = int(options.get("nodes") or math.ceil(int(options["ntasks"])
                                                      / int(options["ntasks-per-node"])))
        want[name] = (nodes, options.get("nodelist", f"any {nodes}"),
                      parse_time(options["time"]), snapshots)
    got = {j["job"]: (j["nodes"], j["node_set"], j["limit_s"], j["counter_snapshots"])
           for j in plan["jobs"]}
    assert got == want
    assert plan["total"]["jobs"] == len(want) == 16  # and FabricBinaries builds, submits nothing
    # the stages in the notes' order, and the text says what the JSON says
    steps = [j["step"] for j in plan["jobs"]]
    assert steps == sorted(steps, key=["preflight", "edge", "local", "global", "bisection",
                                       "sweep"].index)
    assert f"total: {len(want)} jobs" in proc.stdout
    source = {j["job"]: (j["source"], round(j["seconds"], 1)) for j in plan["jobs"]}
    assert "NicHealthTest" not in source  # the 4-node default has no --preflight fabric NIC
    assert source["SweepTest %method=mpi"] == ("measured", 15.0)
    assert source["BisectionTest"] == ("measured", 15.0)
    assert sum(s == "measured" for s, _ in source.values()) == 6
    assert source["AllToManyTest %iterations=2"] == ("time limit", 1200.0)
    assert source["AllToManyScalingTest"] == ("local (no job)", 0.0)


def test_a_generated_topology_reaches_the_families_node_sets(tmp_path):
    """Over ``--generate`` the families place their cases on the generated machine: the node
    sets they name are the ones ``derive_node_sets`` gives for it, and the whole-machine cases
    take all of its nodes (the partition's own 64 are replaced by the topology's 16)."""
    from fabrictest.parsers.hostlists import compress
    from fabrictest.parsers.node_sets import derive_node_sets
    from fabrictest.parsers.topology import parse_any_topology
    from fabrictest.plan.generate import topology_conf

    spec = "dragonfly:groups=2,switches=2,nodes=4"
    sets = derive_node_sets(parse_any_topology(topology_conf(spec))).sets
    out = tmp_path / "plan.json"
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "OSU_HOME": "",
           "IMB_HOME": "", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "fabrictest.plan.cli", "--system", "slingshot",
                           "--generate", spec, "--json", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(out.read_text())
    jobs = {j["job"]: j for j in plan["jobs"]}
    assert plan["nodes"] == 16
    for scope, step in (("switch", "edge"), ("group", "local"), ("global", "global")):
        job = jobs[f"OsuMbwMrTest %scope={scope} %ranks_per_node=1"]
        assert (job["node_set"], job["nodes"], job["step"]) == (
            compress(sets[scope]), len(sets[scope]), step)
    assert jobs["BisectionTest"]["node_set"] == compress(sets["bisection"])
    assert jobs["NicHealthTest"]["nodes"] == 16 and jobs["NicHealthTest"]["stage"] == 1
    assert jobs["SweepTest %method=mpi"]["nodes"] == 16
    # the rounds its job script gives fabric-sweep (--rounds 2), 8 pairs each, 10 s a run
    from fabrictest.plan.minutes import sweep_seconds

    sweep = jobs["SweepTest %method=mpi"]
    assert (sweep["source"], sweep["seconds"]) == ("sweep cost", sweep_seconds(16, 2, 10.0))
    assert max(j["nodes"] for j in plan["jobs"]) == 16

"""The plan's pure arithmetic: Slurm times, a job's step, its expected seconds and their
source, the packing onto nodes, node-hours and what dominates."""

from __future__ import annotations

import pytest

from fabrictest.parsers.node_sets import derive_node_sets
from fabrictest.parsers.topology import parse_any_topology
from fabrictest.plan.dry_run import Case, read_job_script
from fabrictest.plan.jobs import follow_dependencies, job_of, ordered, parse_time
from fabrictest.plan.minutes import SNAPSHOT_S, counters_seconds, expected, sweep_seconds
from fabrictest.plan.output import Plan, text
from fabrictest.plan.schedule import schedule
from fabrictest.sweep import cost

TOPO = "SwitchName=s1 Nodes=n[1-4]\nSwitchName=s2 Nodes=n[5-8]\nSwitchName=top Switches=s[1-2]\n"
SETS = derive_node_sets(parse_any_topology(TOPO))
NODES = [f"n{i}" for i in range(1, 9)]


def case(name, nodes=2, nodelist=None, family=None, time="0:20:0", tags=(), snapshots=2):
    sbatch = {"nodes": str(nodes), "time": time}
    if nodelist:
        sbatch["nodelist"] = nodelist
    return Case(name=name, family=family or name.split()[0], tags=list(tags), partition="p",
                time_limit_s=1200.0, num_tasks=nodes, tasks_per_node=1, sbatch=sbatch,
                counter_snapshots=snapshots)


@pytest.mark.parametrize("text, seconds", [
    ("20", 1200), ("20:30", 1230), ("1:00:00", 3600), ("0:20:0", 1200), ("2-0", 172800),
    ("1-2:30", 95400), ("1-0:0:10", 86410), ("x", None), ("1:2:3:4", None), ("-3", None),
])
def test_slurm_times(text, seconds):
    assert parse_time(text) == seconds


def test_a_job_script_gives_its_options_and_snapshots():
    script = ("#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --exclusive\n#SBATCH --time=0:5:0\n"
              "timeout 120 srun fabric-health counters --out-dir counters/before\nsrun x\n"
              "timeout 120 srun fabric-health counters --out-dir counters/after\n")
    options, snapshots = read_job_script(script)
    assert options == {"nodes": "4", "exclusive": "", "time": "0:5:0"} and snapshots == 2


@pytest.mark.parametrize("c, step", [
    (case("OsuMbwMrTest %scope=switch", 4, "n[1-4]"), "edge"),
    (case("OsuMbwMrTest %scope=group", 4, "n[5-8]"), "global"),  # s2 is not the first group
    (case("OsuMbwMrTest %scope=global", 8, "n[1-8]"), "global"),
    (case("TxRxTest %scenario=paired", 2), "edge"),  # Slurm chooses: fits in a switch
    (case("TxRxTest %span=many", 6), "global"),
    (case("NicHealthTest", 8, tags=("preflight",)), "preflight"),
    (case("BisectionTest", 8, "n[1-8]"), "bisection"),
    (case("SweepTest %method=mpi", 8), "sweep"),
])
def test_the_step_of_a_job(c, step):
    assert job_of(c, SETS).step == step


def test_the_steps_follow_the_notes_order():
    jobs = [job_of(c, SETS) for c in (case("SweepTest"), case("BisectionTest", 8, "n[1-8]"),
                                      case("A", 8), case("B", 2, "n[1-2]"),
                                      case("NicHealthTest", 8, tags=("preflight",)))]
    assert [j.step for j in ordered(jobs)] == ["preflight", "edge", "global", "bisection",
                                               "sweep"]


def test_expected_seconds_and_their_source():
    limited = job_of(case("A", 2, time="0:10:0"), SETS)
    assert expected(limited, {}, 10.0, 2).seconds == 600
    assert expected(limited, {}, 10.0, 2).source == "time limit"
    got = expected(limited, {"A": 42.0}, 10.0, 2)
    assert (got.seconds, got.source, got.over_limit) == (42.0, "measured", False)
    assert expected(limited, {"A": 700.0}, 10.0, 2).over_limit
    sweep = job_of(case("SweepTest %method=mpi", 8), SETS)
    got = expected(sweep, {}, 10.0, 2)
    assert got.source == "sweep cost"
    assert got.seconds == cost.per_round([4, 4], 10.0).seconds == sweep_seconds(8, 2, 10.0)
    assert counters_seconds(limited) == 2 * SNAPSHOT_S


def test_jobs_on_the_same_nodes_wait_for_each_other_and_others_run_beside():
    a = job_of(case("A", 4, "n[1-4]"), SETS)
    b = job_of(case("B", 4, "n[1-4]"), SETS)
    c = job_of(case("C", 4), SETS)  # Slurm chooses: the 4 free ones
    slots = schedule([(a, 60.0), (b, 60.0), (c, 60.0)], NODES, max_jobs=8)
    at = {s.job.case.name: (s.start, s.end) for s in slots}
    assert at == {"A": (0, 60), "C": (0, 60), "B": (60, 120)}


def test_max_jobs_and_the_step_barrier():
    jobs = [job_of(case(f"J{i}", 1), SETS) for i in range(4)]
    slots = schedule([(j, 10.0) for j in jobs], NODES, max_jobs=2)
    assert max(s.end for s in slots) == 20
    # a global job starts only after every edge job has ended
    big = job_of(case("G", 6), SETS)
    slots = schedule([(jobs[0], 10.0), (big, 5.0), (jobs[1], 30.0)], NODES, max_jobs=8)
    assert {s.job.case.name: s.start for s in slots}["G"] == 30


def test_a_job_larger_than_the_machine_runs_alone_and_ends():
    huge = job_of(case("H", 20), SETS)
    small = job_of(case("S", 20, "x[1-20]"), SETS)  # names nodes the machine lacks
    slots = schedule([(huge, 10.0), (small, 10.0)], NODES, max_jobs=8)
    assert sorted((s.start, s.end) for s in slots) == [(0, 10), (10, 20)]


def test_node_hours_wall_time_and_what_dominates():
    a = job_of(case("A", 4, "n[1-4]"), SETS)
    g = job_of(case("G", 8, "n[1-8]"), SETS)
    slots = schedule([(a, 1800.0), (g, 3600.0)], NODES, max_jobs=8)
    plan = Plan(system="s", topology="t", nodes=8, dry_run_s=1.0, slots=slots,
                expected={"A": expected(a, {}, 10, 2), "G": expected(g, {}, 10, 2)},
                counters_s={"A": 1.0, "G": 1.0}, unplanned=[])
    assert plan.node_hours() == 4 * 0.5 + 8 * 1.0
    assert plan.wall_s() == 5400
    step, job = plan.dominant()
    assert step["step"] == "global" and job.job.case.name == "G"
    out = text(plan)
    assert "total: 2 jobs, 10.0 node-hours, wall time 1h30 against the goal of 2h00 (fits)" in out


def test_a_local_case_costs_nothing_and_follows_what_it_judges():
    runs = [case(f"AllToManyTest %iterations={i}", 8) for i in (2, 32)]
    for i, c in enumerate(runs):
        c.unique_name = f"AllToManyTest_{i}"
    judge = Case(name="AllToManyScalingTest", family="AllToManyScalingTest", tags=[],
                 partition="p", time_limit_s=1200.0, num_tasks=1, tasks_per_node=None,
                 local=True, unique_name="AllToManyScalingTest",
                 depends_on=["AllToManyTest_0", "AllToManyTest_1", "FabricBinaries_x"])
    jobs = ordered(follow_dependencies([job_of(c, SETS) for c in (judge, *runs)]))
    assert [j.step for j in jobs] == ["global"] * 3
    local = next(j for j in jobs if j.case.local)
    assert (local.nodes, local.node_set()) == (0, "local (no allocation)")
    assert expected(local, {"AllToManyScalingTest": 5.0}, 10.0, 2) == (
        expected(local, {}, 10.0, 2))
    assert expected(local, {}, 10.0, 2).seconds == 0 and \
        expected(local, {}, 10.0, 2).source == "local (no job)"


def test_the_sweep_rounds_come_from_its_job_script():
    from fabrictest.plan.dry_run import sweep_rounds

    line = ("/x/bin/fabric-sweep --launcher slurm --test txrx --method mpi --nmsg 500 "
            "--rounds 3 --max-rounds 8 --json sweep.json\n")
    assert sweep_rounds("#!/bin/bash\n" + line) == 3
    assert sweep_rounds("srun txrx --rounds 5\n") is None  # not the sweep's
    assert sweep_rounds("") is None

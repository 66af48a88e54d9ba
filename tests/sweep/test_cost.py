"""The scheduler's cost of a sweep (sweep/cost.py): launches, waves, MaxStepCount, and the
plan line that prints it beside the rounds (issue 41 item 3)."""

from __future__ import annotations

from fabrictest.sweep import cost
from fabrictest.sweep.core import plan_text
from fabrictest.sweep.simulate import SimulatedRunner


def test_one_step_per_run_pays_every_launch_and_passes_max_step_count():
    # 100,000 nodes: 50,000 pairs a round, 100,000 steps: past 40,000 in the first round
    big = cost.per_run([50_000, 50_000], 10.0, 256)
    assert big.steps == 200_000 and big.over_steps_at == 0
    # slurmctld starts the steps one at a time: at least 2 x pairs launches a round
    assert big.seconds >= 2 * 2 * 50_000 * cost.STEP_LAUNCH_S
    # 1,000 nodes: 2 waves of 256 lanes, each lane two runs with their launches
    small = cost.per_run([500], 10.0, 256)
    assert small.steps == 1000 and small.over_steps_at is None
    assert small.seconds == max(2 * 2 * (10.0 + cost.STEP_LAUNCH_S),
                                1000 * cost.STEP_LAUNCH_S) + cost.ROUND_SYNC_S


def test_one_step_per_round_costs_two_steps_and_a_tree_launch():
    one = cost.per_round([50_000, 50_000, 1_000], 10.0)
    assert one.steps == 6 and one.over_steps_at is None
    # 100,000 nodes: a launch tree of width 50 has 3 levels
    assert one.seconds < 3 * (2 * (10.0 + 3 * cost.STEP_LAUNCH_S) + cost.ROUND_SYNC_S) + 1e-9
    assert one.seconds < cost.per_run([50_000, 50_000, 1_000], 10.0, 256).seconds / 100


def test_the_plan_line_prints_both_launch_models():
    nodes = [f"nid{i:06d}" for i in range(10_000)]
    runner = SimulatedRunner(nodes, max_concurrent=256, run_seconds=10.0)
    text = plan_text(len(nodes), runner, 2, 8)
    assert "estimated wall time 13:20 for the planned rounds" in text
    assert "(20,000 steps) as one step per run" in text
    assert "(4 steps) as one step per round" in text
    assert "past MaxStepCount" not in text
    many = SimulatedRunner([f"n{i}" for i in range(100_000)], max_concurrent=256,
                           run_seconds=10.0)
    assert "(200,000 steps, past MaxStepCount 40,000 in round 0)" in plan_text(
        100_000, many, 2, 8)

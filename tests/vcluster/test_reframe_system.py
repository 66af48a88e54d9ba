"""The ReFrame system `vcluster` (config/reframe/systems/vcluster.py) is data: what `vcluster up`
wrote in the state directory decides it, and loading it changes nothing in the process (it
does not read the command line nor set SLURM_CONF). Runs anywhere: no cluster needed."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from fabrictest.vcluster.plan import Plan

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_FILE = ROOT / "config" / "reframe" / "systems" / "vcluster.py"


def use(monkeypatch, state: Path, argv: list[str]) -> None:
    """The process as `eval "$(vcluster env)"` minus SLURM_CONF leaves it, run with `argv`."""
    monkeypatch.setenv("VCLUSTER_STATE_DIR", str(state))
    monkeypatch.delenv("SLURM_CONF", raising=False)
    monkeypatch.delenv("RFM_SYSTEM", raising=False)
    monkeypatch.setattr(sys, "argv", argv)


def load_system(monkeypatch, state: Path, argv: list[str]):
    """Load the system file as ReFrame's settings.py does, with this state dir and argv."""
    use(monkeypatch, state, argv)
    spec = importlib.util.spec_from_file_location("vcluster_system_under_test", SYSTEM_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_state(state: Path, **plan_args) -> Plan:
    plan = Plan(state_dir=state, **plan_args)
    plan.etc.mkdir(parents=True, exist_ok=True)
    plan.plan_file.write_text(json.dumps(plan.to_json()))
    plan.slurm_conf.write_text(plan.slurm_conf_text())
    return plan


@pytest.mark.parametrize("argv", [
    ["reframe", "-c", "reframe_tests", "-r", "--system", "vcluster"],
    ["reframe", "--system=vcluster:nodes", "-l"],
    ["pytest"],
])
def test_loading_the_system_changes_nothing_in_the_process(monkeypatch, tmp_path, argv):
    write_state(tmp_path / "state")
    use(monkeypatch, tmp_path / "state", argv)
    before = dict(os.environ)
    load_system(monkeypatch, tmp_path / "state", argv)
    assert "SLURM_CONF" not in os.environ
    assert dict(os.environ) == before


def test_slurm_conf_reaches_reframe_as_the_systems_environment(monkeypatch, tmp_path):
    plan = write_state(tmp_path / "state", nodes=2, accounting=True)
    mod = load_system(monkeypatch, tmp_path / "state", ["reframe"])
    system = mod.system
    # ReFrame sets a system's env_vars in its own process when that system is selected:
    # its sbatch/squeue/sacct then use the cluster's slurm.conf
    assert dict(system["env_vars"]) == {"SLURM_CONF": str(plan.slurm_conf)}
    part = system["partitions"][0]
    assert dict(part["env_vars"])["SLURM_CONF"] == str(plan.slurm_conf)
    assert part["scheduler"] == "slurm"  # accounting on: sacct is there
    assert part["extras"]["nodes"] == ["node01", "node02"]


def test_the_state_directory_decides_not_the_command_line(monkeypatch, tmp_path):
    write_state(tmp_path / "a", nodes=3)
    write_state(tmp_path / "b", nodes=2)
    argv = ["reframe", "--system", "vcluster"]
    a = load_system(monkeypatch, tmp_path / "a", argv).system
    b = load_system(monkeypatch, tmp_path / "b", argv).system
    assert a["partitions"][0]["extras"]["num_nodes"] == 3
    assert b["partitions"][0]["extras"]["num_nodes"] == 2
    assert a["partitions"][0]["scheduler"] == "squeue"  # no accounting: no sacct
    assert dict(b["env_vars"])["SLURM_CONF"] == str(tmp_path / "b" / "etc" / "slurm.conf")


def test_no_slurm_conf_for_reframe_before_the_cluster_wrote_one(monkeypatch, tmp_path):
    """Slurm's commands wait 60 s for a slurm.conf that does not exist (ReFrame runs
    `srun --version` for every test): better none, which fails at once."""
    system = load_system(monkeypatch, tmp_path / "never-up", ["reframe"]).system
    assert system["env_vars"] == []
    part = system["partitions"][0]
    assert dict(part["env_vars"])["SLURM_CONF"] == str(tmp_path / "never-up/etc/slurm.conf")

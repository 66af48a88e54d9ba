"""scripts/soft-roce.sh refuses in one line where it cannot work (here: no rdma_rxe module)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "soft-roce.sh"


def run(*args):
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args", [(), ("up",), ("sideways", "lo"), ("up", "no-such-netdev0")])
def test_usage_errors_are_one_line_exit_2(args):
    p = run(*args)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("ERROR: soft-roce: ")


def test_refuses_without_the_rdma_rxe_module():
    if Path("/sys/module/rdma_rxe").exists() or (
        shutil.which("modinfo") and subprocess.run(["modinfo", "rdma_rxe"], capture_output=True).returncode == 0
    ):
        pytest.skip("this kernel has rdma_rxe: `up` would create a real device")
    if not (shutil.which("rdma") and shutil.which("ibv_devices")):
        pytest.skip("iproute2's rdma or ibverbs-utils missing: the script stops before the module check")
    p = run("up", "lo")
    assert p.returncode == 1 and p.stdout == ""
    (line,) = p.stderr.splitlines()
    assert line.startswith("ERROR: soft-roce: kernel ") and "has no rdma_rxe module" in line
    assert "FABRICTEST_VERBS=sim" in line

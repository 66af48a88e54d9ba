"""sweep/student.py: Student's t tail and its inverse without scipy (fabric-sweep needs only
numpy), checked against scipy's where the tests have it."""

from __future__ import annotations

import pytest

from fabrictest.sweep.student import t_isf, t_sf


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 20, 50, 100, 1000, 100_000])
@pytest.mark.parametrize("p", [0.4, 0.1, 0.05, 0.01, 1e-3, 1.7e-4, 1e-6, 1e-9])
def test_the_inverse_tail_is_scipys(df, p):
    stats = pytest.importorskip("scipy.stats")
    want = float(stats.t.isf(p, df))
    assert t_isf(p, df) == pytest.approx(want, rel=1e-8)
    assert t_sf(want, df) == pytest.approx(p, rel=1e-7)


def test_known_values_and_symmetry():
    assert t_isf(0.025, 1) == pytest.approx(12.7062047, rel=1e-7)  # the Cauchy's 97.5 %
    assert t_isf(0.05, 10) == pytest.approx(1.8124611, rel=1e-7)
    assert t_sf(0.0, 7) == pytest.approx(0.5)
    assert t_sf(-2.0, 7) == pytest.approx(1.0 - t_sf(2.0, 7))


@pytest.mark.parametrize("p", [0.0, 0.5, 0.7, -1.0])
def test_a_probability_outside_the_tail_is_refused(p):
    with pytest.raises(ValueError, match="0 < p < 0.5"):
        t_isf(p, 5)


def test_the_sweep_runs_without_scipy():
    """fabric-sweep's dependencies are numpy, mpi4py, pyyaml and python-hostlist (the MPICH
    venv of docs/sweep.md had no scipy: the top pair's test raised ModuleNotFoundError
    there): a sweep whose top pair is measured again runs with scipy unimportable."""
    import subprocess
    import sys

    code = """
import sys
sys.modules["scipy"] = None  # import scipy now raises ImportError
from fabrictest.sweep.core import run_sweep
from fabrictest.sweep.simulate import SimulatedRunner
nodes = ["node01", "node02", "node03", "node04"]
slow = {"node01": (0.7, 0.7), "node02": (0.7, 0.7)}
again = 0
for seed in range(10):
    res = run_sweep(nodes, SimulatedRunner(nodes, sigma=0.1, slow=slow, seed=seed + 1),
                    seed=seed + 2, with_table=False)
    again += any("averaged over its" in r.reason for r in res.rounds)
print("again", again)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["again", proc.stdout.split()[1]]
    assert int(proc.stdout.split()[1]) >= 1  # the path that imported scipy was taken

"""txrx.pairs (the sweep's round as one MPI job) under Open MPI and under MPICH: three pairs on
this host, healthy, with pair 1's transmitter killed, stopped (SIGSTOP) or stalled, and with
every pair past the limit; read through the sweep's round runner (round_runner.py), the path a
sweep takes. MPICH runs when FABRICTEST_MPICH_PYTHON names the python of an environment with
MPICH's mpi4py and this package (its mpiexec beside it: `pip install mpich mpi4py numpy` and
`pip install -e . --no-deps` in a venv), else those cases are skipped saying so."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from fabrictest import mpirun as mpilaunch
from fabrictest.sweep.measure import Txrx
from fabrictest.sweep.round_runner import RoundStepRunner
from fabrictest.sweep.runs import FAILED, OK, TIMEOUT, Round

# every case is an MPI job of 6-8 ranks: 2-8 s each on this 2-core host, Open MPI's the slower
pytestmark = [pytest.mark.mpi, pytest.mark.slow]

MPICH_ENV = "FABRICTEST_MPICH_PYTHON"
NAMES = ["a", "b", "c", "d", "e", "f"]
RUNS = [("a", "b"), ("c", "d"), ("e", "f")]  # one step: a->b, c->d, e->f (pairs 0, 1, 2)


@pytest.fixture(params=["openmpi", "mpich"])
def mpi(request, monkeypatch):
    """(python, flavour) with `mpirun` of that MPI first on PATH for the runner."""
    if request.param == "mpich":
        python = os.environ.get(MPICH_ENV)
        if not python:
            pytest.skip(f"{MPICH_ENV} is not set (the python of an MPICH venv)")
        bindir = Path(python).parent
        if not (bindir / "mpirun").exists():
            pytest.skip(f"{MPICH_ENV}={python}: no mpirun beside it")
        monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    else:
        python = sys.executable
        if shutil.which("mpirun") is None:
            pytest.skip("mpirun not on PATH")
    mpilaunch.flavour.cache_clear()
    kind = mpilaunch.flavour()
    yield python, kind
    mpilaunch.flavour.cache_clear()
    if request.param == "openmpi" and kind != "openmpi":
        pytest.skip(f"mpirun on PATH is {kind}, not Open MPI")


def step(mpi, fault: str | None = None, *, limit: float = 6, nmsg: int = 400,
         timeout: float = 2):
    python, kind = mpi
    extra = ["--fault", f"{fault}:1:50"] if fault else []
    r = RoundStepRunner(Txrx(nmsg=nmsg, timeout=timeout, extra=extra), all_local=True,
                        pair_timeout=limit, fault_pair=1 if fault else None, python=python)
    r.step_grace = 4.0
    t0 = time.monotonic()
    rows = r._step(Round(1, "screen", [0, 2, 4], [1, 3, 5], NAMES), 0, RUNS)
    return rows, time.monotonic() - t0, r, kind


def test_healthy_pairs_each_have_their_figure(mpi):
    rows, secs, r, kind = step(mpi)
    assert [x[0] for x in rows] == [OK, OK, OK], (kind, rows)
    assert all(x[1] > 0 for x in rows)
    assert r.steps == 1


def test_a_killed_rank_costs_its_own_pair(mpi):
    """Open MPI keeps the other ranks: pair 1 alone fails. MPICH's Hydra SIGKILLs every rank
    soon after one dies: the pairs it silenced are measured again once in a step of their own
    (the round runner), and where the dead pair was silenced too that step is torn down again:
    then those pairs are failed runs saying so, never a figure and never a timeout."""
    rows, secs, r, kind = step(mpi, "die")
    assert rows[1][0] == FAILED and rows[1][1] is None, (kind, rows)
    assert r.steps <= 2
    if kind == "openmpi":
        assert [x[0] for x in rows] == [OK, FAILED, OK], (kind, rows)
        assert rows[0][1] > 0 and rows[2][1] > 0
        return
    for x in rows[::2]:
        assert (x[0] == OK and x[1] > 0) or (
            x[0] == FAILED and "no output from its pair (step exit 9)" in x[3]), (kind, rows)


@pytest.mark.parametrize("fault", ["freeze", "stall"])
def test_a_stopped_or_stalled_rank_costs_its_own_pair_and_the_step_ends(mpi, fault):
    """A rank stopped by SIGSTOP runs nothing, not even its watchdog: the step's own limit
    ends the job; a stalled one (asleep) is ended by its watchdog at the pairs' limit."""
    rows, secs, r, kind = step(mpi, fault, limit=5)
    assert [x[0] for x in rows[::2]] == [OK, OK], (kind, rows)
    # its receiver's deadline names it, or (a loaded host) the watchdogs' lines at the limit
    assert rows[1][0] in (FAILED, TIMEOUT) and rows[1][1] is None, (kind, rows)
    assert ("its transmitter (rank 1) stopped sending or died" in rows[1][3]
            or "no result within 5 s" in rows[1][3]), (kind, rows)
    assert secs < 2 * (5 + r.step_grace + 5), (kind, secs)  # the runner's kill: limit + grace
    assert not r._procs


def test_every_pair_past_the_limit_is_a_timeout_and_the_job_ends_there(mpi):
    rows, secs, r, kind = step(mpi, limit=2, nmsg=100_000_000, timeout=30)
    assert [x[0] for x in rows] == [TIMEOUT] * 3, (kind, rows)
    assert all("no result within 2 s" in x[3] for x in rows)
    assert r.steps == 1 and secs < 2 + r.step_grace + 5, (kind, secs)


def test_full_duplex_round_is_one_job_with_both_directions_at_once(mpi):
    """Two pairs, both directions at once: 8 ranks, 2 a node (here all on this host), one job;
    every run has its figure (on this 2-core host the figures are not a duplex link's: the two
    streams of a node share its cores, docs/sweep.md)."""
    python, kind = mpi
    r = RoundStepRunner(Txrx(nmsg=400, timeout=4), all_local=True, pair_timeout=20,
                        python=python, duplex="full")
    runs = r.run_round(Round(1, "screen", [0, 2], [1, 3], ["a", "b", "c", "d"]))
    assert runs.status.tolist() == [OK] * 4, (kind, runs.details)
    assert (runs.value > 0).all() and r.steps == 1

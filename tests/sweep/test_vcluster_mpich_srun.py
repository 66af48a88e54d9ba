"""A round as one job step under MPICH launched by Slurm's srun (`--mpi=pmi2`, Slurm's PMI in
place of Hydra), on the real vcluster: mpi4py hellos of 2 and 6 ranks, the round runner's
step of 3 pairs on 4 nodes healthy and with pair 1's transmitter killed (SIGKILL), stopped
(SIGSTOP) or stalled, the step under srun's default PMI (the vcluster's `MpiDefault=pmix`,
which this MPICH lacks) and under `--mpi=none`, and a whole sweep naming a slow node03.

Runs when FABRICTEST_MPICH_PYTHON names the python of an MPICH venv (`pip install mpich
mpi4py numpy`, `pip install -e . --no-deps`; the whole sweep also needs `pyyaml
python-hostlist` there, else that case is skipped saying so) and a vcluster can come up
(tests/vcluster_session.py: the machine's lock, always taken down). The ranks get
`UCX_TLS=tcp,self` from `vcluster env` alone (asserted here): without it the wheel's UCX
takes the vcluster's namespaces, one kernel, for one host and carries the streams in
shared memory (sysv, posix, cma) past the shaped links, 5-12 Gbps where the links give
0.19 (docs/sweep.md), and a degraded node measures healthy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vcluster_session import env_of, held_cluster, vcluster

from fabrictest.sweep.runs import FAILED, OK, TIMEOUT

pytestmark = [pytest.mark.vcluster, pytest.mark.slow, pytest.mark.mpi]

MPICH_ENV = "FABRICTEST_MPICH_PYTHON"
LIMIT, GRACE = 10.0, 10.0  # the pairs' --limit and the runner's grace past it, seconds
RUNS = [("node01", "node02"), ("node03", "node04"), ("node02", "node03")]  # pairs 0, 1, 2

HELLO = """
from mpi4py import MPI
c = MPI.COMM_WORLD
print(f"hello {c.Get_rank()} {c.Get_size()} {c.allreduce(c.Get_rank())}", flush=True)
"""

# inside the allocation: one step of the round runner, as a sweep's round launches it
STEP = """
import json, sys, time
from fabrictest.sweep.measure import Txrx
from fabrictest.sweep.round_runner import RoundStepRunner
from fabrictest.sweep.runs import Round
a = json.loads(sys.argv[1])
extra = ["--fault", f"{a['fault']}:1:50"] if a["fault"] else []
r = RoundStepRunner(Txrx(nmsg=300, timeout=3, extra=extra), launcher="slurm",
                    srun_args=a["srun_args"], pair_timeout=a["limit"], python=a["python"],
                    fault_pair=1 if extra else None)
r.step_grace = a["grace"]
runs = [tuple(x) for x in a["runs"]]
t0 = time.monotonic()
rows = r._step(Round(1, "screen", [0, 2], [1, 3], ["node01", "node02", "node03", "node04"]),
               0, runs)
print("ROWS " + json.dumps({"rows": rows, "secs": time.monotonic() - t0, "steps": r.steps}))
"""


@pytest.fixture(scope="module")
def mpich() -> str:
    python = os.environ.get(MPICH_ENV)
    if not python:
        pytest.skip(f"{MPICH_ENV} is not set (the python of an MPICH venv)")
    probe = subprocess.run([python, "-c", "from mpi4py import MPI; import fabrictest; "
                            "print(MPI.Get_library_version())"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0 or not probe.stdout.startswith("MPICH"):
        pytest.skip(f"{MPICH_ENV}={python}: not an MPICH mpi4py with fabrictest "
                    f"({(probe.stderr or probe.stdout).strip()[-200:]})")
    return python


@pytest.fixture(scope="module")
def cluster(mpich, tmp_path_factory):
    # a short state directory: slurmstepd's sockets live in it (docs/vcluster.md)
    state = tmp_path_factory.mktemp("vc-mpich") / "state"
    with held_cluster(state, "--nodes", "4", wait_s=540, up_timeout=400):
        env = env_of(state)
        assert env.get("UCX_TLS") == "tcp,self", "vcluster env leaves UCX on shared memory"
        listed = subprocess.run(["srun", "--mpi=list"], capture_output=True, text=True,
                                env=env, timeout=60)
        if "pmi2" not in listed.stdout + listed.stderr:
            pytest.skip(f"srun --mpi=list has no pmi2: {listed.stdout.strip()}")
        yield state, env


def salloc(env, *cmd: str, nodes: int = 4, timeout: float = 200):
    return subprocess.run(["salloc", "--partition=vc", f"--nodes={nodes}", "--exclusive",
                           "--time=5", *cmd], capture_output=True, text=True, env=env,
                          timeout=timeout)


def step(cluster, mpich, tmp_path, fault=None, srun_args=("--mpi=pmi2",)):
    """The round runner's step of RUNS inside an allocation: (rows, seconds, steps)."""
    script = tmp_path / "step.py"
    script.write_text(STEP)
    args = dict(fault=fault, srun_args=list(srun_args), limit=LIMIT, grace=GRACE,
                python=mpich, runs=RUNS)
    proc = salloc(cluster[1], sys.executable, str(script), json.dumps(args))
    lines = [x for x in proc.stdout.splitlines() if x.startswith("ROWS ")]
    assert lines, proc.stdout + proc.stderr
    got = json.loads(lines[-1][5:])
    return got["rows"], got["secs"], got["steps"]


@pytest.mark.parametrize("ranks", [2, 6])
def test_mpi4py_hello_under_srun_pmi2(cluster, mpich, tmp_path, ranks):
    script = tmp_path / "hello.py"
    script.write_text(HELLO)
    proc = salloc(cluster[1], "srun", "--mpi=pmi2", f"--ntasks={ranks}", mpich, str(script),
                  nodes=min(ranks, 4))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hellos = sorted(x for x in proc.stdout.splitlines() if x.startswith("hello "))
    total = ranks * (ranks - 1) // 2
    assert hellos == sorted(f"hello {r} {ranks} {total}" for r in range(ranks)), proc.stdout


def test_healthy_step_gives_every_pair_its_link_figure(cluster, mpich, tmp_path):
    rows, secs, steps = step(cluster, mpich, tmp_path)
    assert [x[0] for x in rows] == [OK] * 3, rows
    # the links' 200 mbit (0.17-0.19 measured); shared memory past the links read 5-12 Gbps
    assert all(0.05 < x[1] < 0.5 for x in rows), rows
    assert steps == 1 and secs < LIMIT, secs


@pytest.mark.parametrize("fault", ["die", "freeze", "stall"])
def test_a_killed_stopped_or_stalled_rank_costs_its_own_pair(cluster, mpich, tmp_path, fault):
    """Under srun (--kill-on-bad-exit=0) nothing tears the step down for a dead rank, unlike
    Hydra: its receiver's deadline fails pair 1, the others keep their figures, in one step.
    The other ranks wait in MPI_Finalize for the dead or stopped one until the kernel's alarm
    (--limit + 2 s); a stopped rank holds the step until the runner's kill (limit + grace)."""
    rows, secs, steps = step(cluster, mpich, tmp_path, fault)
    assert [x[0] for x in rows[::2]] == [OK, OK], rows
    assert all(0.05 < x[1] < 0.5 for x in rows[::2]), rows
    assert rows[1][0] in (FAILED, TIMEOUT) and rows[1][1] is None, rows
    assert ("its transmitter (rank 1) stopped sending or died" in rows[1][3]
            or f"no result within {LIMIT:g} s" in rows[1][3]), rows
    assert steps == 1
    end = LIMIT + GRACE if fault == "freeze" else LIMIT + 2
    assert secs < end + 6, secs


@pytest.mark.parametrize(("srun_args", "says"), [
    ((), "MPI_Init failed on every rank: this MPI has no PMIx (srun's --mpi=)"),
    (("--mpi=none",), "every rank started as a world of 1, not 6"),
])
def test_a_pmi_this_mpich_lacks_fails_every_pair_at_once_in_one_line(
        cluster, mpich, tmp_path, srun_args, says):
    rows, secs, steps = step(cluster, mpich, tmp_path, srun_args=srun_args)
    assert [x[0] for x in rows] == [FAILED] * 3, rows
    assert all(says in x[3] and "--srun-arg=--mpi=pmi2" in x[3] for x in rows), rows
    assert steps == 1 and secs < 10, secs


def test_sweep_under_mpich_and_srun_names_the_slow_node(cluster, mpich, tmp_path):
    state, env = cluster
    sweep = Path(mpich).parent / "fabric-sweep"
    probe = subprocess.run([mpich, "-c", "import yaml, hostlist"], capture_output=True,
                           text=True, timeout=60)
    if probe.returncode != 0 or not sweep.exists():
        pytest.skip(f"{MPICH_ENV}'s venv cannot run fabric-sweep (pip install pyyaml "
                    f"python-hostlist there): {probe.stderr.strip()[-120:]}")
    vcluster(state, "degrade", "node03", "100mbit")
    try:
        out = tmp_path / "sweep.json"
        proc = salloc(env, "--no-kill", str(sweep), "--launcher", "slurm", "--step-per",
                      "round", "--srun-arg=--mpi=pmi2", "--seed", "7", "--nmsg", "300",
                      "--pair-timeout", "40", "--no-reference", "--json", str(out),
                      timeout=600)
    finally:
        vcluster(state, "restore", "node03")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert out.exists(), f"no sweep JSON\n{proc.stdout}\n{proc.stderr}"
    data = json.loads(out.read_text())
    assert [s["node"] for s in data["suspects"]] == ["node03"], proc.stdout
    assert all(p["status"] == "ok" for p in data["pairs"]), proc.stdout
    assert "suspect: node03 send" in proc.stdout and "receive" in proc.stdout

#!/usr/bin/env python3
"""How often does an MPI job crash at start-up on the vcluster? N tiny Open MPI jobs
(MPI_Init, every rank sends to every other, MPI_Finalize) launched with `srun --mpi=pmix`
across the nodes of a running cluster, K at a time, for each PMIx fence setting asked for
(SLURM_PMIX_FENCE in the job's environment):

* ``conf``: whatever the cluster's mpi.conf says (`vcluster up`: a tree for every fence);
* ``mixed``: Slurm's default (a tree for a fence without data, a ring for one with data);
* ``tree``, ``ring``: one kind for every fence.

`--tree-width N` runs it all with the cluster's TreeWidth set to N (50 is Slurm's default; the
vcluster sets 2) and puts it back. The vcluster before its fix is `--tree-width 50 --fence
mixed`; as it is now, `--fence conf`. Jobs of the settings asked for run interleaved (job i of
every setting, then i+1), so a load spike on the shared machine hits them alike. Prints, per
setting: jobs, ok, crashed (a signal or segfault, Open MPI's TCP/shared-memory errors), hung
(killed at the deadline), other failures; keeps the output of each failed job under --keep.
`--probe` instead shows whether a fence without data holds every node: rank 0 sleeps 2 s
before MPI_Finalize, every rank prints how long its MPI_Finalize took.

usage (root, a cluster up, under the team's vcluster lock):
    python bench/bench_vcluster_mpi_start.py --tree-width 50 --fence mixed --nodes 4 --ranks 8
    python bench/bench_vcluster_mpi_start.py --fence conf --nodes 4 --ranks 8
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fabrictest.vcluster.plan import Plan, default_state_dir

PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size, i, sum = 0, got;
    char host[MPI_MAX_PROCESSOR_NAME]; int len;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    for (i = 1; i < size; i++) {  /* every pair talks: TCP between nodes, vader within */
        int to = (rank + i) % size, from = (rank - i + size) % size;
        MPI_Sendrecv(&rank, 1, MPI_INT, to, 0, &got, 1, MPI_INT, from, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        sum += got;
    }
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("ok %d ranks sum %d\n", size, sum);
    MPI_Finalize();
    return 0;
}
"""
# Does a fence without data hold every node? Rank 0 sleeps before MPI_Finalize (whose PMIx
# fence carries no data); every other rank prints how long its MPI_Finalize took. Synchronised,
# the ranks on other nodes wait for rank 0; a fence that completes on each node alone lets them
# go at once (and, at the end of MPI_Init, lets a rank talk to peers not ready yet).
PROBE = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    int rank; char host[MPI_MAX_PROCESSOR_NAME]; int len; double t0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Get_processor_name(host, &len);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) sleep(2);
    t0 = now();
    MPI_Finalize();
    printf("finalize %d %s %.3f\n", rank, host, now() - t0);
    return 0;
}
"""
CRASH = re.compile(r"Segmentation fault|signal \d+|SIGSEGV|SIGBUS|SIGABRT|core dumped|"
                   r"mca_btl_tcp|btl_vader|ENOENT|EINPROGRESS|Signal:|exited on signal",
                   re.IGNORECASE)


JOB_CWD = tempfile.gettempdir()  # main() sets its own work directory


def build(workdir: Path, name: str = "mpistart", text: str = PROGRAM) -> Path:
    src = workdir / f"{name}.c"
    src.write_text(text)
    exe = workdir / name
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(src)], check=True, timeout=120)
    return exe


def one_job(exe: list[str], env: dict, fence: str, nodes: int, ranks: int, deadline: float,
            expect: str):
    job_env = dict(env)
    if fence != "conf":
        job_env["SLURM_PMIX_FENCE"] = fence
    cmd = ["srun", "--mpi=pmix", "--partition=vc", f"-N{nodes}", f"-n{ranks}",
           "--time=2", "--kill-on-bad-exit=1", *exe]
    t0 = time.monotonic()
    try:
        # cwd: a crashed rank's core file lands there, not in the repository
        proc = subprocess.run(cmd, capture_output=True, text=True, env=job_env,
                              timeout=deadline, cwd=JOB_CWD)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) \
            else (exc.stdout or "")
        return "hung", out, time.monotonic() - t0
    out = proc.stdout + proc.stderr
    if proc.returncode == 0 and expect in out:
        return "ok", out, time.monotonic() - t0
    if CRASH.search(out) or proc.returncode < 0 or proc.returncode >= 128:
        return "crashed", out, time.monotonic() - t0
    return "other", out, time.monotonic() - t0


def probe(exe: Path, env: dict, args) -> int:
    print(f"rank 0 sleeps 2 s before MPI_Finalize; {args.ranks} ranks on {args.nodes} nodes")
    print(f"{'fence':6} {'run':>3}  MPI_Finalize seconds of the ranks on rank 0's node | "
          "on other nodes")
    for i in range(3):
        for fence in args.fence:
            job_env = dict(env)
            if fence != "conf":
                job_env["SLURM_PMIX_FENCE"] = fence
            proc = subprocess.run(
                ["srun", "--mpi=pmix", "--partition=vc", f"-N{args.nodes}", f"-n{args.ranks}",
                 "--time=2", str(exe)], capture_output=True, text=True, env=job_env, cwd=JOB_CWD,
                timeout=args.deadline)
            rows = [ln.split()[1:] for ln in proc.stdout.splitlines()
                    if ln.startswith("finalize ")]
            host0 = next((h for r, h, _ in rows if r == "0"), None)
            same = sorted(float(s) for r, h, s in rows if h == host0 and r != "0")
            other = sorted(float(s) for r, h, s in rows if h != host0)
            print(f"{fence:6} {i:3}  {' '.join(f'{x:.2f}' for x in same) or '-'} | "
                  f"{' '.join(f'{x:.2f}' for x in other)}  (exit {proc.returncode})")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=100, help="jobs per fence setting")
    ap.add_argument("--fence", nargs="+", default=["tree", "ring"],
                    choices=["tree", "ring", "mixed", "conf"])
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--parallel", type=int, default=4, help="jobs in flight at once")
    ap.add_argument("--deadline", type=float, default=90, help="seconds before a job is hung")
    ap.add_argument("--keep", type=Path, default=None, help="directory for failed jobs' output")
    ap.add_argument("--txrx", action="store_true",
                    help="run `txrx --method mpi` many-to-one (1 receiver, ranks-1 transmitters, "
                    "200 messages; Python and mpi4py start slower) instead of the C program")
    ap.add_argument("--probe", action="store_true",
                    help="instead: how long ranks on other nodes wait in MPI_Finalize while "
                    "rank 0 sleeps 2 s (does the fence without data hold every node?)")
    ap.add_argument("--tree-width", type=int, default=None,
                    help="run with the cluster's TreeWidth set to this (slurm.conf rewritten, "
                    "scontrol reconfigure) and put back afterwards; 50 is Slurm's default")
    args = ap.parse_args()
    state = default_state_dir()
    if not (state / "cluster.json").is_file():
        print(f"bench: no vcluster in {state}: run `vcluster up`", file=sys.stderr)
        return 2
    plan = Plan.from_json(json.loads((state / "cluster.json").read_text()))
    env = {**os.environ, **plan.env()}
    workdir = Path(tempfile.mkdtemp(prefix="vc-mpistart-"))
    global JOB_CWD
    JOB_CWD = str(workdir)
    keep = args.keep or workdir / "failed"
    keep.mkdir(parents=True, exist_ok=True)
    with tree_width(plan, env, args.tree_width):
        if args.probe:
            return probe(build(workdir, "fenceprobe", PROBE), env, args)
        return jobs(args, env, workdir, keep)


@contextlib.contextmanager
def tree_width(plan: Plan, env: dict, width: int | None):
    """The cluster's TreeWidth set to `width` for the duration (None: as it is)."""
    if width is None:
        yield
        return
    original = plan.slurm_conf.read_text()
    lines = [ln for ln in original.splitlines() if not ln.startswith("TreeWidth=")]
    plan.slurm_conf.write_text("\n".join([*lines, f"TreeWidth={width}"]) + "\n")

    def reconfigure(want: str):
        subprocess.run(["scontrol", "reconfigure"], env=env, check=True, timeout=60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out = subprocess.run(["scontrol", "show", "config"], env=env, capture_output=True,
                                 text=True, timeout=60).stdout
            if re.search(rf"^TreeWidth\s*=\s*{want}\s*$", out, re.M):
                time.sleep(3)  # the slurmds read it too
                return
            time.sleep(1)
        raise RuntimeError(f"TreeWidth {want} not in effect within 60 s")

    try:
        reconfigure(str(width))
        print(f"TreeWidth={width} for this run")
        yield
    finally:
        plan.slurm_conf.write_text(original)
        m = re.search(r"^TreeWidth=(\d+)", original, re.M)
        reconfigure(m.group(1) if m else r"\d+")


def jobs(args, env: dict, workdir: Path, keep: Path) -> int:
    if args.txrx:
        txrx = Path(sys.executable).parent / "txrx"
        exe = [str(txrx), "--method", "mpi", "--nrx", "1", "--nlink", str(args.ranks - 1),
               "--nmsg", "200", "--timeout", "60"]
        expect = "message total is"
    else:
        exe, expect = [str(build(workdir))], f"ok {args.ranks} ranks"
    order = [(i, f) for i in range(args.jobs) for f in args.fence]
    counts = {f: {"ok": 0, "crashed": 0, "hung": 0, "other": 0} for f in args.fence}
    seconds = {f: 0.0 for f in args.fence}
    t0 = time.monotonic()

    def go(item):
        i, fence = item
        return item, one_job(exe, env, fence, args.nodes, args.ranks, args.deadline,
                                  expect)

    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        for (i, fence), (verdict, out, took) in pool.map(go, order):
            counts[fence][verdict] += 1
            seconds[fence] += took
            if verdict != "ok":
                (keep / f"{fence}-{i:03d}-{verdict}.txt").write_text(out)
                first = next((ln for ln in out.splitlines() if CRASH.search(ln)),
                             out.strip().splitlines()[-1] if out.strip() else "no output")
                print(f"  {fence} job {i}: {verdict}: {first[:160]}", file=sys.stderr)
    what = "txrx --method mpi many-to-one" if args.txrx else "C MPI_Init/sendrecv/finalize"
    print(f"{what}: {args.jobs} jobs per setting, {args.ranks} ranks on {args.nodes} nodes, "
          f"{args.parallel} at once, {time.monotonic() - t0:.0f} s; failed output in {keep}")
    print(f"{'fence':6} {'jobs':>5} {'ok':>5} {'crashed':>8} {'hung':>5} {'other':>6} "
          f"{'mean s':>7}")
    for f in args.fence:
        c = counts[f]
        print(f"{f:6} {args.jobs:5} {c['ok']:5} {c['crashed']:8} {c['hung']:5} "
              f"{c['other']:6} {seconds[f] / args.jobs:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The collective families on `local`, in CI without OSU or IMB: stand-in `osu_allreduce` ...
`osu_barrier` and `IMB-MPI1` programs print the recorded real outputs of OSU 7.4 and IMB
2021.7 on this kind of host (tests/data/real-outputs-local/), and `reframe -r --system local`
runs every collective case listed there: each passes against reference/local.yaml, its
perflog holds the latency of every size, and the job script is the command the family asks
for (`-c`, `-T mpi_float` for the reductions, `-npmin 2`). The fail-closed cases (another
collective's output, a failed validation, lost sizes, a build without --validation, figures no
link carries) are tests/hostile/cases_collectives.py's; the real builds run in
tests/reframe/test_osu_imb_real.py and on the vcluster (tests/vcluster/test_collectives.py).

One ReFrame run, about 25 s on 2 cores."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from _rfm import run_reframe
from recordings import read

pytestmark = [pytest.mark.slow, pytest.mark.mpi]

OSU = {  # program -> its recording
    "osu_allreduce": "osu_allreduce-7.4-validation-float-ompi4.1-local.txt",
    "osu_alltoall": "osu_alltoall-7.4-validation-ompi4.1-local.txt",
    "osu_allgather": "osu_allgather-7.4-validation-ompi4.1-local.txt",
    "osu_bcast": "osu_bcast-7.4-validation-ompi4.1-local.txt",
    "osu_reduce_scatter": "osu_reduce_scatter-7.4-validation-float-ompi4.1-local.txt",
    "osu_barrier": "osu_barrier-7.4-ompi4.1-local.txt",
}
IMB = ("allreduce", "alltoall", "bcast", "allgather")


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n# stand-in (tests/reframe/test_collectives_local.py)\n" + body)
    path.chmod(0o755)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH: run scripts/install.sh and activate .venv")
    tmp = tmp_path_factory.mktemp("collectives-local")
    bins = tmp / "bin"
    bins.mkdir()
    rank0 = 'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then\n'
    for program, name in OSU.items():
        (bins / f"{program}.out").write_text(read(name))
        _script(bins / program, rank0 + f'  cat "{bins}/{program}.out"\nfi\nexit 0\n')
    for bench in IMB:
        (bins / f"imb-{bench}.out").write_text(read(f"imb-2021.7-{bench}-np2-ompi4.1-local.txt"))
    _script(bins / "IMB-MPI1", rank0 + f'  cat "{bins}/imb-$1.out"\nfi\nexit 0\n')
    env = {"OSU_HOME": str(bins), "IMB_HOME": str(bins)}
    return run_reframe(["--system", "local", "-r", "--keep-stage-files", "-n", "OsuCollectiveTest",
                        "-n", "ImbTest%benchmark=(allreduce|alltoall|bcast|allgather)"],
                       tmp, timeout=400, env=env)


def test_every_collective_case_listed_on_local_passes(run):
    names = sorted(c["display_name"] for c in run.cases()
                   if not c["display_name"].startswith("FabricBinaries"))  # the fixture
    assert names == sorted(
        [f"OsuCollectiveTest %benchmark={p} %per_node=1 %scope=all" for p in OSU]
        + [f"ImbTest %benchmark={b} %transport=tcp" for b in IMB]), names
    for case in run.cases():
        assert case["result"] == "pass", (case["display_name"], case.get("fail_reason"),
                                          run.output[-3000:])
    assert run.returncode == 0


def test_the_perflog_holds_every_size(run):
    log = (run.prefix / "perflogs" / "local" / "default" / "OsuCollectiveTest.log")
    if not log.is_file():  # the perflog directory of _rfm's runs
        log = next(run.prefix.parent.rglob("OsuCollectiveTest.log"))
    text = log.read_text()
    for size in (4, 8, 1024, 1 << 20):
        assert re.search(rf"latency_{size}\b", text), size
    assert "latency_large" in text
    imb_log = next(run.prefix.parent.rglob("ImbTest.log")).read_text()
    # a reduction's series is 0, 4, 8 ... (IMB never reduces 1 or 2 bytes); alltoall has 1
    allreduce = "\n".join(ln for ln in imb_log.splitlines() if "benchmark=allreduce" in ln)
    assert re.search(r"latency_4\b", allreduce), imb_log[-2000:]
    assert not re.search(r"latency_1\|", allreduce)
    assert re.search(r"latency_1\|", "\n".join(
        ln for ln in imb_log.splitlines() if "benchmark=alltoall" in ln))


def test_the_command_lines(run):
    allreduce = run.job_script("OsuCollectiveTest %benchmark=osu_allreduce")
    assert re.search(r"osu_allreduce -c -T mpi_float\n", allreduce), allreduce
    alltoall = run.job_script("OsuCollectiveTest %benchmark=osu_alltoall")
    assert re.search(r"osu_alltoall -c\n", alltoall), alltoall
    barrier = run.job_script("OsuCollectiveTest %benchmark=osu_barrier")
    assert re.search(r"osu_barrier\n", barrier), barrier
    imb = run.job_script("ImbTest %benchmark=allreduce")
    assert "mpirun -np 2 " in imb and re.search(r"IMB-MPI1 allreduce -msglog 22 -npmin 2 -iter 100\n",
                                                imb), imb

"""`reframe --dry-run` for every system but local: the generated job scripts carry what the
users' notes (docs/sources.md) prescribe (launch lines, hostfiles, Slurm geometry, fabric and GPU
variables), and the cases that cannot run on a partition are not instantiated there (nothing is
listed and then skipped)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _rfm import ROOT

pytestmark = pytest.mark.slow

SEREN_HOSTFILE_10x2 = "\\n".join(f"seren-{i:02d} slots=2" for i in range(1, 11))


def _ok(run):
    assert run.returncode == 0, run.output[-4000:]
    return run


def test_seren_same_node_matches_seren_notes(dry_runs):
    run = _ok(dry_runs("seren"))
    script = run.job_script("TxRxTest %scenario=same-node %span=many %method=rdma %buffer=host")
    assert SEREN_HOSTFILE_10x2 in script
    assert "> hostfile.txt" in script
    assert re.search(
        r"^mpirun -np 20 -map-by ppr:2:node --rank-by node -hostfile hostfile\.txt .*"
        r"txrx --nrx 10 --nlink 10 --method rdma --msg-size 65536 --num-blks 10 "
        r"--num-cmsgs 100 --nmsg 100000 ",
        script,
        re.MULTILINE,
    ), script
    assert "export UCX_NET_DEVICES=mlx5_0:1" in script
    assert "--gid-index 3" in script and "--device mlx5_0" in script


def test_seren_paired_and_many_to_one(dry_runs):
    run = _ok(dry_runs("seren"))
    one = run.job_script("TxRxTest %scenario=paired %span=one %method=rdma %buffer=host")
    assert "seren-01 slots=1\\nseren-02 slots=1\\n" in one
    assert re.search(r"mpirun -np 2 -map-by ppr:1:node --rank-by node -hostfile hostfile\.txt", one)
    assert "--nrx 1 --nlink 1 --method rdma" in one
    many = run.job_script("TxRxTest %scenario=paired %span=many %method=rdma %buffer=host")
    assert "mpirun -np 10 -map-by ppr:1:node --rank-by node" in many
    assert "--nrx 5 --nlink 5" in many
    m2o = run.job_script("TxRxTest %scenario=many-to-one %span=one %method=rdma %buffer=host")
    assert "mpirun -np 3 " in m2o and "--nrx 1 --nlink 2 " in m2o
    p3 = run.job_script("TxRxTest %scenario=pairs-of-three %span=one %method=rdma %buffer=host")
    assert "mpirun -np 3 -map-by ppr:1:node --rank-by node" in p3
    assert "seren-03 slots=1" in p3 and "--nrx 1 --nlink 2 " in p3


def test_seren_perftest_and_health(dry_runs):
    run = _ok(dry_runs("seren"))
    perf = run.job_script("PerftestWriteBwTest")
    assert "SERVER_HOST=seren-01" in perf
    assert re.search(r"perftest_pair\.sh \"\$SERVER_HOST\" ib_write_bw -c UC .*-x 3", perf)
    health = run.job_script("NicHealthTest")
    assert (
        "fabric-health --nodes 10 --expect-mtu 4096 --expect-rate 100 --link-layer Ethernet "
        "--device mlx5_0" in health
    )
    assert "mpirun -np 10 -map-by ppr:1:node --rank-by node" in health


def test_orfeo_imb_matches_orfeo_notes(dry_runs):
    run = _ok(dry_runs("orfeo"))
    tcp = run.job_script("ImbTest %benchmark=PingPong %transport=tcp")
    for line in ("#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=1", "#SBATCH --partition=EPYC"):
        assert line in tcp
    assert "mpirun -np 2 --map-by node -x UCX_NET_DEVICES=bond0 IMB-MPI1 pingpong -msglog 28" in tcp
    rdma = run.job_script("ImbTest %benchmark=PingPong %transport=rdma")
    assert "-x UCX_NET_DEVICES=mlx5_0:1 IMB-MPI1 pingpong -msglog 28" in rdma
    # +spack: binaries from the system's environment, installed in place by the fixture
    env_dir = ROOT / "config" / "spack" / "orfeo"
    if (env_dir / "spack.yaml").is_file():
        assert f'eval "$(spack env activate --sh -d {env_dir})"' in rdma
        build = run.case("FabricBinaries")
        script = (Path(build["stagedir"]) / "rfm_build.sh").read_text()
        assert f"spack -e {env_dir} install" in script
    else:
        assert "spack env activate" in rdma


def test_slingshot_osu_matches_slingshot_notes(dry_runs):
    run = _ok(dry_runs("slingshot"))
    get = run.job_script("OsuPt2PtTest %benchmark=osu_get_bw")
    assert "#SBATCH --nodes=2" in get and "#SBATCH --ntasks-per-node=1" in get
    assert re.search(r"^srun osu_get_bw", get, re.MULTILINE)
    grp = run.job_script("OsuMbwMrTest %scope=group %ranks_per_node=20")
    assert "#SBATCH --ntasks=1240" in grp and "#SBATCH --ntasks-per-node=20" in grp
    assert "#SBATCH --nodes=62" in grp and "--nodelist=nid[001-062]" in grp
    assert re.search(r"^srun osu_mbw_mr", grp, re.MULTILINE)
    bis = run.job_script("BisectionTest")
    assert re.search(r"^srun \S*bisection_bw 20 100$", bis, re.MULTILINE)
    assert "#SBATCH --nodes=64" in bis


def test_crusher_gpu_settings_match_crusher_notes(dry_runs):
    run = _ok(dry_runs("crusher"))
    gpu = run.job_script("OsuGpuAwareTest %benchmark=osu_bibw %span=nodes")
    for line in (
        "#SBATCH --partition=batch",
        "#SBATCH --exclusive",
        "#SBATCH --gpus-per-task=1",
        "#SBATCH --gpu-bind=closest",
        "export MPICH_GPU_SUPPORT_ENABLED=1",
        "export MPICH_OFI_NIC_POLICY=NUMA",
    ):
        assert line in gpu, line
    assert "srun osu_bibw -d rocm H H > osu_HH.out" in gpu
    assert "srun osu_bibw -d rocm H D > osu_HD.out" in gpu
    assert re.search(r"^srun osu_bibw -d rocm D D$", gpu, re.MULTILINE)
    assert run.case("OsuGpuAwareTest %benchmark=osu_bibw %span=nodes")["result"] == "pass"
    txrx = run.job_script("TxRxTest %scenario=paired %span=one %method=mpi %buffer=cuda")
    assert "--buffer cuda" in txrx and "#SBATCH --gpus-per-task=1" in txrx


#: the Crusher GPU notes' job script: one node, one GPU per task, the closest
CRUSHER_NODE = ("#SBATCH --nodes=1", "#SBATCH --partition=batch", "#SBATCH --exclusive",
                "#SBATCH --gpus-per-task=1", "#SBATCH --gpu-bind=closest",
                "export MPICH_GPU_SUPPORT_ENABLED=1", "export MPICH_OFI_NIC_POLICY=NUMA")


@pytest.mark.parametrize(("case", "tasks"), [
    ("OsuGpuAwareTest %benchmark=osu_bw %span=node", 2),  # osu_bw takes two ranks exactly
    ("GpuExchangeTest %program=bisection_bw", 8), ("GpuExchangeTest %program=alltomany", 8),
    ("NcclTest %benchmark=all_reduce_perf %span=node", 8),
    ("NcclTest %benchmark=alltoall_perf %span=node", 8),
])
def test_crusher_one_node_cases_keep_the_notes_lines(dry_runs, case, tasks):
    """The notes' one-node case (8 tasks, --gpus-per-task=1 --gpu-bind=closest on one node)."""
    script = _ok(dry_runs("crusher")).job_script(case)
    for line in (*CRUSHER_NODE, f"#SBATCH --ntasks={tasks}", f"#SBATCH --ntasks-per-node={tasks}"):
        assert line in script, (case, line)


def test_crusher_device_against_host_and_rccl_commands(dry_runs):
    run = _ok(dry_runs("crusher"))
    bis = run.job_script("GpuExchangeTest %program=bisection_bw")
    assert re.search(r"^srun bisection_bw -d host -s 4k -e 4m 8 50 > host\.out; echo ", bis, re.M)
    assert re.search(r"^srun bisection_bw -d device -s 4k -e 4m 8 50$", bis, re.M)
    a2m = run.job_script("GpuExchangeTest %program=alltomany")
    assert re.search(r"^srun alltomany -d device -p 1 -b 20k -n 50 -r 5$", a2m, re.M)
    nccl = run.job_script("NcclTest %benchmark=alltoall_perf %span=nodes")
    assert "#SBATCH --nodes=2" in nccl and "#SBATCH --ntasks=16" in nccl
    assert re.search(r"^srun alltoall_perf -b 8 -e 8589934592 -f 2 -g 1 -c 1$", nccl, re.M)


def test_cuda_node_uses_the_cuda_equivalents(dry_runs):
    """cuda-node: the same Slurm binding, Open MPI's CUDA switch instead of MPICH's, srun
    through PMIx, its Spack environment; no Cray variable."""
    run = _ok(dry_runs("cuda-node"))
    for case, tasks, command in (
        ("OsuGpuAwareTest %benchmark=osu_bw %span=node", 2,
         r"^srun --mpi=pmix osu_bw -d cuda H H > osu_HH\.out; "),
        ("GpuExchangeTest %program=bisection_bw", 4,
         r"^srun --mpi=pmix bisection_bw -d device -s 4k -e 4m 4 50$"),
        ("NcclTest %benchmark=all_reduce_perf %span=node", 4,
         r"^srun --mpi=pmix all_reduce_perf -b 8 -e 8589934592 -f 2 -g 1 -c 1$"),
    ):
        script = run.job_script(case)
        for line in ("#SBATCH --nodes=1", f"#SBATCH --ntasks={tasks}", "#SBATCH --partition=gpu",
                     "#SBATCH --gpus-per-task=1", "#SBATCH --gpu-bind=closest",
                     "export OMPI_MCA_opal_cuda_support=true",
                     f'eval "$(spack env activate --sh -d {ROOT}/config/spack/cuda-node)"'):
            assert line in script, (case, line)
        assert re.search(command, script, re.M), (case, script)
        assert "MPICH_" not in script
    nodes = run.job_script("NcclTest %benchmark=alltoall_perf %span=nodes")
    assert "#SBATCH --nodes=2" in nodes and "#SBATCH --ntasks=8" in nodes


def test_cori_all_to_many_matches_cori_notes(dry_runs):
    run = _ok(dry_runs("cori"))
    for n in (2, 8, 16, 32):
        script = run.job_script(f"AllToManyTest %iterations={n}")
        assert "#SBATCH --ntasks=512" in script and "#SBATCH --nodes=8" in script
        assert "#SBATCH --ntasks-per-node=64" in script and "#SBATCH --constraint=knl" in script
        assert "module swap craype-haswell craype-mic-knl" in script
        # the notes' command line, then ours: 30 repetitions of the timed loop
        assert re.search(
            rf"^srun -c 4 --cpu_bind=cores (\S*/)?alltomany -p 64 -b 32 -n {n} -r 30$",
            script,
            re.MULTILINE,
        ), script


@pytest.mark.parametrize("system", ["seren", "orfeo", "slingshot", "cori"])
def test_gpu_tests_are_not_run_elsewhere(dry_runs, system):
    """Without +gpu the GPU cases are not instantiated (valid_systems): neither run nor
    skipped, while the host-buffer cases are."""
    run = _ok(dry_runs(system))
    names = [c["display_name"].replace(" ", "") for c in run.cases()]
    assert "TxRxTest%scenario=same-node%span=one%method=mpi%buffer=host" in names
    gpu = ("OsuGpuAwareTest", "GpuExchangeTest", "NcclTest", "%buffer=cuda")
    assert [n for n in names if any(g in n for g in gpu)] == []


@pytest.mark.parametrize("system", ["crusher", "cori", "cuda-node"])
def test_rdma_tests_are_not_run_without_rdma(dry_runs, system):
    run = _ok(dry_runs(system))
    names = [c["display_name"].replace(" ", "") for c in run.cases()]
    assert "TxRxTest%scenario=same-node%span=one%method=mpi%buffer=host" in names
    rdma = ("%method=rdma", "%transport=rdma", "NicHealthTest", "PerftestWriteBwTest")
    assert [n for n in names if any(x in n for x in rdma)] == []


def test_no_dry_run_failures(dry_runs):
    for system in ("seren", "orfeo", "slingshot", "crusher", "cori", "cuda-node"):
        run = _ok(dry_runs(system))
        failed = [c["display_name"] for c in run.cases() if c["result"] == "fail"]
        assert not failed, (system, failed)


@pytest.mark.parametrize("system", ["seren", "orfeo", "slingshot", "crusher", "cori", "cuda-node"])
def test_dry_run_skips_nothing(dry_runs, system):
    """Every case instantiated on a system gets its job script: the static facts (nodes,
    transports, ranks per node) keep a case from being listed there, not a skip in setup
    (seren's IMB tcp cases, orfeo's 3-node tx/rx scenarios used to be listed and skipped)."""
    run = _ok(dry_runs(system))
    skipped = [c["display_name"] for c in run.cases() if c["result"] == "skip"]
    assert skipped == [], (system, skipped)
    names = [c["display_name"].replace(" ", "") for c in run.cases()]
    if system == "seren":
        assert "ImbTest%benchmark=PingPong%transport=rdma" in names
        assert "ImbTest%benchmark=PingPong%transport=tcp" not in names
    if system == "orfeo":  # 2 nodes
        assert "TxRxTest%scenario=paired%span=one%method=mpi%buffer=host" in names
        assert "TxRxTest%scenario=pairs-of-three%span=one%method=mpi%buffer=host" not in names


def test_quick_mode_shrinks_sizes(tmp_path):
    from _rfm import run_reframe

    run = run_reframe(
        [
            "--system",
            "seren",
            "--dry-run",
            "--mode",
            "quick",
            "-n",
            "TxRxTest%scenario=same-node%span=many%method=rdma%buffer=host|BisectionTest",
        ],
        tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.output[-3000:]
    txrx = run.job_script("TxRxTest %scenario=same-node %span=many %method=rdma %buffer=host")
    assert "--nmsg 20000 " in txrx
    assert re.search(r"bisection_bw 2 20$", run.job_script("BisectionTest"), re.MULTILINE)

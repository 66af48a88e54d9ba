"""Our launchers (config/reframe/launchers.py), pure: each one's command line and prelude for a
job's task counts and placement intent, as the users' notes launch (the SEREN tx/rx notes'
hostfile and -map-by, the ORFEO IMB notes' --map-by node, srun's cyclic distribution), their
registration with ReFrame, and the system files naming them."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest
from _rfm import SETTINGS
from reframe.core.backends import getlauncher

SEREN = [f"seren-{i:02d}" for i in range(1, 11)]
OURS = ("mpirun-hostfile", "mpirun-onehost", "mpirun-slurm", "srun-placed", "srun-knl",
        "srun-pmix")
REMOVED_EXTRAS = ("launcher_options", "hostfile", "gpu_job_options")


@pytest.fixture(scope="module")
def settings():
    spec = importlib.util.spec_from_file_location("fabrictest_settings_for_launchers", SETTINGS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def launchers(settings):
    return settings.load_launchers()


def job(nodes: int, ppn: int, **kw):
    return SimpleNamespace(num_tasks=nodes * ppn, num_tasks_per_node=ppn, num_cpus_per_task=None,
                           **kw)


def partition(nodes=(), env=()):
    return SimpleNamespace(extras={"nodes": list(nodes)},
                           local_env=SimpleNamespace(env_vars={n: "x" for n in env}))


def make(name: str, *, round_robin=True, part=None, env=None):
    launcher = getlauncher(name)()
    launcher.round_robin = round_robin
    launcher.partition = part
    launcher.env_vars.update(env or {})
    return launcher


def line(launcher, j) -> str:
    return launcher.run_command(j)


# -- registration ---------------------------------------------------------------------------
def test_every_launcher_is_registered_once_per_process(settings, launchers):
    assert settings.load_launchers() is launchers  # a second load registers nothing again
    for name in OURS:
        cls = getlauncher(name)
        assert cls.registered_name == name
        assert callable(getattr(cls, "prelude", None)), f"{name} speaks the protocol"


def test_systems_name_registered_launchers_and_no_removed_extras(settings):
    partitions = [p for s in settings.site_configuration["systems"] for p in s["partitions"]]
    by_system = {p["name"]: p["launcher"] for p in partitions}
    assert by_system == {"knl": "srun-knl", "batch": "srun-placed", "default": "mpirun-onehost",
                         "EPYC": "mpirun-slurm", "roce": "mpirun-hostfile",
                         "compute": "srun-placed", "nodes": "srun-placed", "gpu": "srun-pmix"}
    for part in partitions:
        getlauncher(part["launcher"])  # raises ConfigError for a name nobody registered
        assert not set(REMOVED_EXTRAS) & set(part.get("extras", {})), part["name"]


def test_crusher_gpu_binding_is_a_partition_resource(settings):
    crusher = next(s for s in settings.site_configuration["systems"] if s["name"] == "crusher")
    (res,) = [r for r in crusher["partitions"][0]["resources"] if r["name"] == "gpu"]
    assert [o.format(gpus_per_task=1) for o in res["options"]] == [
        "--gpus-per-task=1", "--gpu-bind=closest"]


# -- mpirun-hostfile (seren) ----------------------------------------------------------------
def test_hostfile_is_the_seren_notes(launchers):
    assert launchers.hostfile_lines(["seren-01", "seren-02"], 2) == [
        "seren-01 slots=2", "seren-02 slots=2"]


def test_hostfile_mpirun_round_robin_is_the_seren_notes_line():
    launcher = make("mpirun-hostfile", part=partition(SEREN, env=["UCX_NET_DEVICES"]))
    j = job(10, 2)
    assert line(launcher, j) == (
        "mpirun -np 20 -map-by ppr:2:node --rank-by node -hostfile hostfile.txt "
        "-x PATH -x LD_LIBRARY_PATH -x UCX_NET_DEVICES")
    assert launcher.prelude(j) == [
        "printf '" + "\\n".join(f"{n} slots=2" for n in SEREN) + "\\n' > hostfile.txt"]
    assert launcher.hosts(j) == SEREN


def test_hostfile_mpirun_block_pair_with_exports():
    launcher = make("mpirun-hostfile", round_robin=False, part=partition(SEREN, env=["B", "A"]),
                    env={"UCX_NET_DEVICES": "mlx5_0:1"})
    launcher.options = ["--tag-output"]
    j = job(2, 1)
    assert line(launcher, j) == (
        "mpirun -np 2 -map-by ppr:1:node -hostfile hostfile.txt -x PATH -x LD_LIBRARY_PATH "
        "-x A -x B -x UCX_NET_DEVICES=mlx5_0:1 --tag-output")
    assert launcher.prelude(j) == ["printf 'seren-01 slots=1\\nseren-02 slots=1\\n' > hostfile.txt"]
    assert launcher.hosts(j) == ["seren-01", "seren-02"]


def test_hostfile_mpirun_refuses_more_nodes_than_the_partition_lists():
    launcher = make("mpirun-hostfile", part=partition(SEREN[:3]))
    with pytest.raises(ValueError, match="lists 3 nodes, 4 needed"):
        launcher.prelude(job(4, 1))
    with pytest.raises(ValueError, match="lists 0 nodes"):
        make("mpirun-hostfile").prelude(job(2, 1))  # no partition given


def test_tasks_that_do_not_fill_nodes_are_refused(launchers):
    with pytest.raises(ValueError, match="do not fill"):
        launchers.geometry(SimpleNamespace(num_tasks=5, num_tasks_per_node=2))
    assert launchers.geometry(SimpleNamespace(num_tasks=3, num_tasks_per_node=None)) == (1, 3)


# -- mpirun-onehost (local) -----------------------------------------------------------------
@pytest.mark.parametrize("nodes, ppn, round_robin", [(1, 2, True), (2, 2, False), (2, 3, True)])
def test_onehost_mpirun_puts_every_rank_here(nodes, ppn, round_robin):
    launcher = make("mpirun-onehost", round_robin=round_robin, env={"OMPI_MCA_btl": "tcp,self"})
    j = job(nodes, ppn)
    assert line(launcher, j) == f"mpirun -np {nodes * ppn} --oversubscribe --bind-to none"
    assert launcher.prelude(j) == [] and launcher.hosts(j) == []
    assert launcher.one_host is True
    assert not any(getlauncher(n).one_host for n in OURS if n != "mpirun-onehost")


# -- mpirun-slurm (orfeo) -------------------------------------------------------------------
@pytest.mark.parametrize(
    "nodes, ppn, round_robin, want",
    [
        (2, 1, False, "mpirun -np 2 --map-by node"),  # the ORFEO IMB notes
        (2, 1, True, "mpirun -np 2 --map-by node"),
        (2, 3, True, "mpirun -np 6 --map-by ppr:3:node --rank-by node"),
        (2, 8, False, "mpirun -np 16 --map-by ppr:8:node"),
        (1, 2, True, "mpirun -np 2"),  # one node: the allocation's, no mapping
    ],
)
def test_slurm_mpirun_maps_by_node(nodes, ppn, round_robin, want):
    launcher = make("mpirun-slurm", round_robin=round_robin)
    assert line(launcher, job(nodes, ppn)) == want
    assert launcher.prelude(job(nodes, ppn)) == []


def test_slurm_mpirun_exports_in_the_order_given():
    launcher = make("mpirun-slurm", env={"UCX_NET_DEVICES": "bond0", "A": "1"})
    assert line(launcher, job(2, 1)) == (
        "mpirun -np 2 --map-by node -x UCX_NET_DEVICES=bond0 -x A=1")


# -- srun -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, nodes, round_robin, want",
    [
        ("srun-placed", 2, True, "srun --distribution=cyclic"),
        ("srun-placed", 2, False, "srun"),
        ("srun-placed", 1, True, "srun"),
        ("srun-knl", 8, True, "srun -c 4 --cpu_bind=cores --distribution=cyclic"),
        ("srun-knl", 8, False, "srun -c 4 --cpu_bind=cores"),
        ("srun-pmix", 2, True, "srun --mpi=pmix --distribution=cyclic"),
        ("srun-pmix", 1, True, "srun --mpi=pmix"),
    ],
)
def test_srun_distribution_follows_the_intent(name, nodes, round_robin, want):
    # variables reach srun's ranks from the job script: no --export=NAME=value (which would
    # drop the rest of the environment)
    launcher = make(name, round_robin=round_robin, env={"FABRICTEST_VERBS": "sim"})
    assert line(launcher, job(nodes, 4)) == want
    assert launcher.prelude(job(nodes, 4)) == []


def test_srun_keeps_reframes_cpus_per_task():
    launcher = make("srun-placed")
    launcher.use_cpus_per_task = True
    j = job(2, 1)
    j.num_cpus_per_task = 8
    assert line(launcher, j) == "srun --cpus-per-task=8 --distribution=cyclic"

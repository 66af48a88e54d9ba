"""fabrictest's job launchers, registered with ReFrame's launcher registry.

``settings.py`` loads this file (once per process: ReFrame refuses a name registered twice)
before the system files, whose partitions name a launcher here in ``"launcher"`` (K ranks per
node on N nodes):

* ``mpirun-hostfile`` (seren): ``printf 'seren-01 slots=K\\n...' > hostfile.txt`` before the
  launch, then ``mpirun -np NK -map-by ppr:K:node [--rank-by node] -hostfile hostfile.txt
  -x PATH -x LD_LIBRARY_PATH -x <partition env names> [-x NAME=value ...]`` (the SEREN tx/rx
  notes);
* ``mpirun-onehost`` (local): ``mpirun -np NK --oversubscribe --bind-to none``, every rank on
  this host whatever N;
* ``mpirun-slurm`` (orfeo): Open MPI inside a Slurm allocation, ``mpirun -np NK``, with N > 1
  ``--map-by node`` (K = 1, the ORFEO IMB notes) or ``--map-by ppr:K:node [--rank-by node]``,
  then ``[-x NAME=value ...]``;
* ``srun-placed`` (slingshot, crusher, vcluster): ``srun [--distribution=cyclic]``;
* ``srun-knl`` (cori): ``srun -c 4 --cpu_bind=cores [--distribution=cyclic]`` (the all-to-many
  (Cori) notes);
* ``srun-pmix`` (cuda-node): ``srun --mpi=pmix [--distribution=cyclic]`` (Open MPI started by
  Slurm through PMIx).

They are ReFrame launchers: ``command(job)`` builds the line from ReFrame's own task counts
(``job.num_tasks``, ``job.num_tasks_per_node``; N = num_tasks / num_tasks_per_node), and a
test's ``job.launcher.options`` follow it. Scheduler options belong to the partition instead
(``access``; ``resources`` such as crusher's GPU binding, which a test asks for with
``extra_resources``). What our launchers add is a small protocol, which
``reframe_tests/fabric_placement.py`` speaks (a launcher without ``prelude`` is not ours, and
gets only the task counts):

* ``round_robin`` (bool, default True): the placement intent. True: rank r runs on node
  r mod N (``--rank-by node``, ``--distribution=cyclic``); False: block, a node's K ranks are
  consecutive. With one node there is no difference.
* ``partition``: the ReFrame partition the job runs on, set by the test; ``mpirun-hostfile``
  reads the node names (``extras['nodes']``) and the environment to forward from it.
* ``env_vars`` (ReFrame's): variables every rank needs. Open MPI's mpirun across hosts forwards
  only what ``-x`` names, so ``mpirun-hostfile`` and ``mpirun-slurm`` pass them
  ``-x NAME=value``; ``mpirun-onehost`` and the srun launchers leave them out, as their ranks
  inherit the job script's environment, where the test exports them too (ReFrame's own srun
  would write ``--export=NAME=value``, which drops the rest of it).
* ``prelude(job)``: shell commands that must run before the launch (a launcher writes no file:
  the hostfile is written by the job script); the test appends them to ``prerun_cmds``.
* ``hosts(job)``: each node's host name, in the order the ranks are placed on them, where
  the launcher chooses the hosts (the hostfile); ``[]`` where the scheduler does.
* ``one_host`` (class attribute): every rank starts on this host, so groups of ranks may stand
  for nodes (``mpirun-onehost``).
"""

from __future__ import annotations

from reframe.core.backends import register_launcher
from reframe.core.launchers import JobLauncher
from reframe.core.launchers.mpi import SrunLauncher

#: the file mpirun-hostfile's prelude writes in the stage directory and mpirun reads
HOSTFILE = "hostfile.txt"


def hostfile_lines(nodes: list[str], slots: int) -> list[str]:
    """The SEREN tx/rx notes' hostfile: ``seren-01 slots=2`` per node."""
    return [f"{node} slots={slots}" for node in nodes]


def geometry(job) -> tuple[int, int]:
    """(nodes, ranks per node) of a job: N = num_tasks / num_tasks_per_node (one node when
    num_tasks_per_node is unset)."""
    tasks = int(job.num_tasks or 1)
    per_node = int(job.num_tasks_per_node or tasks)
    if per_node <= 0 or tasks % per_node:
        raise ValueError(f"{tasks} tasks do not fill nodes of {per_node} ranks")
    return tasks // per_node, per_node


class FabricLauncher:
    """The protocol above, with its defaults (no prelude, hosts chosen by the scheduler); mixed
    into a :class:`JobLauncher` (ReFrame lets a launcher inherit its variables only once)."""

    #: every rank starts on this host, however many nodes the test asks for
    one_host = False

    def __init__(self):
        super().__init__()
        #: rank r on node r mod N (True) or a node's ranks consecutive (False)
        self.round_robin = True
        #: the ReFrame partition the job runs on (set by the test)
        self.partition = None

    def prelude(self, job) -> list[str]:
        return []

    def hosts(self, job) -> list[str]:
        return []

    def exports(self) -> list[str]:
        """``-x NAME=value`` for every variable of ``env_vars`` (Open MPI's mpirun)."""
        return [tok for name, value in self.env_vars.items() for tok in ("-x", f"{name}={value}")]


@register_launcher("mpirun-hostfile")
class HostfileMpirun(FabricLauncher, JobLauncher):
    """Open MPI's mpirun outside any batch system: the hosts are the first N of the partition's
    ``extras['nodes']``, written with ``slots=K`` to a hostfile; ranks on other hosts start over
    ssh, so PATH, LD_LIBRARY_PATH and the partition's variables are forwarded by name."""

    def nodes(self, job) -> list[str]:
        count, _ = geometry(job)
        names = list(self.partition.extras.get("nodes", [])) if self.partition else []
        if len(names) < count:
            raise ValueError(f"the partition lists {len(names)} nodes, {count} needed")
        return names[:count]

    def hosts(self, job) -> list[str]:
        return self.nodes(job)

    def prelude(self, job) -> list[str]:
        _, per_node = geometry(job)
        body = "\\n".join(hostfile_lines(self.nodes(job), per_node))
        return [f"printf '{body}\\n' > {HOSTFILE}"]

    def command(self, job):
        _, per_node = geometry(job)
        cmd = ["mpirun", "-np", str(job.num_tasks), "-map-by", f"ppr:{per_node}:node"]
        if self.round_robin:
            cmd += ["--rank-by", "node"]
        cmd += ["-hostfile", HOSTFILE]
        forward = ["PATH", "LD_LIBRARY_PATH"]
        if self.partition is not None:
            forward += sorted(self.partition.local_env.env_vars)
        for name in forward:
            cmd += ["-x", name]
        return cmd + self.exports()


@register_launcher("mpirun-onehost")
class OneHostMpirun(FabricLauncher, JobLauncher):
    """Open MPI's mpirun on this host only: every rank here, sharing the cores."""

    one_host = True

    def command(self, job):
        return ["mpirun", "-np", str(job.num_tasks), "--oversubscribe", "--bind-to", "none"]


@register_launcher("mpirun-slurm")
class SlurmMpirun(FabricLauncher, JobLauncher):
    """Open MPI's mpirun inside a Slurm allocation (the hosts are the allocation's)."""

    def command(self, job):
        nodes, per_node = geometry(job)
        cmd = ["mpirun", "-np", str(job.num_tasks)]
        if nodes > 1 and per_node == 1:
            cmd += ["--map-by", "node"]
        elif nodes > 1:
            cmd += ["--map-by", f"ppr:{per_node}:node"]
            if self.round_robin:
                cmd += ["--rank-by", "node"]
        return cmd + self.exports()


@register_launcher("srun-placed")
class PlacedSrun(FabricLauncher, SrunLauncher):
    """Slurm's srun with the placement intent; the scheduler's options come from the job."""

    #: options for every launch of the partition (a subclass per system)
    fixed_options: tuple[str, ...] = ()

    def __init__(self):
        super().__init__()  # SrunLauncher's: detects --cpus-per-task support (srun --version)
        self.env_vars = {}  # SrunLauncher does not call JobLauncher.__init__

    def command(self, job):
        cmd = ["srun"]
        if self.use_cpus_per_task and job.num_cpus_per_task:
            cmd.append(f"--cpus-per-task={job.num_cpus_per_task}")
        cmd += self.fixed_options
        nodes, _ = geometry(job)
        if self.round_robin and nodes > 1:
            cmd.append("--distribution=cyclic")
        return cmd


@register_launcher("srun-knl")
class KnlSrun(PlacedSrun):
    """Cori KNL: 4 hardware threads per rank, bound to cores (the all-to-many (Cori) notes)."""

    fixed_options = ("-c", "4", "--cpu_bind=cores")


@register_launcher("srun-pmix")
class PmixSrun(PlacedSrun):
    """srun starting Open MPI ranks through PMIx (an Open MPI built with Slurm support, as
    ``cuda-node``'s Spack environment builds it): ``srun --mpi=pmix``."""

    fixed_options = ("--mpi=pmix",)

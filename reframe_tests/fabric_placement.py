"""Placement of a test's ranks, mixed into :class:`fabric_base.FabricTest`: task counts and the
placement intent, nothing per scheduler.

A test calls :meth:`Placement.place` (``nodes`` x ``ppn`` ranks, round-robin over the nodes or
block); the partition's launcher (``config/reframe/launchers.py``, named by the partition's
``"launcher"``) turns that into its command line. The launchers' protocol, documented there:
``round_robin``, ``partition``, ``env_vars``, ``prelude(job)``, ``hosts(job)`` and the class
attribute ``one_host``. Another launcher (ReFrame's own) gets the task counts only.
"""

from __future__ import annotations

import reframe as rfm
from reframe.core.builtins import run_before


def speaks_protocol(launcher) -> bool:
    """A launcher of ``config/reframe/launchers.py`` (it has a prelude)."""
    return callable(getattr(launcher, "prelude", None))


class Placement(rfm.RegressionTestPlugin):
    """Task counts and placement intent, handed to the partition's launcher."""

    @property
    def one_host(self) -> bool:
        """Every rank starts on this host (the partition's launcher says so): on such a
        partition two groups of ranks may stand for two nodes."""
        return bool(getattr(self.current_partition.launcher_type, "one_host", False))

    def _brief_launcher(self) -> None:
        """Give the launcher what ReFrame gives it only at run time (the task counts) and the
        partition it runs on, so its command line and prelude can be read before that."""
        self.job.num_tasks = self.num_tasks
        self.job.num_tasks_per_node = self.num_tasks_per_node
        if speaks_protocol(self.job.launcher):
            self.job.launcher.partition = self.current_partition

    def launch_prefix(self) -> str:
        """The launcher command line of this job (for extra launches in prerun_cmds)."""
        self._brief_launcher()
        return " ".join(self.job.launcher.run_command(self.job).split())

    def placed_hosts(self) -> list[str]:
        """The host of each node, in the order the ranks are placed on them, where the
        launcher chooses the hosts (a hostfile); [] where the scheduler does."""
        self._brief_launcher()
        hosts = getattr(self.job.launcher, "hosts", None)
        return list(hosts(self.job)) if callable(hosts) else []

    # -- placement ------------------------------------------------------------------------
    def place(self, nodes: int, ppn: int, round_robin: bool = True) -> None:
        """Run ``nodes * ppn`` ranks, ``ppn`` per node, numbered round-robin over the nodes
        (``--rank-by node``) unless ``round_robin`` is false (block: fill a node first). On a
        :attr:`one_host` partition all of them run on this host."""
        self.num_tasks = nodes * ppn
        self.num_tasks_per_node = ppn
        if speaks_protocol(self.job.launcher):
            self.job.launcher.round_robin = round_robin
        if self.needs_gpu():
            # one GPU per rank: the partition's "gpu" resource (crusher's --gpus-per-task=1
            # --gpu-bind=closest); ReFrame ignores it on a partition without one
            self.extra_resources = {**self.extra_resources, "gpu": {"gpus_per_task": 1}}

    @run_before("run")
    def _launcher_prelude(self):
        """The commands the launcher needs run before the launch (the hostfile)."""
        if speaks_protocol(self.job.launcher):
            self._brief_launcher()
            self.prerun_cmds = [*self.prerun_cmds, *self.job.launcher.prelude(self.job)]

    def export_to_ranks(self, variables: dict) -> None:
        """Set ``variables`` in the job and hand them to the launcher, which puts them on its
        command line where its ranks would not inherit them (Open MPI's mpirun across hosts:
        ``-x UCX_NET_DEVICES=bond0``, the ORFEO IMB notes)."""
        self.env_vars.update(variables)
        if speaks_protocol(self.job.launcher):
            self.job.launcher.env_vars.update(sorted(variables.items()))

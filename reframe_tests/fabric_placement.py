"""Where a case runs and how its ranks are placed, mixed into :class:`fabric_base.FabricCheck`.

Listing: a case is instantiated only on the current system's partitions that can run it, so
that ``reframe -l --system X`` lists exactly what runs on X and ``-r`` skips nothing for a static
reason. A partition fits a case when it has every feature the case needs (``requires``,
extended by :meth:`Placement.required_features`: ``method="rdma"`` needs ``rdma``, device
buffers ``gpu``) and the family's :meth:`Placement.why_not_on` finds nothing against it (too
few nodes for :meth:`Placement.placement_on`, a transport it does not define, more ranks per
node than ``max_ranks_per_node``). The check runs after init, when parameters and ``-S``
variables are set, and becomes the case's ``valid_systems``; each partition left out is logged
at debug level with its reason (``reframe -l -vv``, or the log file). What is known only at
run time (a binary missing on this host) still skips with its reason.

Placement: a test calls :meth:`Placement.place` (``nodes`` x ``ppn`` ranks, round-robin over
the nodes or block): task counts and the placement intent, nothing per scheduler. The
partition's launcher (``config/reframe/launchers.py``, named by the partition's ``"launcher"``)
turns that into its command line. The launchers' protocol, documented there: ``round_robin``,
``partition``, ``env_vars``, ``prelude(job)``, ``hosts(job)`` and the class attribute
``one_host`` (read here by :func:`one_host`). Another launcher (ReFrame's own) gets the task
counts only.
"""

from __future__ import annotations

import reframe as rfm
import reframe.core.runtime as rt
from fabric_node_sets import TopologyError
from fabric_variables import PLACING
from fabric_variables import problems as variable_problems
from reframe.core.builtins import run_after, run_before
from reframe.core.exceptions import ReframeError
from reframe.core.logging import getlogger

_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    """One warning line per problem, however many cases meet it (plain ``reframe -l``)."""
    if message not in _WARNED:
        _WARNED.add(message)
        getlogger().warning(f"{message}: the cases that need its node sets are listed and "
                            "fail at setup")


def node_count(part) -> int:
    """The nodes partition ``part`` has: its ``num_nodes``, else the length of its ``nodes``,
    else 1."""
    nodes = part.extras.get("nodes")
    return int(part.extras.get("num_nodes", len(nodes) if nodes else 1))


def job_nodes(test) -> list[str]:
    """The nodes ``test``'s job ran on, as the scheduler reported them; ``[]`` where it never
    saw them. ReFrame's ``squeue`` scheduler asks ``scontrol show hostname`` for a node list it
    never polled when the job ended before its first poll, and gets ``None`` back as a host
    name; where the partition lists its nodes, a name outside that list is not one."""
    names = [str(n) for n in (getattr(getattr(test, "job", None), "nodelist", None) or [])]
    part = getattr(test, "current_partition", None)
    known = part.extras.get("nodes") if part is not None else None
    if known:
        return names if all(n in known for n in names) else []
    return [] if any(n in ("None", "") for n in names) else names


def gpus_on(part) -> int:
    """The GPUs a node of partition ``part`` has: its ``devices`` of type ``gpu`` (crusher's 8
    GCDs; on ``local`` the GPUs ``nvidia-smi`` lists), 0 where it declares none."""
    return sum(int(d.num_devices or 0) for d in part.select_devices("gpu"))


def one_host(part) -> bool:
    """Every rank starts on this host on partition ``part`` (its launcher says so,
    ``config/reframe/launchers.py``): groups of ranks may stand for nodes there."""
    return bool(getattr(part.launcher_type, "one_host", False))


def speaks_protocol(launcher) -> bool:
    """A launcher of ``config/reframe/launchers.py`` (it has a prelude)."""
    return callable(getattr(launcher, "prelude", None))


class Placement(rfm.RegressionTestPlugin):
    """``requires``, ``why_not_on()``, ``placement_on()`` and the partition facts they read;
    task counts and placement intent, handed to the partition's launcher."""

    #: partition features every case of the family needs (``"rdma"``, ``"gpu"``)
    requires: tuple[str, ...] = ()

    # -- listing: where a case runs (after init, before a partition is current) ------------
    @run_after("init")
    def _list_only_where_it_runs(self):
        if any(name in PLACING for name in variable_problems(self)):
            # a placing value that makes no sense (-S num_nodes=-3, -S num_nodes=abc, fewer
            # nodes than the family needs anywhere): listed everywhere, so that its refusal
            # (fabric_base, before setup) is seen rather than the case silently left out
            self.valid_systems = ["*"]
            return
        needed = self.required_features()
        fits = []
        self.topology_problems = {}
        for part in rt.runtime().system.partitions:
            lacks = [name for name in needed if name not in part.features]
            try:
                why = self.why_not_on(part) if not lacks else "has no " + " ".join(
                    f"+{name}" + (f" ({part.extras['lacks'][name]})"
                                  if part.extras.get("lacks", {}).get(name) else "")
                    for name in lacks)
            except TopologyError as err:
                # listed, to fail at setup: a broken topology file must not make a family
                # vanish from the listing (issue 43: 51 checks listed instead of 79)
                _warn_once(str(err))
                self.topology_problems[part.fullname] = str(err)
                fits.append(part.fullname)
                continue
            if why:
                getlogger().debug(f"{self.display_name}: not listed on {part.fullname}: {why}")
            else:
                fits.append(part.fullname)
        self.valid_systems = fits

    @run_after("setup")  # the base's hook, before the family's (which would place the case)
    def _fail_on_a_broken_topology(self):
        problem = getattr(self, "topology_problems", {}).get(self.current_partition.fullname)
        if problem:
            raise ReframeError(f"{problem}: this case needs the partition's node sets")

    def required_features(self) -> list[str]:
        """The partition features this case needs, in a fixed order (see :attr:`requires`)."""
        needed = list(self.requires)
        if getattr(self, "method", None) == "rdma":
            needed.append("rdma")
        if self.needs_gpu():
            needed.append("gpu")
        return list(dict.fromkeys(needed))

    def needs_gpu(self) -> bool:
        """Subclasses running with device buffers return True (needs ``+gpu``; adds the
        partition's GPU binding options, e.g. --gpus-per-task=1 --gpu-bind=closest)."""
        return False

    def placement_on(self, part) -> tuple[int, int] | None:
        """``(nodes, ranks per node)`` this case places on partition ``part`` (None: it places
        nothing itself); raise ValueError with the reason where ``part`` cannot hold it."""
        return None

    def why_not_on(self, part) -> str | None:
        """Why this case cannot run on partition ``part``, from its static facts; None when it
        can. The default: :meth:`placement_on` fails, or asks more ranks per node than
        ``extras.max_ranks_per_node``. Families add their own reasons and call this one."""
        try:
            placed = self.placement_on(part)
        except TopologyError:
            raise  # the configuration's fault: the listing keeps the case to fail it
        except ValueError as err:
            return str(err)
        except TypeError as err:  # another test's -S value its own rules refuse (text)
            return f"cannot place it: {err}"
        limit = part.extras.get("max_ranks_per_node")
        if placed and limit is not None and placed[1] > int(limit):
            return f"{placed[1]} ranks per node exceed max_ranks_per_node={limit}"
        return None

    # -- partition facts (of any partition: the listing runs before one is current) --------
    def nodes_on(self, part) -> int:
        """Nodes this case may use on ``part``: ``-S num_nodes=N``, else the partition's
        ``num_nodes`` (or the length of its ``nodes``, or 1)."""
        return self.num_nodes or node_count(part)

    def pair_nodes_on(self, part) -> int:
        """Nodes for a two-rank case: 2, or 1 on a one-host partition (both ranks here)."""
        nodes = self.nodes_on(part)
        if nodes >= 2:
            return 2
        if not one_host(part):
            raise ValueError(f"needs 2 nodes, has {nodes}")
        return 1

    # -- placement: task counts and intent, for the launcher (after setup) -----------------
    def place(self, nodes: int, ppn: int, round_robin: bool = True) -> None:
        """Run ``nodes * ppn`` ranks, ``ppn`` per node, numbered round-robin over the nodes
        (``--rank-by node``) unless ``round_robin`` is false (block: fill a node first). On a
        :func:`one_host` partition all of them run on this host."""
        self.num_tasks = nodes * ppn
        self.num_tasks_per_node = ppn
        if speaks_protocol(self.job.launcher):
            self.job.launcher.round_robin = round_robin
        if self.needs_gpu():
            # one GPU per rank: the partition's "gpu" resource (crusher's --gpus-per-task=1
            # --gpu-bind=closest); ReFrame ignores it on a partition without one
            self.extra_resources = {**self.extra_resources, "gpu": {"gpus_per_task": 1}}

    def brief_launcher(self) -> None:
        """Give the launcher what ReFrame gives it only at run time (the task counts) and the
        partition it runs on, so its command line and prelude can be read before that."""
        self.job.num_tasks = self.num_tasks
        self.job.num_tasks_per_node = self.num_tasks_per_node
        if speaks_protocol(self.job.launcher):
            self.job.launcher.partition = self.current_partition

    def launch_prefix(self) -> str:
        """The launcher command line of this job (for extra launches in prerun_cmds)."""
        self.brief_launcher()
        return " ".join(self.job.launcher.run_command(self.job).split())

    def placed_hosts(self) -> list[str]:
        """The host of each node, in the order the ranks are placed on them, where the
        launcher chooses the hosts (a hostfile); [] where the scheduler does."""
        self.brief_launcher()
        hosts = getattr(self.job.launcher, "hosts", None)
        return list(hosts(self.job)) if callable(hosts) else []

    @run_before("run")
    def _launcher_prelude(self):
        """The commands the launcher needs run before the launch (the hostfile)."""
        if speaks_protocol(self.job.launcher):
            self.brief_launcher()
            self.prerun_cmds = [*self.prerun_cmds, *self.job.launcher.prelude(self.job)]

    def export_to_ranks(self, variables: dict) -> None:
        """Set ``variables`` in the job and hand them to the launcher, which puts them on its
        command line where its ranks would not inherit them (Open MPI's mpirun across hosts:
        ``-x UCX_NET_DEVICES=bond0``, the ORFEO IMB notes)."""
        self.env_vars.update(variables)
        if speaks_protocol(self.job.launcher):
            self.job.launcher.env_vars.update(sorted(variables.items()))

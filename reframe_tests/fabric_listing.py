"""Where a test case is listed, mixed into :class:`fabric_base.FabricCheck`: only on the current
system's partitions that can run it, so that ``reframe -l --system X`` lists exactly what runs on
X and ``-r`` skips nothing for a static reason.

A partition fits a case when it has every feature the case needs (``requires``, extended by
:meth:`PartitionFilter.required_features`: ``method="rdma"`` needs ``rdma``, device buffers
``gpu``) and the family's :meth:`PartitionFilter.why_not_on` finds nothing against it (too few
nodes, a transport it does not define, more ranks per node than ``max_ranks_per_node``). The
check runs after init, when parameters and ``-S`` variables are set, and becomes the case's
``valid_systems``; each partition left out is logged at debug level with its reason
(``reframe -l -vv``, or the log file). What is known only at run time (a binary missing on this
host) still skips with its reason.
"""

from __future__ import annotations

import reframe as rfm
import reframe.core.runtime as rt
from reframe.core.builtins import run_after
from reframe.core.logging import getlogger


def node_count(part) -> int:
    """The nodes partition ``part`` has: its ``num_nodes``, else the length of its ``nodes``,
    else 1."""
    nodes = part.extras.get("nodes")
    return int(part.extras.get("num_nodes", len(nodes) if nodes else 1))


def one_host(part) -> bool:
    """Every rank starts on this host on partition ``part`` (its launcher says so,
    ``config/reframe/launchers.py``): groups of ranks may stand for nodes there."""
    return bool(getattr(part.launcher_type, "one_host", False))


class PartitionFilter(rfm.RegressionTestPlugin):
    """``requires``, ``why_not_on()`` and the partition facts they read."""

    #: partition features every case of the family needs (``"rdma"``, ``"gpu"``)
    requires: tuple[str, ...] = ()

    @run_after("init")
    def _list_only_where_it_runs(self):
        needed = self.required_features()
        fits = []
        for part in rt.runtime().system.partitions:
            lacks = [f"+{name}" for name in needed if name not in part.features]
            why = f"has no {' '.join(lacks)}" if lacks else self.why_not_on(part)
            if why:
                getlogger().debug(f"{self.display_name}: not listed on {part.fullname}: {why}")
            else:
                fits.append(part.fullname)
        self.valid_systems = fits

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
        except ValueError as err:
            return str(err)
        limit = part.extras.get("max_ranks_per_node")
        if placed and limit is not None and placed[1] > int(limit):
            return f"{placed[1]} ranks per node exceed max_ranks_per_node={limit}"
        return None

    # -- partition facts (of any partition: the filter runs before one is current) ---------
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

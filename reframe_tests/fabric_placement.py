"""Placement of a test's ranks on the partition's nodes, mixed into
:class:`fabric_base.FabricTest`: the three ways our systems launch (a hostfile with ``slots=`` and
``-map-by ppr:K:node --rank-by node`` as on seren; Slurm ``--nodes``/``--ntasks-per-node``; one
host with ``--oversubscribe``)."""

from __future__ import annotations

import reframe as rfm


def hostfile_lines(nodes: list[str], slots: int) -> list[str]:
    """The SEREN tx/rx notes' hostfile: ``seren-01 slots=2`` per node."""
    return [f"{node} slots={slots}" for node in nodes]



class Placement(rfm.RegressionTestPlugin):
    """Task counts, placement and the launcher options that go with them."""

    def launch_prefix(self) -> str:
        """The launcher command line of this job (for extra launches in prerun_cmds)."""
        return " ".join(self.job.launcher.run_command(self.job).split())

    # -- placement ------------------------------------------------------------------------
    def place(self, nodes: int, ppn: int, round_robin: bool = True) -> None:
        """Run ``nodes * ppn`` ranks, ``ppn`` per node, numbered round-robin over the nodes
        (``--rank-by node``) unless ``round_robin`` is false (block: fill a node first)."""
        self.num_tasks = nodes * ppn
        self.num_tasks_per_node = ppn
        opts = list(self.extra("launcher_options", []))
        if self.extra("hostfile"):
            names = list(self.extra("nodes", []))[:nodes]
            if len(names) < nodes:
                raise ValueError(f"partition lists {len(names)} nodes, {nodes} needed")
            body = "\\n".join(hostfile_lines(names, ppn))
            self.prerun_cmds = [*self.prerun_cmds, f"printf '{body}\\n' > hostfile.txt"]
            opts += ["-map-by", f"ppr:{ppn}:node"]
            if round_robin:
                opts += ["--rank-by", "node"]
            opts += ["-hostfile", "hostfile.txt"]
            # ranks on other hosts start from ssh: forward the environment they need
            forward = [
                "PATH",
                "LD_LIBRARY_PATH",
                *sorted(self.current_partition.local_env.env_vars),
            ]
            for name in forward:
                opts += ["-x", name]
        elif nodes > 1 and self.launcher_is("srun"):
            if round_robin:
                opts += ["--distribution=cyclic"]
        elif nodes > 1 and self.launcher_is("mpirun") and not any("map-by" in o for o in opts):
            # Open MPI inside an allocation: one rank per node is the ORFEO IMB notes'
            # `--map-by node`
            if ppn == 1:
                opts += ["--map-by", "node"]
            else:
                opts += ["--map-by", f"ppr:{ppn}:node"]
                if round_robin:
                    opts += ["--rank-by", "node"]
        gpu_opts = self.extra("gpu_job_options")
        if self.needs_gpu() and gpu_opts:
            self.job.options += list(gpu_opts)
        self.job.launcher.options = opts + list(self.job.launcher.options)


    def export_to_ranks(self, variables: dict) -> None:
        """Set ``variables`` in the job and, with Open MPI's mpirun across hosts (which forwards
        only what -x names), on the command line too: ``-x UCX_NET_DEVICES=bond0`` (the ORFEO
        IMB notes)."""
        self.env_vars.update(variables)
        if self.launcher_is("mpirun") and not self.is_local_host:
            opts = []
            for name, value in sorted(variables.items()):
                opts += ["-x", f"{name}={value}"]
            self.job.launcher.options += opts

    def pair_nodes(self) -> int:
        """Nodes for a two-rank test: 2, or 1 on a one-host partition (both ranks here)."""
        nodes = self.partition_nodes()
        if nodes >= 2:
            return 2
        self.skip_if(
            not self.is_local_host,
            f"needs 2 nodes, {self.current_partition.fullname} has {nodes}",
        )
        return 1

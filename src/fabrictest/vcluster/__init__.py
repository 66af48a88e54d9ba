"""The vcluster: a real Slurm cluster on one machine whose compute nodes are network namespaces
joined by veth links to a bridge (see docs/vcluster.md). `plan` is pure (names, addresses,
generated files); `cluster` does the work; `cli` is the `vcluster` command."""

from .plan import Plan, PlanError, default_state_dir

__all__ = ["Plan", "PlanError", "default_state_dir"]

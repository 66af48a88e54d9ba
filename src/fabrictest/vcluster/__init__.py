"""The vcluster: a real Slurm cluster on one machine whose compute nodes are network namespaces
joined by veth links to a bridge (see docs/vcluster.md).

`plan` (names, addresses, generated files) and `shaping` (rates, directions) are pure;
`shell` runs commands with deadlines; `network` builds the bridge, namespaces, links and their
shaping; `daemons` starts munge, MariaDB and Slurm; `cluster` orders them (up, down, status,
degrade, restore); `cli` is the `vcluster` command."""

from .plan import Plan, PlanError, default_state_dir

__all__ = ["Plan", "PlanError", "default_state_dir"]

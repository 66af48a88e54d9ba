"""NIC pre-flight health checks (the Slingshot acceptance notes' checklist, as far as a node can
check itself).

Per node: every RDMA port ACTIVE with its link up, the expected link layer, an active MTU and
rate at least the expected ones, a RoCE v2 GID (Ethernet ports), the port's netdev up with the
expected MTU, and ARP cache thresholds (``net.ipv4.neigh.default.gc_thresh{1,2,3}``) large
enough for the cluster. Across nodes: :func:`~fabrictest.health.checks.unreachable_pairs` of a
ping matrix.

- :mod:`.checks`: the pure checks, parsed records in, one ``CheckResult`` per check out;
- :mod:`.gather`: reading those records from the node (commands, sysfs, /proc);
- :mod:`.cli`: the ``fabric-health`` command that joins them, its lines and exit codes.
"""


def main(argv: list[str] | None = None) -> int:
    """The entry point ``fabrictest.health:main`` of venvs installed before the split into a
    package (their ``fabric-health`` script names it until ``scripts/install.sh`` runs again)."""
    from .cli import main as cli_main

    return cli_main(argv)

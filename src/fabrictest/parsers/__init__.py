"""Pure functions turning benchmark and tool outputs into typed records.

Every parser takes the tool's text (stdout, stderr mixed in is tolerated) and returns
dataclasses; none of them runs a program or reads a file (:mod:`fabrictest.sysinfo` reads
sysfs and hands the texts to ``sysfs``).

=================  ========================================  ============================
module             function                                  tool
=================  ========================================  ============================
``osu``            ``parse_osu`` / ``parse_osu_all``         OSU Micro-Benchmarks 5.x, 7.x
``imb``            ``parse_imb``                             Intel MPI Benchmarks 2018+
``perftest``       ``parse_perftest``                        ib_write_bw, ib_send_bw, ...
``txrx``           ``parse_txrx``                            our ``txrx``, SEREN tx/rx notes' tool
``alltomany``      ``parse_alltomany`` / ``..._all``         ``isendrecv``, all-to-many (Cori) notes
``bisection``      ``parse_bisection``                       ``bisec_bw`` (Slingshot acceptance)
``ibv_devinfo``    ``parse_ibv_devinfo``                     ``ibv_devinfo [-v]``
``rdma_link``      ``parse_rdma_link``                       ``rdma link [show]`` (+ ``-j``)
``sinfo``          ``parse_sinfo``                           ``sinfo``, ``sinfo -Nel``
``hostlists``      ``expand`` / ``compress``                 every Slurm hostlist (python-hostlist)
``topology``       ``parse_scontrol_topology`` and others    ``scontrol show topology``, topology.conf
                                                             (tree, block), our own file, xnames
``node_sets``      ``derive_node_sets`` / ``merge``          a topology's edge/local/global sets
``sysfs``          ``parse_port`` / ``parse_gid``            /sys/class/infiniband files
``ping``           ``parse_ping``                            iputils ``ping``
``health``         ``parse_health``                          our ``fabric-health``
``lldp``           ``parse_lldpctl`` / ``parse_lldptool``    lldpd's ``lldpctl``, open-lldp's ``lldptool``
``ip_addr``        ``parse_ip_addr``                         iproute2 ``ip addr`` (+ ``-j``)
``getent``         ``parse_ahosts`` / ``parse_hosts``        ``getent ahosts|hosts``
``inventory``      ``parse_inventory``                       a site's cabling inventory
``slurm_node``     ``parse_slurm_nodes``                     ``scontrol -o show node``
``launch``         ``launch_failures`` / ``describe``        mpirun, srun, MPI errors
``nccl``           ``parse_nccl``                            nccl-tests, rccl-tests
=================  ========================================  ============================

All raise :class:`ParseError` (a ``ValueError``), and no other exception, on text that is not
their tool's output. Whether a parsed output is *whole* (every size, stream, line and closing
line the run should print) is asked of the result with each benchmark module's ``missing()``,
which returns what is missing (docs/parsers.md); :func:`ends_mid_line` tells a text cut while a
line was written. The counter tools' texts (sysfs counters, perfquery, ethtool -S, cxi_stat,
/proc/net/snmp, our snapshots) are read in the counters room, :mod:`fabrictest.counters`.
"""

from __future__ import annotations

from ._util import ends_mid_line
from .errors import ParseError

__all__ = ["ParseError", "ends_mid_line"]

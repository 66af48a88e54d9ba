"""`orfeo`: Slurm, EPYC partition, InfiniBand (UCX) and 25 GbE on bond0 (the ORFEO IMB notes).

IMB PingPong is run as the ORFEO IMB notes do, ``mpirun --map-by node`` inside the allocation
(the ``mpirun-slurm`` launcher maps: ``--map-by node`` for one rank per node, ``ppr:K:node``
otherwise), and the transport is chosen with ``UCX_NET_DEVICES`` (``bond0`` for TCP over the
25 GbE bond).
"""

import os

system = {
    "name": "orfeo",
    "descr": "ORFEO (Area Science Park): EPYC nodes, InfiniBand 100 Gb/s + 25 GbE bond0",
    "hostnames": [r"orfeo.*", r"login\d+\.orfeo.*"],
    # Lmod where it is installed; "nomod" elsewhere (e.g. --dry-run on a laptop or in CI)
    "modules_system": "lmod" if os.environ.get("LMOD_CMD") else "nomod",
    "partitions": [
        {
            "name": "EPYC",
            "descr": "EPYC nodes (salloc -p EPYC)",
            "scheduler": "slurm",
            "launcher": "mpirun-slurm",  # --map-by node / ppr:K:node (launchers.py)
            "access": ["--partition=EPYC"],
            "environs": ["openmpi"],
            # osu, imb, perftest: what config/spack/orfeo (fabrictest+rdma) provides
            "features": ["mpi", "slurm", "rdma", "spack", "osu", "imb", "perftest"],
            "max_jobs": 8,
            "time_limit": "30m",
            "sched_options": {"use_nodes_option": True},
            "env_vars": [["UCX_NET_DEVICES", "mlx5_0:1"]],
            "extras": {
                "num_nodes": 2,
                "ranks_per_node": 1,
                "rdma_device": "mlx5_0",
                "link_layer": "InfiniBand",
                "expect_mtu": 4096,
                "expect_rate": 100,
                # the fastest link of a node (InfiniBand 100 Gb/s); TCP runs over the 25 GbE
                # bond (the ORFEO IMB notes): a figure above either is impossible
                "line_rate_gbps": 100,
                "transport_line_rate_gbps": {"tcp": 25},
                "transports": {
                    "rdma": {"UCX_NET_DEVICES": "mlx5_0:1"},
                    "tcp": {"UCX_NET_DEVICES": "bond0"},
                },
            },
        }
    ],
}

environments = [
    {
        "name": "openmpi",
        "target_systems": ["orfeo"],
        "modules": ["openMPI/4.1.6/gnu"],
        "cc": "mpicc",
        "cxx": "mpicxx",
        "ftn": "mpif90",
        "features": ["mpi", "openmpi"],
    }
]

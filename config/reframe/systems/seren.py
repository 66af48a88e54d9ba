"""`seren`: RoCE 100 GbE cluster, no batch system, Open MPI mpirun with a hostfile (the SEREN
tx/rx notes).

Binaries from the Spack environment ``config/spack/seren`` (``fabrictest+rdma``: txrx with
pyverbs, the C programs, perftest, OSU, IMB) on the shared file system, where the notes used a venv;
mpirun forwards ``PATH``/``LD_LIBRARY_PATH`` (``-x``) to the ranks it starts over ssh.
The tx/rx scenarios are launched exactly as the notes do: a hostfile of ``seren-NN slots=K``
lines and ``mpirun -map-by ppr:K:node --rank-by node -hostfile FILE``. Ten nodes seren-[01-10].
"""

NODES = [f"seren-{i:02d}" for i in range(1, 11)]

system = {
    "name": "seren",
    "descr": "SEREN: 10 nodes, 100 GbE RoCE (ConnectX), mpirun + hostfile",
    "hostnames": [r"seren-\d+"],
    "modules_system": "nomod",
    "partitions": [
        {
            "name": "roce",
            "descr": "seren-[01-10] over RoCE v2",
            "scheduler": "local",
            "launcher": "mpirun-hostfile",  # hostfile slots=K, -map-by ppr:K:node (launchers.py)
            "environs": ["openmpi"],
            # osu, imb, perftest: what config/spack/seren (fabrictest+rdma) provides
            "features": ["mpi", "rdma", "spack", "osu", "imb", "perftest"],
            "max_jobs": 1,
            "env_vars": [["UCX_NET_DEVICES", "mlx5_0:1"]],
            "extras": {
                "nodes": NODES,
                "num_nodes": len(NODES),
                "ranks_per_node": 2,
                "rdma_device": "mlx5_0",
                "gid_index": 3,
                "link_layer": "Ethernet",
                "expect_mtu": 4096,
                "expect_rate": 100,
                "line_rate_gbps": 100,  # 100 GbE RoCE (the SEREN tx/rx notes: ~97 Gbps)
                "transports": {
                    "rdma": {"UCX_NET_DEVICES": "mlx5_0:1"},
                },
            },
        }
    ],
}

environments = [
    {
        "name": "openmpi",
        "target_systems": ["seren"],
        "cc": "mpicc",
        "cxx": "mpicxx",
        "ftn": "mpif90",
        "features": ["mpi", "openmpi"],
    }
]

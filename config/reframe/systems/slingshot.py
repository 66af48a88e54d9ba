"""`slingshot`: an HPE Slingshot system, Slurm + srun, cray-mpich (the Slingshot acceptance notes).

OSU one-sided get bandwidth between two nodes of one switch, ``osu_mbw_mr`` per switch, group
and globally (node sets from ``extras.topology``), the bisection program, the NIC pre-flight.
"""

import os

system = {
    "name": "slingshot",
    "descr": "HPE Cray EX with Slingshot (100 Gb/s NICs, 2 groups x 2 switches)",
    "hostnames": [r"slingshot.*", r"uan\d+"],
    # Lmod where it is installed; "nomod" elsewhere (e.g. --dry-run on a laptop or in CI)
    "modules_system": "lmod" if os.environ.get("LMOD_CMD") else "nomod",
    "partitions": [
        {
            "name": "compute",
            "descr": "compute nodes on the HSN",
            "scheduler": "slurm",
            "launcher": "srun-placed",
            "access": ["--partition=compute"],
            "environs": ["PrgEnv-gnu"],
            # osu, imb, perftest, gpcnet: what config/spack/slingshot (fabrictest+rdma+gpcnet)
            # provides
            "features": ["mpi", "slurm", "rdma", "spack", "osu", "imb", "perftest", "gpcnet"],
            "max_jobs": 8,
            "time_limit": "30m",
            # the node sets' jobs name their nodes: Slurm says ReqNodeNotAvail while another
            # job holds them (reframe-hpc/reframe#2411), so that reason does not cancel; the
            # wait is bounded by extras.max_pending_time instead
            "sched_options": {"use_nodes_option": True, "ignore_reqnodenotavail": True},
            "env_vars": [["MPICH_OFI_NIC_POLICY", "NUMA"]],
            "extras": {
                "num_nodes": 64,
                "ranks_per_node": 20,
                # Slingshot 10: ConnectX-5 100 Gb/s HSN NICs (hsn0/hsn1) speaking RoCE; the
                # Slingshot acceptance notes' figures (~12.2 GB/s per node) are that line rate
                "rdma_device": "mlx5_0",
                "link_layer": "Ethernet",
                "expect_mtu": 4096,
                "expect_rate": 100,
                # two 100 Gb/s HSN NICs per node (hsn0/hsn1), 200 Gb/s Slingshot ports: a node
                # never moves more than 200 Gb/s
                "line_rate_gbps": 200,
                "max_pending_time": "90m",  # three time limits
                # the Slingshot acceptance notes' topology, 2 groups of 2 switches (edit the file
                # for the real machine): OsuMbwMrTest's switch/group/global node sets and
                # bisection's pairs across the groups come from it
                "topology": "config/reframe/topology/slingshot.txt",
            },
        }
    ],
}

environments = [
    {
        "name": "PrgEnv-gnu",
        "target_systems": ["slingshot"],
        "modules": ["PrgEnv-gnu", "cray-mpich"],
        "cc": "cc",
        "cxx": "CC",
        "ftn": "ftn",
        "features": ["mpi", "cray-mpich"],
    }
]

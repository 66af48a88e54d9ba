"""`cori`: a KNL many-rank system (64 ranks per node), Slurm + srun, Cray Aries (the
all-to-many (Cori) notes).

All-to-many runs as in those notes:
``srun -n 512 -c 4 --cpu_bind=cores ./alltomany -p 64 -b 32 -n N`` on 8 KNL nodes, built after ``module swap craype-haswell craype-mic-knl``.
"""

import shutil

system = {
    "name": "cori",
    "descr": "NERSC Cori KNL partition (68-core Xeon Phi 7250, 64 ranks per node)",
    "hostnames": [r"cori\d+"],
    # Environment Modules 4 where installed; "nomod" elsewhere (--dry-run off the machine)
    "modules_system": "tmod4" if shutil.which("modulecmd") else "nomod",
    "partitions": [
        {
            "name": "knl",
            "descr": "KNL nodes (--constraint=knl)",
            "scheduler": "slurm",
            "launcher": "srun-knl",  # srun -c 4 --cpu_bind=cores (launchers.py)
            "access": ["--constraint=knl"],
            "environs": ["PrgEnv-intel"],
            # osu, imb: what config/spack/cori (fabrictest~rdma: no perftest) provides
            "features": ["mpi", "slurm", "spack", "osu", "imb"],
            "max_jobs": 8,
            "time_limit": "30m",
            "sched_options": {"use_nodes_option": True},
            "extras": {
                "num_nodes": 8,
                "ranks_per_node": 64,
                # Cray Aries (NERSC quotes ~8 GB/s MPI bandwidth); its NIC's host interface,
                # PCIe 3.0 x16 (15.75 GB/s = 126 Gb/s), is the ceiling
                "line_rate_gbps": 126,
            },
        }
    ],
}

environments = [
    {
        "name": "PrgEnv-intel",
        "target_systems": ["cori"],
        "modules": ["PrgEnv-intel"],
        "prepare_cmds": ["module swap craype-haswell craype-mic-knl"],
        "cc": "cc",
        "cxx": "CC",
        "ftn": "ftn",
        "features": ["mpi", "cray-mpich"],
    }
]

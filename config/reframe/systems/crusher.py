"""`crusher`: the GPU system, AMD MI250X (8 GCDs per node), cray-mpich GPU-aware (the
Crusher GPU notes).

The notes' environment: ``MPICH_GPU_SUPPORT_ENABLED=1``, ``MPICH_OFI_NIC_POLICY=NUMA``, the GTL
library, and one GPU per task bound to the closest NIC/CPU (``--gpus-per-task=1
--gpu-bind=closest``), 8 tasks per node, ``-p batch`` (whole nodes: every benchmark family asks for them,
``FabricCheck.exclusive_access``).
"""

import os

system = {
    "name": "crusher",
    "descr": "OLCF Crusher: AMD EPYC + 4x MI250X (8 GCDs), Slingshot, cray-mpich",
    "hostnames": [r"crusher.*", r"login\d+\.crusher.*"],
    # Lmod where it is installed; "nomod" elsewhere (e.g. --dry-run on a laptop or in CI)
    "modules_system": "lmod" if os.environ.get("LMOD_CMD") else "nomod",
    "partitions": [
        {
            "name": "batch",
            "descr": "GPU compute nodes (-p batch)",
            "scheduler": "slurm",
            "launcher": "srun-placed",
            "access": ["--partition=batch"],
            "environs": ["PrgEnv-gnu"],
            # Slingshot 11 (Cassini) NICs: libfabric cxi, no ibverbs, hence no +rdma
            # osu, imb, nccl: what config/spack/crusher (fabrictest+rocm~rdma+nccl: rccl-tests,
            # no perftest) provides
            "features": ["mpi", "slurm", "gpu", "spack", "osu", "imb", "nccl"],
            "max_jobs": 8,
            "time_limit": "30m",
            "sched_options": {"use_nodes_option": True},
            "env_vars": [
                ["MPICH_GPU_SUPPORT_ENABLED", "1"],
                ["MPICH_OFI_NIC_POLICY", "NUMA"],
            ],
            "devices": [{"type": "gpu", "arch": "gfx90a", "num_devices": 8}],
            # one GPU per task, bound to the closest NIC/CPU; a test running with device
            # buffers asks for it: extra_resources = {"gpu": {"gpus_per_task": 1}}
            "resources": [
                {
                    "name": "gpu",
                    "options": ["--gpus-per-task={gpus_per_task}", "--gpu-bind=closest"],
                },
            ],
            "extras": {
                "num_nodes": 2,
                "ranks_per_node": 8,
                "gpu_runtime": "rocm",
                # four 200 Gb/s Slingshot 11 NICs per node (one per MI250X)
                "line_rate_gbps": 800,
            },
        }
    ],
}

environments = [
    {
        "name": "PrgEnv-gnu",
        "target_systems": ["crusher"],
        "modules": ["PrgEnv-gnu", "craype-accel-amd-gfx90a", "cray-mpich", "rocm"],
        "env_vars": [
            ["PE_MPICH_GTL_DIR_amd_gfx90a", "-L/opt/cray/pe/mpich/8.1.16/gtl/lib"],
            ["PE_MPICH_GTL_LIBS_amd_gfx90a", "-lmpi_gtl_hsa"],
        ],
        "cc": "cc",
        "cxx": "CC",
        "ftn": "ftn",
        "features": ["mpi", "cray-mpich", "rocm"],
    }
]

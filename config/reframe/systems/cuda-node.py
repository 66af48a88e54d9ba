"""`cuda-node`: a Slurm cluster of NVIDIA GPU nodes, the CUDA counterpart of `crusher` (the
Crusher GPU notes' one-node case, with a CUDA-aware Open MPI instead of Cray MPICH).

An example of a site's GPU partition: the facts marked EDIT (host names, partition, GPUs and
NICs per node, their rates) are those of a typical 4-GPU H100 node with one 400 Gb/s NIC per
GPU, for the site to replace with its own (docs/architecture.md, "Adding a system"; docs/gpu.md).
What the notes prescribe on Crusher and what it is here:

* ``--gpus-per-task=1 --gpu-bind=closest`` (one GPU per rank, the closest): the same Slurm
  options (Slurm's GPU binding is vendor-neutral), the partition's ``gpu`` resource;
* ``MPICH_GPU_SUPPORT_ENABLED=1`` and the GTL library: an Open MPI built ``+cuda`` (with UCX
  ``+cuda``), its CUDA support on (``OMPI_MCA_opal_cuda_support=true``, Open MPI 4.1's switch);
* ``MPICH_OFI_NIC_POLICY=NUMA``: UCX takes the NIC nearest each GPU by itself; a site whose
  NICs are not found that way names them in ``UCX_NET_DEVICES``;
* ``module load rocm`` / ``craype-accel-amd-gfx90a``: the CUDA toolkit as Spack's external
  ``cuda`` and ``cuda_arch=90`` (config/spack/cuda-node/spack.yaml);
* ``srun -n 8``: ``srun --mpi=pmix`` (Open MPI started through PMIx, the ``srun-pmix``
  launcher), one rank per GPU.

Never run on such a cluster: the configuration is checked by ``--dry-run`` and the job scripts
it writes (tests/reframe/test_dryrun.py, golden/job_scripts-cuda-node.json).
"""

system = {
    "name": "cuda-node",
    "descr": "Slurm cluster of CUDA nodes: 4 NVIDIA H100 and 4 x 400 Gb/s NICs per node (EDIT)",
    "hostnames": [r"cuda-node\d*", r"cuda-login\d*"],  # EDIT: the site's login/compute names
    "modules_system": "nomod",
    "partitions": [
        {
            "name": "gpu",
            "descr": "GPU compute nodes (-p gpu)",
            "scheduler": "slurm",
            "launcher": "srun-pmix",
            "access": ["--partition=gpu"],  # EDIT: the site's GPU partition
            "environs": ["openmpi-cuda"],
            # what config/spack/cuda-node (fabrictest+cuda+nccl~rdma) provides: OSU, IMB and
            # nccl-tests; no perftest (no +rdma: the NICs' own tests are the RDMA systems')
            "features": ["mpi", "slurm", "gpu", "spack", "osu", "imb", "nccl"],
            "max_jobs": 4,
            "time_limit": "30m",
            "sched_options": {"use_nodes_option": True},
            "env_vars": [
                # Open MPI 4.1's CUDA support, on (the counterpart of MPICH_GPU_SUPPORT_ENABLED)
                ["OMPI_MCA_opal_cuda_support", "true"],
            ],
            "devices": [{"type": "gpu", "arch": "sm_90", "num_devices": 4}],  # EDIT
            # one GPU per task, the closest (the Crusher GPU notes' binding): requested by every
            # test with device buffers as extra_resources = {"gpu": {"gpus_per_task": 1}}
            "resources": [
                {
                    "name": "gpu",
                    "options": ["--gpus-per-task={gpus_per_task}", "--gpu-bind=closest"],
                },
            ],
            "extras": {
                "num_nodes": 2,
                "ranks_per_node": 4,
                "gpu_runtime": "cuda",
                # four 400 Gb/s NICs per node, one per GPU (EDIT)
                "line_rate_gbps": 1600,
            },
        }
    ],
}

environments = [
    {
        "name": "openmpi-cuda",
        "target_systems": ["cuda-node"],
        # the Spack environment's Open MPI (+cuda), on PATH once the environment is active
        "cc": "mpicc",
        "cxx": "mpicxx",
        "ftn": "mpif90",
        "features": ["mpi", "openmpi", "cuda"],
    }
]

# fabrictest: interconnect regression suite. BSD-3-Clause.
"""Spack bundle that pulls in the whole fabrictest suite."""

from spack_repo.builtin.build_systems.bundle import BundlePackage

from spack.package import *


class Fabrictest(BundlePackage):
    """fabrictest: interconnect regression suite (Spack + ReFrame) for fabric acceptance.
    This bundle installs everything its ReFrame tests run: the `fabrictest` Python package
    (txrx, parsers, reports), its C MPI benchmarks (alltomany, bisection_bw), perftest
    (ib_write_bw and friends), OSU Micro-Benchmarks and Intel MPI Benchmarks, and with
    +gpcnet GPCNeT, all with the same MPI. +cuda / +rocm ask for GPU buffers wherever a
    component has them (our C programs, OSU, perftest; CuPy for txrx with +cuda); with +nccl,
    nccl-tests (+cuda) or rccl-tests (+rocm), the NCCL/RCCL collectives of the GPU partitions."""

    version("main")
    version("0.1.0", preferred=True)

    variant(
        "python",
        default=True,
        description="The fabrictest Python package (off where pip installs it, e.g. local)",
    )
    variant("rdma", default=True, description="RDMA tools: perftest and txrx's pyverbs transport")
    variant("osu", default=True, description="OSU Micro-Benchmarks")
    variant("imb", default=True, description="Intel MPI Benchmarks")
    variant(
        "gpcnet",
        default=False,
        description="GPCNeT (network_test, network_load_test): full-system congestion tests",
    )
    variant(
        "nccl",
        default=False,
        description="nccl-tests (+cuda) or rccl-tests (+rocm): NCCL/RCCL collectives",
    )
    variant("cuda", default=False, description="CUDA GPU buffers wherever a component has them")
    variant("rocm", default=False, description="ROCm GPU buffers wherever a component has them")
    conflicts("+cuda", when="+rocm", msg="choose CUDA or ROCm GPU buffers, not both")
    conflicts(
        "+nccl", when="~cuda~rocm", msg="+nccl needs +cuda (nccl-tests) or +rocm (rccl-tests)"
    )

    for _v in ("main", "0.1.0"):
        depends_on(f"py-fabrictest@{_v}", when=f"@{_v} +python")
        depends_on(f"fabrictest-benchmarks@{_v}", when=f"@{_v}")

    depends_on("py-fabrictest+rdma", when="+python+rdma")
    depends_on("perftest", when="+rdma")
    depends_on("osu-micro-benchmarks@7:", when="+osu")
    depends_on("intel-mpi-benchmarks@2021:", when="+imb")
    depends_on("gpcnet", when="+gpcnet")
    depends_on("nccl-tests+mpi", when="+nccl+cuda")
    depends_on("rccl-tests+mpi", when="+nccl+rocm")

    # GPU variants, propagated to the components that have them
    depends_on("fabrictest-benchmarks+cuda", when="+cuda")
    depends_on("py-fabrictest+cuda", when="+python+cuda")
    depends_on("osu-micro-benchmarks+cuda", when="+osu+cuda")
    depends_on("perftest+cuda", when="+rdma+cuda")
    depends_on("fabrictest-benchmarks+rocm", when="+rocm")
    depends_on("osu-micro-benchmarks+rocm", when="+osu+rocm")
    depends_on("perftest+rocm", when="+rdma+rocm")
    with when("~cuda"):
        depends_on("fabrictest-benchmarks~cuda")
        depends_on("osu-micro-benchmarks~cuda", when="+osu")
        depends_on("perftest~cuda", when="+rdma")
    with when("~rocm"):
        depends_on("fabrictest-benchmarks~rocm")
        depends_on("osu-micro-benchmarks~rocm", when="+osu")
        depends_on("perftest~rocm", when="+rdma")

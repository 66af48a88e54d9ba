# fabrictest: interconnect regression suite. BSD-3-Clause.
"""Spack recipe for fabrictest's C MPI programs (src/c): alltomany and bisection_bw."""

import os

from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.makefile import MakefilePackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

from spack.package import *

#: The checkout this recipe lives in: spack_repo/fabrictest/packages/<name>/package.py
FABRICTEST_TREE = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))


class FabrictestBenchmarks(MakefilePackage, CudaPackage, ROCmPackage):
    """fabrictest's C MPI benchmarks: `alltomany` (all-to-many personalised communication
    with MPI_Isend/MPI_Irecv/MPI_Waitall, one receiver per node) and `bisection_bw`
    (bisection bandwidth between rank i and i + n/2). With +cuda or +rocm the message
    buffers live in GPU memory (`-d device`, the default of such a build), for a GPU-aware
    MPI; `-d host` still uses host memory.

    Built from this repository's own tree (`develop:` section of the environment, or from
    the checkout holding this recipe: `@0.1.0` its pinned commit, `@main` the branch)."""

    git = "file://" + FABRICTEST_TREE

    license("BSD-3-Clause")

    # `main` is the branch, and says so: Spack reads a branch version as newer than any
    # release and fetches whatever the branch holds then. A numbered version names one tree:
    # 0.1.0 (pyproject.toml's version) is a commit of main, the same sources at every install.
    # The environments in config/spack/<system>/ build @=0.1.0 from their `develop:` path
    # (this checkout as it is); without one Spack fetches that commit. A release adds its
    # line, tag= and commit= (or a url= archive with its sha256).
    version("main", branch="main")
    version("0.1.0", commit="d36668d5b231d158fc0bcd42253164f2016b0bbb", preferred=True)

    depends_on("c", type="build")
    depends_on("gmake", type="build")
    depends_on("mpi")

    conflicts("+cuda", when="+rocm", msg="GPU buffers are either CUDA or ROCm, not both")

    build_directory = "src/c"

    def _make_args(self):
        spec = self.spec
        # O=: executables go to the stage, not into a develop checkout's src/c
        args = [
            f"MPICC={spec['mpi'].mpicc}",
            f"PREFIX={self.prefix}",
            f"O={join_path(self.stage.path, 'fabrictest-c-build')}",
        ]
        if spec.satisfies("+cuda"):
            args += ["GPU=cuda", f"CUDA_HOME={spec['cuda'].prefix}"]
        elif spec.satisfies("+rocm"):
            args += ["GPU=rocm", f"ROCM_PATH={spec['hip'].prefix}"]
        return args

    @property
    def build_targets(self):
        return ["all", *self._make_args()]

    @property
    def install_targets(self):
        return ["install", *self._make_args()]

    def test_help(self):
        """alltomany -h and bisection_bw -h print their usage"""
        for name in ("alltomany", "bisection_bw"):
            exe = which(join_path(self.prefix.bin, name))
            out = exe("-h", output=str.split, error=str.split)
            assert "Usage:" in out

# fabrictest: interconnect regression suite. BSD-3-Clause.
"""Spack recipe for the `fabrictest` Python distribution (this repository's pyproject.toml)."""

import os

from spack_repo.builtin.build_systems.python import PythonPackage

from spack.package import *

#: The checkout this recipe lives in: spack_repo/fabrictest/packages/py_fabrictest/package.py
FABRICTEST_TREE = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))


class PyFabrictest(PythonPackage):
    """fabrictest: interconnect regression suite for HPC fabrics (RoCE, InfiniBand,
    Slingshot, GPU-aware MPI). The `txrx` RoCE transmitter/receiver tool, output parsers,
    reference checking, node-pair sweeps and reports used by the suite's ReFrame tests.

    Versions build from this repository's own tree: either through the environment's
    `develop:` section (config/spack/<system>/spack.yaml does this), or from the checkout
    that holds this recipe: `@0.1.0` its pinned commit, `@main` the branch."""

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

    variant("rdma", default=False, description="RDMA transport of txrx through pyverbs")
    variant("cuda", default=False, description="GPU (CUDA) buffers for txrx through CuPy")

    # pyproject.toml: requires-python, [build-system] requires, [project] dependencies
    depends_on("python@3.10:", type=("build", "run"))
    depends_on("py-setuptools@77:", type="build")
    depends_on("py-numpy@1.21:", type=("build", "run"))
    depends_on("py-mpi4py@3.1:", type=("build", "run"))
    depends_on("py-pyyaml@5.4:", type=("build", "run"))
    depends_on("py-python-hostlist@1.21:", type=("build", "run"))
    # txrx's compiled loop (setup.py: fabrictest.txrx._loop) links the MPI mpi4py runs on
    depends_on("mpi", type=("build", "link", "run"))

    # pyproject.toml extras: [rdma] (pyverbs comes with rdma-core), [gpu]
    depends_on("rdma-core+pyverbs", when="+rdma", type=("build", "run"))
    depends_on("py-cupy@14:+cuda", when="+cuda", type=("build", "run"))

    def setup_build_environment(self, env):
        # setup.py builds the compiled loop with $MPICC
        env.set("MPICC", self.spec["mpi"].mpicc)

    def test_import(self):
        """import fabrictest, its MPI launch helper and txrx's compiled loop"""
        python = self.spec["python"].command
        python("-c", "import fabrictest, fabrictest.mpirun, fabrictest.txrx._loop")

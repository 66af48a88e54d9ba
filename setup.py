"""Build fabrictest.txrx._loop, txrx's compiled inner loop (docs/txrx.md), with the MPI compiler
wrapper: the MPI it is built with must be the one mpi4py runs on (txrx checks). Everything else
about the distribution is in pyproject.toml.

The wrapper is $MPICC, else `mpicc` on PATH. Without one, or when it cannot compile the loop,
the build stops with one line saying what is missing.
"""

from __future__ import annotations

import os
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NAME = "fabrictest.txrx._loop"


def _fail(why: str) -> None:
    sys.exit(f"fabrictest: cannot build {NAME} (txrx's compiled loop): {why}")


class BuildWithMpicc(build_ext):
    def build_extensions(self):
        mpicc = os.environ.get("MPICC") or shutil.which("mpicc")
        if not mpicc or not shutil.which(mpicc):
            _fail("no MPI compiler wrapper: install an MPI with mpicc (Debian: libopenmpi-dev) "
                  "or set MPICC to the mpicc of the MPI mpi4py uses")
        # the wrapper compiles and links (mpi.h, libmpi); Python's own flags stay
        self.compiler.compiler_so = [mpicc, *self.compiler.compiler_so[1:]]
        self.compiler.linker_so = [mpicc, *self.compiler.linker_so[1:]]
        try:
            super().build_extensions()
        except Exception as err:  # CompileError, LinkError: the compiler printed its lines
            _fail(f"{mpicc} failed ({type(err).__name__}: {err}); see the compiler's messages above")


setup(
    ext_modules=[Extension(NAME, ["src/fabrictest/txrx/_loop.c"], extra_compile_args=["-O2"])],
    cmdclass={"build_ext": BuildWithMpicc},
)

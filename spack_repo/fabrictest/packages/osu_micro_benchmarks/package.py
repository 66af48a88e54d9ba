# fabrictest: interconnect regression suite. BSD-3-Clause.
"""Spack's builtin osu-micro-benchmarks, buildable against CUDA 13."""

from spack_repo.builtin.packages.osu_micro_benchmarks.package import (
    OsuMicroBenchmarks as BuiltinOsuMicroBenchmarks,
)

from spack.package import *


class OsuMicroBenchmarks(BuiltinOsuMicroBenchmarks):
    """Spack's builtin recipe (every version, variant and dependency is its), with one change:
    against CUDA 13 or newer, +cuda configures ``--enable-cuda=basic``. OSU 7.4 to 7.5.1's full
    CUDA support (``--enable-cuda``, the kernels for managed memory) calls the 4-argument
    ``cudaMemPrefetchAsync`` that CUDA 13 removed and does not compile; ``basic`` leaves those
    kernels out and keeps device buffers (``-d cuda H H|H D|D D``), what the suite runs."""

    def configure_args(self):
        args = super().configure_args()
        if self.spec.satisfies("+cuda ^cuda@13:"):
            args = ["--enable-cuda=basic" if a == "--enable-cuda" else a for a in args]
        return args

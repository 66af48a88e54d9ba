"""The binaries fixture: where the suite's own programs (and, on ``+spack`` partitions, every
benchmark) come from, built once per partition and programming environment."""

from __future__ import annotations

import os
from pathlib import Path

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, variable

REPO_ROOT = Path(__file__).resolve().parents[1]

SPACK_SPECS = ["fabrictest"]


class FabricBinaries(rfm.CompileOnlyRegressionTest):
    """Where the suite's binaries come from, built once per partition and environment.

    ``+spack`` partitions: ``spack -e config/spack/<system> install`` with ReFrame's Spack build
    system, in place (the environment's relative ``repos:``/``develop:`` paths point into this
    checkout, and one environment per system is shared by every test and session); when that
    file is absent, an environment of ``spack_specs`` in the stage directory. Tests then
    ``spack env activate`` it. Elsewhere: ``make`` in a copy of ``src/c`` (``GPU=cuda|rocm`` on
    ``+gpu`` partitions); tests run the executables from this fixture's stage directory.
    """

    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    #: specs of the fallback environment (the ``fabrictest`` bundle: tx/rx, C programs, OSU,
    #: IMB, perftest)
    spack_specs = variable(typ.List[str], value=SPACK_SPECS)

    @property
    def uses_spack(self) -> bool:
        return "spack" in self.current_partition.features

    @property
    def spack_env_file(self) -> Path:
        return REPO_ROOT / "config" / "spack" / self.current_system.name / "spack.yaml"

    @property
    def spack_env_dir(self) -> str:
        """The Spack environment directory tests activate."""
        if self.spack_env_file.is_file():
            return str(self.spack_env_file.parent)
        return os.path.join(self.stagedir, "rfm_spack_env")

    def program(self, name: str) -> str:
        """Path (or, with Spack, name on the environment's PATH) of a src/c program."""
        return name if self.uses_spack else os.path.join(self.stagedir, name)

    @run_before("compile")
    def choose_build(self):
        if self.uses_spack:
            self.build_system = "Spack"
            self.sourcesdir = None
            if self.spack_env_file.is_file():
                self.build_system.environment = self.spack_env_dir
            else:
                self.build_system.specs = list(self.spack_specs)
            self.build_system.emit_load_cmds = False
            self.build_system.install_opts = ["--fail-fast"]
            return
        self.sourcesdir = str(REPO_ROOT / "src" / "c")
        self.build_system = "Make"
        opts = [f"MPICC={self.current_environ.cc or 'mpicc'}"]
        gpu = self.current_partition.extras.get("gpu_runtime")
        if "gpu" in self.current_partition.features and gpu:
            opts.append(f"GPU={gpu}")
        self.build_system.options = opts
        self.build_system.flags_from_environ = False
        self.build_system.max_concurrency = 2

"""The binaries fixture: where every program a test runs comes from: the suite's own programs
(built once per partition and programming environment) and the third-party benchmarks (OSU,
IMB, perftest)."""

from __future__ import annotations

import os
from pathlib import Path

import fabric_records
import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_before, variable
from reframe.core.exceptions import ConfigError

from fabrictest.binaries import IMB_NAME, find_benchmark, not_found_hint

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

    Third-party benchmarks (:meth:`osu`, :meth:`imb`, :meth:`perftest`, :meth:`gpcnet`,
    :meth:`nccl`), as ReFrame's
    ``hpctestlib`` OSU tests take theirs from a build fixture: on ``+spack`` partitions the name,
    on the activated environment's ``PATH`` (its view; Spack's ``osu-micro-benchmarks`` puts
    ``libexec/osu-micro-benchmarks/mpi/*/`` there); elsewhere the path that
    :mod:`fabrictest.binaries` finds (``OSU_HOME``, ``IMB_HOME``, ``PATH``), the same search that
    gave the partition its ``osu``/``imb``/``perftest`` feature. Tests that need one declare it
    in ``requires``, so they only run where the partition has it.
    """
    descr = "the suite's programs built once per partition, and where each benchmark binary is"

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

    def osu(self, name: str) -> str:
        """The command for OSU program ``name`` (``osu_bw``)."""
        return self.benchmark("osu", name)

    def imb(self, name: str = IMB_NAME) -> str:
        """The command for Intel MPI Benchmarks' ``IMB-MPI1``."""
        return self.benchmark("imb", name)

    def perftest(self, name: str) -> str:
        """The command for perftest program ``name`` (``ib_write_bw``)."""
        return self.benchmark("perftest", name)

    def gpcnet(self, name: str) -> str:
        """The command for GPCNeT program ``name`` (``network_test``, ``network_load_test``)."""
        return self.benchmark("gpcnet", name)

    def nccl(self, name: str) -> str:
        """The command for nccl-tests (or rccl-tests) program ``name`` (``all_reduce_perf``)."""
        return self.benchmark("nccl", name)

    def benchmark(self, suite: str, name: str) -> str:
        """Program ``name`` of ``suite``: its name with Spack, else its path on this host. Not
        found (a partition that declares ``+osu`` by hand, a partial build): the test fails
        saying what was searched."""
        if self.uses_spack:
            return name
        path = find_benchmark(suite, name)
        if path is None:
            raise ConfigError(
                f"{name} not found for {self.current_partition.fullname} (no +spack): "
                f"{not_found_hint(suite)}"
            )
        return path

    @run_before("setup")
    def _one_run_per_stage_directory(self):
        fabric_records.before_setup(self)  # before this fixture's stage directory is made

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

"""Shared base of fabrictest's ReFrame tests (no tests are defined in this file).

What every test gets from :class:`FabricTest`:

* ``scenario`` (defined by each family, a parameter or a variable): the user-facing scenario
  name (report rows, reference keys);
* the binaries: the :class:`fabric_binaries.FabricBinaries` fixture (one per
  system/partition/environment): the system's Spack environment on ``+spack`` partitions, else
  ``src/c`` built with ``make``; OSU, IMB and perftest from it too (``self.binaries.osu(name)``);
* the partition features a case needs (``requires``, ``method="rdma"``, device buffers) as
  its ``valid_systems``, so ``reframe -l --system X`` lists what runs on X;
* placement (:class:`fabric_placement.Placement`) and references
  (:class:`fabric_references.ReferenceChecks`, which also words a performance failure with its
  place and the size of the drop);
* sanity that fails closed: launcher and MPI failure lines (a rank's signal, rank and node;
  MPI_Abort; MPI_ERR_*), the launch's exit status (printed by the job script) and then the
  family's :meth:`FabricTest.result_problems` (its output whole: every size, stream, timing
  and closing line), as one deferred ``sn.all``; no core files left in the stage directory.
"""

from __future__ import annotations

import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from fabric_binaries import REPO_ROOT, FabricBinaries  # noqa: F401 - perftest uses REPO_ROOT
from fabric_placement import Placement
from fabric_references import ReferenceChecks, miss_words  # noqa: F401 - tests use miss_words
from reframe.core.builtins import fixture, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import PerformanceError, SanityError
from scenario_math import (  # noqa: F401 - the families' arithmetic
    TxRxLayout,
    degrades,
    device_fraction,
    gpu_aware_ok,
    iteration_growth,
    txrx_layout,
)

from fabrictest.links import perf_name  # noqa: F401 - the families' figure names
from fabrictest.parsers import ParseError
from fabrictest.parsers.launch import EXIT_STATUS_LINE, describe, exit_statuses, launch_failures

SCENARIOS = (
    "same-node",
    "paired",
    "many-to-one",
    "pairs-of-three",
    "all-to-many",
    "bisection",
    "gpu-aware",
)



@sn.deferrable
def assert_no_problems(source) -> bool:
    """Deferred: call ``source()`` (a list of problems) at sanity time and fail with them, one
    line; a ParseError (the text is not the tool's output) fails with its message."""
    try:
        problems = source()
    except ParseError as err:
        raise SanityError(str(err)) from None
    if problems:
        raise SanityError("; ".join(problems))
    return True


class FabricTest(rfm.RunOnlyRegressionTest, ReferenceChecks, Placement, special=True):
    """Common behaviour; subclasses define parameters, the command line, sanity and performance.

    ``special=True`` lets :meth:`check_performance` wrap ReFrame's own (a final pipeline
    method) to reword its failure; ReFrame still judges and records every figure.
    """

    #: 'full' (acceptance sizes) or 'quick' (smallest sizes; --mode quick sets it)
    size_profile = variable(typ.Str[r"full|quick"], value="full")
    #: nodes to use; 0: what the partition's extras say (num_nodes / nodes)
    num_nodes = variable(int, value=0)

    #: partition features every case of the family needs (``"rdma"``, ``"gpu"``); a case
    #: with ``method="rdma"`` needs ``rdma`` and one with device buffers (:meth:`needs_gpu`)
    #: ``gpu`` as well. They become ``valid_systems``, so a case is neither listed nor run on a
    #: partition without them (``reframe -l --system local`` lists what runs there)
    requires: tuple[str, ...] = ()

    valid_systems = ["*"]
    valid_prog_environs = ["+mpi"]
    sourcesdir = None
    time_limit = "20m"
    maintainers = ["fabrictest"]
    tags = {"fabric"}

    binaries = fixture(FabricBinaries, scope="environment")

    @run_after("init")
    def _require_features(self):
        needed = self.required_features()
        if needed:
            self.valid_systems = [" ".join(f"+{name}" for name in needed)]

    def required_features(self) -> list[str]:
        """The partition features this case needs, in a fixed order (see :attr:`requires`)."""
        needed = list(self.requires)
        if getattr(self, "method", None) == "rdma":
            needed.append("rdma")
        if self.needs_gpu():
            needed.append("gpu")
        return list(dict.fromkeys(needed))

    # -- partition facts ------------------------------------------------------------------
    def extra(self, key, default=None):
        return self.current_partition.extras.get(key, default)

    def has_feature(self, name: str) -> bool:
        return name in self.current_partition.features

    def partition_nodes(self) -> int:
        if self.num_nodes:
            return self.num_nodes
        nodes = self.extra("nodes")
        return int(self.extra("num_nodes", len(nodes) if nodes else 1))

    @property
    def is_slurm(self) -> bool:
        """Slurm through either of ReFrame's schedulers (`slurm` needs sacct, `squeue` not)."""
        return self.current_partition.scheduler.registered_name in ("slurm", "squeue")

    # -- binaries -------------------------------------------------------------------------
    @run_after("setup")
    def _activate_spack(self):
        if self.has_feature("spack"):
            self.prerun_cmds = [
                f'eval "$(spack env activate --sh -d {self.binaries.spack_env_dir})"',
                *self.prerun_cmds,
            ]

    def needs_gpu(self) -> bool:
        """Subclasses running with device buffers return True (adds the partition's GPU
        binding options, e.g. --gpus-per-task=1 --gpu-bind=closest)."""
        return False



    # -- performance failures that name the place -----------------------------------------
    def check_performance(self):
        try:
            super().check_performance()
        except PerformanceError as err:
            raise PerformanceError(self._placed_failures(str(err))) from None

    # -- sanity: fail closed ---------------------------------------------------------------
    @run_before("run")
    def _job_epilogue(self):
        """No core files in the stage directory (a crash is reported from its lines), and the
        launch's exit status printed for :meth:`launch_problems` (ReFrame's `squeue` scheduler
        knows no exit code, and a postrun command would hide the launch's)."""
        status = EXIT_STATUS_LINE.format(what="the launch", status="$?")
        self.prerun_cmds = ["ulimit -c 0", *self.prerun_cmds]
        self.postrun_cmds = [f'echo "{status}" >&2', "rm -f core core.[0-9]*", *self.postrun_cmds]

    @sanity_function
    def assert_whole(self):
        """Launch failures first (a crash is reported as a crash), then the family's result."""
        return sn.all([assert_no_problems(self.launch_problems),
                       assert_no_problems(self.result_problems)])

    def launch_problems(self) -> list[str]:
        """The job crashed, aborted or exited non-zero: its failure lines (signal, rank, node),
        else its exit status; empty when the launch ended cleanly."""
        out, err = self.output_text(self.stdout), self.output_text(self.stderr)
        failures = launch_failures(out + "\n" + err)
        if failures:
            problems = [f"job failed: {describe(failures)}"]
            if all(f.kind == "exit" for f in failures):  # a tool's verdict: say its reason too
                try:
                    problems += self.result_problems()
                except ParseError:
                    pass
            return problems
        statuses = exit_statuses(err)
        if "the launch" not in statuses:
            return ["the job did not finish: no exit status line (killed? time limit?)"]
        if self.job.exitcode not in (None, 0):
            return [f"job script exited with status {self.job.exitcode}"]
        return []

    def result_problems(self) -> list[str]:
        """What keeps the family's output from being whole and sane (missing sizes, streams,
        lines, failed checks); empty when it is. Called at sanity time."""
        return []

    # -- output ---------------------------------------------------------------------------
    def output_text(self, name) -> str:
        path = os.path.join(self.stagedir, str(sn.evaluate(name)))
        try:
            with open(path, errors="replace") as fp:
                return fp.read()
        except FileNotFoundError:
            return ""

    def stdout_text(self) -> str:
        return self.output_text(self.stdout)

    @staticmethod
    def quote(args) -> str:
        return " ".join(shlex.quote(str(a)) for a in args)

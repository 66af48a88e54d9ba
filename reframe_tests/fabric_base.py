"""Shared bases of fabrictest's ReFrame tests (no tests are defined in this file).

:class:`FabricCheck` is what every test of the suite shares, the node-pair sweep included:

* listing and placement (:class:`fabric_placement.Placement`): a case is instantiated only on
  the partitions that have the features it needs (``requires``) and whose static facts allow
  it (``placement_on(partition)``, ``why_not_on(partition)``), so ``reframe -l --system X``
  lists exactly what runs on X; ``place()`` gives the partition's launcher task counts and the
  placement intent;
* one parsed result per test case: the family names its parser (:meth:`FabricCheck.parse`),
  :meth:`FabricCheck.result` parses the output once and caches it; sanity and the performance
  functions read it when ReFrame evaluates them, never in a hook;
* sanity that fails closed: launcher and MPI failure lines (a rank's signal, rank and node;
  MPI_Abort; MPI_ERR_*), the launch's exit status (printed by the job script) and then the
  family's :meth:`FabricCheck.result_problems` (its output whole: every size, stream, timing
  and closing line), as one deferred ``sn.all``; no core files left in the stage directory;
* references (:class:`fabric_references.ReferenceChecks`): the file loaded once, the figures
  judged only against references measured with this run's ``shaping()``, a performance
  failure worded with its place and the size of the drop;
* stage 1 first (:class:`fabric_stage1.Stage1Gate`): the nodes the health family failed are
  left out of every other test, or the test says why it still ran with them.

:class:`FabricTest` adds the binaries: the :class:`fabric_binaries.FabricBinaries` fixture (one
per system/partition/environment: the system's Spack environment on ``+spack`` partitions, else
``src/c`` built with ``make``; OSU, IMB and perftest from it too: ``self.binaries.osu(name)``),
activated in the job on ``+spack`` partitions. Every family but the sweep (which starts one
``fabric-sweep`` and needs none of them) is a ``FabricTest``. What a family writes is the table
in :class:`FabricTest`'s docstring (docs/architecture.md shows the same table).
"""

from __future__ import annotations

import os
import shlex

import fabric_records
import reframe as rfm
import reframe.utility.sanity as sn
from fabric_binaries import FabricBinaries
from fabric_counters import CounterChecks
from fabric_placement import Placement
from fabric_provenance import Provenance
from fabric_references import ReferenceChecks
from fabric_stage1 import Stage1Gate
from fabric_types import Count
from fabric_variables import problems as variable_problems
from reframe.core.builtins import fixture, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import PerformanceError, ReframeError, SanityError

from fabrictest.parsers import ParseError
from fabrictest.parsers.launch import EXIT_STATUS_LINE, describe, exit_statuses, launch_failures


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


class FabricCheck(
    rfm.RunOnlyRegressionTest, Placement, ReferenceChecks, CounterChecks, Stage1Gate,
    Provenance, special=True,
):
    """What every test shares; a family adds parameters, the command line (after setup),
    :meth:`parse`, :meth:`result_problems` and its performance functions.

    ``special=True`` lets :meth:`check_performance` wrap ReFrame's own (a final pipeline
    method) to reword its failure; ReFrame still judges and records every figure.
    """

    #: 'full' (acceptance sizes) or 'quick' (smallest sizes; --mode quick sets it)
    size_profile = variable(str, value="full")
    #: nodes to use; unset: what the partition's extras say (num_nodes / nodes)
    num_nodes = variable(Count, type(None), value=None)
    #: the output file :meth:`result` parses; None: the job's stdout
    result_file: str | None = None

    valid_systems = ["*"]  # narrowed after init to the partitions that fit (Placement)
    valid_prog_environs = ["+mpi"]
    sourcesdir = None
    time_limit = "20m"
    maintainers = ["fabrictest"]
    tags = {"fabric"}
    #: whole nodes (``#SBATCH --exclusive``): another job on a node reads as a slow link. A
    #: benchmark never shares its nodes (CSCS's network checks do the same); a check that only
    #: reads a node's state (the NIC pre-flight) may set it False.
    exclusive_access = True

    @run_after("init", always_last=True)
    def _refuse_senseless_variables(self):
        """A variable whose value makes no sense (``-S nmsg=0``, ``-S loss_tolerance=nan``,
        :mod:`fabric_variables`) fails the test before it is set up, built or run, with one
        line; a case with a bad placing value (``-S num_nodes=-3``) is kept on every partition
        (fabric_placement), so that the refusal is seen rather than the case silently unlisted."""
        self.refused_values = list(variable_problems(self).values())

    @run_before("setup", always_last=False)
    def _fail_on_senseless_variables(self):
        fabric_records.before_setup(self)  # one run per stage directory; no dry-run perflogs
        if self.refused_values:
            raise ReframeError("; ".join(self.refused_values))

    # -- the parsed result ----------------------------------------------------------------
    def parse(self, text: str):
        """The family's output as a record: its pure parser (``fabrictest.parsers``), raising
        ParseError when ``text`` is not the tool's output."""
        raise NotImplementedError(f"{type(self).__name__} names no parser")

    def result(self):
        """:meth:`parse` of :attr:`result_file` (default: stdout), parsed once per test case."""
        return self.parsed(self.result_file or self.stdout)

    def parsed(self, name):
        """:meth:`parse` of output file ``name`` in the stage directory, cached per file."""
        name = str(sn.evaluate(name))
        cache = self.__dict__.setdefault("_parsed_outputs", {})
        if name not in cache:
            cache[name] = self.parse(self.output_text(name))
        return cache[name]

    # -- partition facts ------------------------------------------------------------------
    def extra(self, key, default=None):
        return self.current_partition.extras.get(key, default)

    def has_feature(self, name: str) -> bool:
        return name in self.current_partition.features

    def partition_nodes(self) -> int:
        return self.nodes_on(self.current_partition)

    @property
    def is_slurm(self) -> bool:
        """Slurm through either of ReFrame's schedulers (`slurm` needs sacct, `squeue` not)."""
        return self.current_partition.scheduler.registered_name in ("slurm", "squeue")

    # -- performance failures that name the place -----------------------------------------
    def check_performance(self):
        try:
            super().check_performance()
        except PerformanceError as err:
            raise PerformanceError(self.placed_failures(str(err))) from None

    @run_before("run")
    def _bound_pending_time(self):
        """A job waits for its nodes at most the partition's ``extras.max_pending_time``
        (ReFrame's ``max_pending_time``; ``-S max_pending_time=`` wins): then ReFrame cancels
        it and the test fails, instead of waiting on a node that never comes back."""
        if self.max_pending_time is None and self.extra("max_pending_time"):
            self.max_pending_time = self.extra("max_pending_time")

    # -- sanity: fail closed ---------------------------------------------------------------
    @run_before("run")
    def _job_epilogue(self):
        before, after = self.job_epilogue()
        self.prerun_cmds = [*before, *self.prerun_cmds]
        self.postrun_cmds = [*after, *self.postrun_cmds]

    def job_epilogue(self) -> tuple[list[str], list[str]]:
        """Commands before and after the launch: no core files in the stage directory (a crash
        is reported from its lines), and the launch's exit status printed for
        :meth:`launch_problems` (ReFrame's `squeue` scheduler knows no exit code, and a postrun
        command would hide the launch's)."""
        status = EXIT_STATUS_LINE.format(what="the launch", status="$?")
        return ["ulimit -c 0"], [f'echo "{status}" >&2', "rm -f core core.[0-9]*"]

    @sanity_function
    def assert_whole(self):
        """Launch failures first (a crash is reported as a crash, with the counters' verdict:
        a link that went down), then the counters, then the family's result."""
        return sn.all([assert_no_problems(lambda: self.launch_problems() and
                                          self.launch_problems() + self.counter_problems()),
                       assert_no_problems(self.counter_problems),
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


class FabricTest(FabricCheck):
    """A check that runs programs: ours (``self.binaries.program(name)``) or a benchmark
    (``self.binaries.osu(name)``, ``.imb()``, ``.perftest(name)``), with the system's Spack
    environment active on ``+spack`` partitions.

    The family contract: what a family defines (D), may override or set (O), and calls (C);
    everything else (the hooks below the table) the base runs, and a family leaves alone.
    ``part`` is any partition of the system (the listing runs after init, before one is
    current): read ``part.extras``, never ``self.current_partition``.

    ====  ====================================  ==================================================
    D     parameters, variables, ``tags``       the cases (``-S`` sets a variable)
    D     ``shaped_by``                         the variables that change what the figures
                                                measure; ``shaping()`` reads them (base)
    D     ``requires``                          partition features every case needs (``osu``)
    D     ``placement_on(part)``                ``(nodes, ranks per node)``; ValueError("needs 2
                                                nodes, has 1") where ``part`` cannot hold it;
                                                None: places nothing itself
    D     a ``@run_after("setup")`` hook        binary (``self.binaries``), ``executable``,
                                                ``executable_opts``, ``self.place(...)``,
                                                ``self.record_shaping(...)``
    D     ``parse(text)``                       the pure parser: ``return parse_<tool>(text)``
    D     ``result_problems()``                 ``missing(self.result(), ...)`` + own checks
    D     ``@performance_function(unit)``       one per figure, reading ``self.result()``
    O     ``why_not_on(part)``                  a static reason against ``part``; else return
                                                ``super().why_not_on(part)``
    O     ``required_features()``,              when a parameter decides a feature (``method``,
          ``needs_gpu()``                       device buffers)
    O     ``dynamic_perf_variables()``          figures known only from the output
    O     ``reference_aliases``                 per-item figures judged by their headline's ref.
    O     ``informational_perf_vars``           figures that need no reference
    O     ``figure_place(var, failed)``         who and where a failing figure points at
    O     ``launch_problems()``                 add the tool's reason to ``super()``'s
    O     ``result_file``                       the output :meth:`result` parses (not stdout)
    C     ``place(nodes, ppn, round_robin)``    task counts and intent for the launcher
    C     ``record_shaping(name=value)``        a shaping value resolved at setup (0 -> the
                                                profile's count; None: does not apply)
    C     ``nodes_on``/``pair_nodes_on(part)``  nodes for the case (``-S num_nodes``, extras)
    C     ``extra(key)``, ``has_feature``,      the current partition's facts
          ``is_slurm``
    C     ``export_to_ranks(vars)``             variables the ranks must see (``mpirun -x``)
    C     ``placed_hosts()``,                   the launcher's hosts, its command line
          ``launch_prefix()``
    C     ``result()``, ``parsed(name)``,       the parsed output (cached), any output file
          ``output_text(name)``
    ====  ====================================  ==================================================

    The base's hooks: after init the listing (``valid_systems``); after setup the reference
    file loaded and the Spack environment activated; before run the launcher's prelude and the
    exit-status line; sanity :meth:`assert_whole`; before performance the reference handed to
    ReFrame; after performance the missing-reference policy.
    """

    binaries = fixture(FabricBinaries, scope="environment")

    @run_after("setup")
    def _activate_spack(self):
        if self.has_feature("spack"):
            self.prerun_cmds = [
                f'eval "$(spack env activate --sh -d {self.binaries.spack_env_dir})"',
                *self.prerun_cmds,
            ]

"""Shared base of fabrictest's ReFrame tests (no tests are defined in this file).

What every test gets from :class:`FabricTest`:

* ``scenario`` (defined by each family, a parameter or a variable): the user-facing scenario
  name (report rows, reference keys);
* the binaries: the :class:`FabricBinaries` fixture (one per system/partition/environment), which
  on ``+spack`` partitions installs the system's Spack environment
  (``config/spack/<system>/spack.yaml``) with ReFrame's Spack build system and otherwise builds
  ``src/c`` with ``make``; the ``txrx`` and ``fabric-health`` commands come from the installed
  ``fabrictest`` distribution (or the Spack environment);
* placement helpers for the three ways our systems launch (a hostfile with ``slots=`` and
  ``-map-by ppr:K:node --rank-by node`` as on seren; Slurm ``--nodes``/``--ntasks-per-node``;
  one host with ``--oversubscribe``);
* sanity that fails closed: launcher and MPI failure lines (a rank's signal, rank and node;
  MPI_Abort; MPI_ERR_*), the launch's exit status (printed by the job script) and then the
  family's :meth:`FabricTest.result_problems` (its output whole: every size, stream, timing
  and closing line), as one deferred ``sn.all``; no core files left in the stage directory;
* references from ``reference/<system>.yaml`` (``$ref``, resolved after setup so that
  ``$system`` is known), validated by ``fabrictest.references`` (a bound that can never fail
  fails the test), and a check that every reported performance variable has one whose unit is
  its own and that was measured with this run's shaping variables (``shaped_by``): otherwise
  the test fails with "no reference ..." (or, with ``-S missing_reference=warn``, warns)
  instead of passing on any value.

The module-level functions are pure (no ReFrame state) and unit-tested in tests/reframe/.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import fixture, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import PerformanceError, ReferenceParseError, SanityError
from reframe.core.logging import getlogger

from fabrictest import references as refs
from fabrictest.binaries import OSU_SUBDIRS, find_imb, find_osu, osu_candidates  # noqa: F401
from fabrictest.parsers import ParseError
from fabrictest.parsers.launch import EXIT_STATUS_LINE, describe, exit_statuses, launch_failures

REPO_ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DIR = REPO_ROOT / "reference"

SCENARIOS = (
    "same-node",
    "paired",
    "many-to-one",
    "pairs-of-three",
    "all-to-many",
    "bisection",
    "gpu-aware",
)

# ---------------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TxRxLayout:
    """Where the ranks of one tx/rx scenario go: ``nodes`` nodes with ``ppn`` ranks each, ranks
    numbered round-robin over the nodes (``--rank-by node``), ``nrx`` receivers and ``nlink``
    transmitters (transmitter t -> receiver t % nrx)."""

    nodes: int
    ppn: int
    nrx: int
    nlink: int

    @property
    def num_tasks(self) -> int:
        return self.nodes * self.ppn

    def receiver_node(self, receiver_rank: int) -> int:
        """Node index of a receiver rank under round-robin ranking."""
        return receiver_rank % self.nodes


def txrx_layout(scenario: str, span: str, available_nodes: int) -> TxRxLayout:
    """The seed 000 layouts. ``span='one'``: one node, pair or triple; ``'many'``: as many as
    ``available_nodes`` allows. Raises ValueError (the skip reason) when it does not fit."""
    n = available_nodes
    if scenario == "same-node":
        # one tx and one rx on each node: -map-by ppr:2:node --rank-by node
        k = 1 if span == "one" else n
        need = 1 if span == "one" else 2
        if n < need:
            raise ValueError(f"{scenario}/{span} needs >= {need} nodes, partition has {n}")
        return TxRxLayout(nodes=k, ppn=2, nrx=k, nlink=k)
    if scenario == "paired":
        # rx on one node, its tx on another: ppr:1:node
        k = 1 if span == "one" else n // 2
        if n < 2 or (span == "many" and k < 2):
            need = 2 if span == "one" else 4
            raise ValueError(f"{scenario}/{span} needs >= {need} nodes, partition has {n}")
        return TxRxLayout(nodes=2 * k, ppn=1, nrx=k, nlink=k)
    if scenario == "many-to-one":
        # two tx processes into one rx process on the same node (seed: mpirun -c 3)
        k = 1 if span == "one" else n
        need = 1 if span == "one" else 2
        if n < need:
            raise ValueError(f"{scenario}/{span} needs >= {need} nodes, partition has {n}")
        return TxRxLayout(nodes=k, ppn=3, nrx=k, nlink=2 * k)
    if scenario == "pairs-of-three":
        # one rx node fed by two tx nodes: ppr:1:node
        k = 1 if span == "one" else n // 3
        if n < 3 or (span == "many" and k < 2):
            need = 3 if span == "one" else 6
            raise ValueError(f"{scenario}/{span} needs >= {need} nodes, partition has {n}")
        return TxRxLayout(nodes=3 * k, ppn=1, nrx=k, nlink=2 * k)
    raise ValueError(f"unknown tx/rx scenario {scenario!r}")


def iteration_growth(times: Mapping[int, float], floor_s: float = 0.0) -> float:
    """How much the time per iteration grows from the fewest to the most iterations.

    ``times`` maps iterations -> total time (s). Returns (t(n_max)/n_max) / (t(n_min)/n_min);
    both per-iteration times are first raised to ``floor_s`` (a noise floor, per iteration), so
    that a growth between two values below the floor counts as 1.
    """
    if len(times) < 2:
        raise ValueError("need timings for at least two iteration counts")
    n_min, n_max = min(times), max(times)
    lo = max(times[n_min] / n_min, floor_s)
    hi = max(times[n_max] / n_max, floor_s)
    if lo <= 0:
        return math.inf if hi > 0 else 1.0
    return hi / lo


def degrades(times: Mapping[int, float], max_growth: float, floor_s: float = 0.0) -> bool:
    """True when the time per iteration grows by more than ``max_growth`` (seed 004's symptom)."""
    return iteration_growth(times, floor_s) > max_growth


def device_fraction(d2d: float, h2h: float) -> float:
    """Device-to-device bandwidth as a fraction of host-to-host."""
    if h2h <= 0:
        raise ValueError(f"host-to-host bandwidth must be positive, got {h2h}")
    return d2d / h2h


def gpu_aware_ok(d2d: float, h2h: float, min_fraction: float) -> bool:
    """The derived GPU-aware check: D-D bandwidth >= ``min_fraction`` x H-H bandwidth.
    Seed 002 (10.9 vs 19.5 GB/s per rank, 0.56) fails it at the default 0.8."""
    return device_fraction(d2d, h2h) >= min_fraction


def hostfile_lines(nodes: list[str], slots: int) -> list[str]:
    """Seed 000's hostfile: ``seren-01 slots=2`` per node."""
    return [f"{node} slots={slots}" for node in nodes]


def perf_name(text: str) -> str:
    """A performance variable name from free text (node names, sizes)."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")


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


# ---------------------------------------------------------------------------------------------
# The binaries fixture
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# The base test
# ---------------------------------------------------------------------------------------------


class FabricTest(rfm.RunOnlyRegressionTest):
    """Common behaviour; subclasses define parameters, the command line, sanity and performance."""

    #: 'full' (acceptance sizes) or 'quick' (smallest sizes; --mode quick sets it)
    size_profile = variable(typ.Str[r"full|quick"], value="full")
    #: what a missing reference does: 'fail' (default) or 'warn'
    missing_reference = variable(typ.Str[r"fail|warn"], value="fail")
    #: reference file under the reference prefix; default '<system>.yaml'
    reference_file = variable(str, value="")
    #: nodes to use; 0: what the partition's extras say (num_nodes / nodes)
    num_nodes = variable(int, value=0)

    #: regexes of informational performance variables that need no reference
    informational_perf_vars = variable(typ.List[str], value=[])
    #: {regex: headline}: per-item variables checked against the headline's reference
    reference_aliases = variable(typ.Dict[str, str], value={})
    #: set by the base before the performance stage: the effective values of the shaping
    #: variables this run's figures were measured with (the run report carries it, and
    #: `fabric-report calibrate` writes it as the reference's `measured_with`); not an input
    measured_with = variable(dict, value={})

    #: the variables that change what the figures measure (see fabrictest.references); each
    #: family lists them and returns their effective values from :meth:`shaping`
    shaped_by: tuple[str, ...] = ()

    valid_systems = ["*"]
    valid_prog_environs = ["+mpi"]
    sourcesdir = None
    time_limit = "20m"
    maintainers = ["fabrictest"]
    tags = {"fabric"}

    binaries = fixture(FabricBinaries, scope="environment")

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
    def is_local_host(self) -> bool:
        return self.current_partition.scheduler.registered_name == "local" and not self.extra(
            "hostfile"
        )

    @property
    def is_slurm(self) -> bool:
        """Slurm through either of ReFrame's schedulers (`slurm` needs sacct, `squeue` not)."""
        return self.current_partition.scheduler.registered_name in ("slurm", "squeue")

    def launcher_is(self, name: str) -> bool:
        return self.current_partition.launcher_type.registered_name == name

    # -- binaries -------------------------------------------------------------------------
    @run_after("setup")
    def _activate_spack(self):
        if self.has_feature("spack"):
            self.prerun_cmds = [
                f'eval "$(spack env activate --sh -d {self.binaries.spack_env_dir})"',
                *self.prerun_cmds,
            ]

    def benchmark_binary(self, name: str, feature: str, finder) -> str:
        """The command for benchmark ``name``: by name where the partition provides it
        (``+spack`` or ``+<feature>``), else found by ``finder`` on this host, else skip."""
        if self.has_feature("spack") or self.has_feature(feature):
            return name
        path = finder()
        self.skip_if(
            path is None,
            f"{name} not found: partition {self.current_partition.fullname} has neither "
            f"+spack nor +{feature}, and {self.binary_hint(feature)}",
        )
        return path

    @staticmethod
    def binary_hint(feature: str) -> str:
        return {
            "osu": "OSU_HOME is unset or holds no OSU build and it is not on PATH",
            "imb": "IMB_HOME is unset or holds no IMB-MPI1 and it is not on PATH",
            "perftest": "it is not on PATH (Debian: apt install perftest)",
        }.get(feature, "it is not on PATH")

    def launch_prefix(self) -> str:
        """The launcher command line of this job (for extra launches in prerun_cmds)."""
        return " ".join(self.job.launcher.run_command(self.job).split())

    # -- placement ------------------------------------------------------------------------
    def place(self, nodes: int, ppn: int, round_robin: bool = True) -> None:
        """Run ``nodes * ppn`` ranks, ``ppn`` per node, numbered round-robin over the nodes
        (``--rank-by node``) unless ``round_robin`` is false (block: fill a node first)."""
        limit = self.extra("max_ranks_per_node")
        self.skip_if(
            limit is not None and ppn > int(limit),
            f"{ppn} ranks per node exceed partition {self.current_partition.fullname}'s "
            f"max_ranks_per_node={limit}",
        )
        self.num_tasks = nodes * ppn
        self.num_tasks_per_node = ppn
        opts = list(self.extra("launcher_options", []))
        if self.extra("hostfile"):
            names = list(self.extra("nodes", []))[:nodes]
            if len(names) < nodes:
                raise ValueError(f"partition lists {len(names)} nodes, {nodes} needed")
            body = "\\n".join(hostfile_lines(names, ppn))
            self.prerun_cmds = [*self.prerun_cmds, f"printf '{body}\\n' > hostfile.txt"]
            opts += ["-map-by", f"ppr:{ppn}:node"]
            if round_robin:
                opts += ["--rank-by", "node"]
            opts += ["-hostfile", "hostfile.txt"]
            # ranks on other hosts start from ssh: forward the environment they need
            forward = [
                "PATH",
                "LD_LIBRARY_PATH",
                *sorted(self.current_partition.local_env.env_vars),
            ]
            for name in forward:
                opts += ["-x", name]
        elif nodes > 1 and self.launcher_is("srun"):
            if round_robin:
                opts += ["--distribution=cyclic"]
        elif nodes > 1 and self.launcher_is("mpirun") and not any("map-by" in o for o in opts):
            # Open MPI inside an allocation: one rank per node is seed 001's `--map-by node`
            if ppn == 1:
                opts += ["--map-by", "node"]
            else:
                opts += ["--map-by", f"ppr:{ppn}:node"]
                if round_robin:
                    opts += ["--rank-by", "node"]
        gpu_opts = self.extra("gpu_job_options")
        if self.needs_gpu() and gpu_opts:
            self.job.options += list(gpu_opts)
        self.job.launcher.options = opts + list(self.job.launcher.options)

    def needs_gpu(self) -> bool:
        """Subclasses running with device buffers return True (adds the partition's GPU
        binding options, e.g. --gpus-per-task=1 --gpu-bind=closest)."""
        return False

    def export_to_ranks(self, variables: dict) -> None:
        """Set ``variables`` in the job and, with Open MPI's mpirun across hosts (which forwards
        only what -x names), on the command line too: ``-x UCX_NET_DEVICES=bond0`` (seed 001)."""
        self.env_vars.update(variables)
        if self.launcher_is("mpirun") and not self.is_local_host:
            opts = []
            for name, value in sorted(variables.items()):
                opts += ["-x", f"{name}={value}"]
            self.job.launcher.options += opts

    def pair_nodes(self) -> int:
        """Nodes for a two-rank test: 2, or 1 on a one-host partition (both ranks here)."""
        nodes = self.partition_nodes()
        if nodes >= 2:
            return 2
        self.skip_if(
            not self.is_local_host,
            f"needs 2 nodes, {self.current_partition.fullname} has {nodes}",
        )
        return 1

    # -- references -----------------------------------------------------------------------
    def reference_path(self) -> str:
        prefix = rt.runtime().get_option("general/0/reference_prefix") or str(REFERENCE_DIR)
        name = self.reference_file or f"{self.current_system.name}.yaml"
        return os.path.join(prefix, name)

    @run_after("setup")
    def _set_reference(self):
        self._reference_problem, self._ref_file = None, None
        path = self.reference_path()
        if not os.path.isfile(path):
            self._reference_problem = f"no reference file {path}"
            return
        try:  # the loader's checks: a bad file (a bound that can never fail...) fails the test
            self._ref_file = refs.load(path, False, system=self.current_system.name)
        except refs.ReferenceError as err:
            raise ReferenceParseError(f"{err} ({path})") from None
        self.reference = {"$ref": path}
        if type(self).__name__ not in self._ref_file.classes:
            self._reference_problem = f"{type(self).__name__} has no entry in {path}"

    def _reference_leaf(self) -> tuple[dict, tuple, dict]:
        """ReFrame's (mutable) reference leaf for this test, its key path in the file and the
        parsed references; empty when there is none."""
        if self._reference_problem or not self.reference.index:
            return {}, (), {}
        name = type(self).__name__
        params = {k: getattr(self, k, "?") for k in self.reference.index if not k[0] == "$"}
        try:
            leaf = self.reference[self]
            keys, parsed = refs.resolve(self._ref_file, name, self.current_system.name, params)
        except KeyError as err:
            where = [f"$system={self.current_system.name}"]
            where += [f"{k}={v}" for k, v in params.items()]
            self._reference_problem = (
                f"{name} has no reference for {', '.join(where)} "
                f"in {self.reference_path()} (missing key {err})"
            )
            return {}, (), {}
        return (leaf if isinstance(leaf, dict) else {}), keys, parsed

    def shaping(self) -> dict:
        """The effective value of each ``shaped_by`` variable in this run (None: does not apply
        to it), e.g. ``{'msg_size': 65536, 'nmsg': 20000}``."""
        return {}

    def _informational(self, var: str) -> bool:
        return any(re.fullmatch(p, var) for p in self.informational_perf_vars)

    def dynamic_perf_variables(self) -> dict:
        """Performance variables known only from the output (per link, per node, per size):
        {name: (value, unit)}. Called before the performance stage; output may be absent."""
        return {}

    @run_before("performance")
    def _apply_reference_aliases(self):
        try:
            extra = self.dynamic_perf_variables()
        except Exception as err:  # no or unreadable output: sanity has said why
            getlogger().debug(f"{self.display_name}: no per-item performance variables: {err}")
            extra = {}
        for name, (value, unit) in extra.items():
            self.perf_variables[name] = sn.make_performance_function(sn.defer(value), unit)
        leaf, keys, parsed = self._reference_leaf()
        shaping = self.shaping()
        if set(shaping) != set(self.shaped_by):
            raise PerformanceError(f"{type(self).__name__}.shaping() gives {sorted(shaping)}, "
                                   f"shaped_by lists {sorted(self.shaped_by)}")
        self.measured_with = {k: v for k, v in shaping.items() if v is not None}
        name, system = type(self).__name__, self.current_system.name
        units = {v: getattr(f, "unit", None) for v, f in self.perf_variables.items()}
        self._unit_errors, self._refused = [], {}
        if leaf:
            self._unit_errors = refs.unit_mismatches(self._ref_file, name, keys, parsed, units)
            # a figure measured with other shaping values is not judged against them
            self._refused = refs.refusals(self._ref_file, name, system, keys, leaf, shaping)
        for var in self._refused:
            del leaf[var]
        for var in list(self.perf_variables):
            if var in leaf:
                continue
            for pattern, headline in self.reference_aliases.items():
                if re.fullmatch(pattern, var) and headline in leaf:
                    leaf[var] = leaf[headline]
                    break
                if re.fullmatch(pattern, var) and headline in self._refused:
                    self._refused[var] = self._refused[headline]
                    break
        self._unreferenced = [
            v for v in self.perf_variables if v not in leaf and not self._informational(v)
        ]

    @run_after("performance")
    def _report_missing_reference(self):
        if self.is_dry_run():
            return
        if self._unit_errors:  # a wrong file, not a missing figure: never only a warning
            raise PerformanceError("; ".join(self._unit_errors))
        if not self._unreferenced:
            return
        reason = self._reference_problem or (
            f"{type(self).__name__} on {self.current_system.name} lacks "
            f"{', '.join(self._unreferenced)} in {self.reference_path()}"
        )
        plain = [v for v in self._unreferenced if v not in self._refused]
        parts = [f"no reference for {', '.join(plain)}: {reason}"] if plain else []
        for why in dict.fromkeys(self._refused[v] for v in self._unreferenced if v in self._refused):
            figures = [v for v in self._unreferenced if self._refused.get(v) == why]
            parts.append(f"{why} (figures {', '.join(figures)})")
        msg = "; ".join(parts)
        if self.missing_reference == "warn":
            getlogger().warning(f"{self.display_name}: {msg}")
        else:
            raise PerformanceError(msg + " (use -S missing_reference=warn to only warn)")

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

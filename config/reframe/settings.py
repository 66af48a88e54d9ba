"""fabrictest's ReFrame configuration: one entry point merging a file per system.

``source .venv/bin/activate`` exports ``RFM_CONFIG_FILES`` pointing here, so the users' command
``reframe -c reframe_tests -r --system seren`` needs no ``-C``.

Contract for ``config/reframe/systems/<name>.py``
-------------------------------------------------
Every module in ``systems/`` whose name does not start with ``_`` is loaded (by file path, in
name order) and must expose **one** of:

* ``site_configuration``: a ReFrame configuration fragment, i.e. a dict whose keys are any of
  ``systems``, ``environments``, ``modes``, ``storage`` (lists, concatenated into the merged
  configuration; ``logging`` and ``general`` fragments are ignored: they are defined here); or
* ``system`` (one ReFrame system dict) and optionally ``environments`` and ``modes`` (lists of
  dicts), the same thing spelt flat.

Optionally ``ORDER`` (int, default 50): systems are listed in increasing ``ORDER``. ReFrame picks
the first system whose ``hostnames`` patterns match the host it runs on, so the catch-all
``local`` system (``hostnames: ['.*']``) has ``ORDER = 1000``.

Launchers: ``launchers.py`` beside this file is loaded first (once per process,
:func:`load_launchers`) and registers fabrictest's launchers with ReFrame (``mpirun-hostfile``,
``mpirun-onehost``, ``mpirun-slurm``, ``srun-placed``, ``srun-knl``: their command lines and
the protocol the tests speak are in its docstring). A partition names one in ``"launcher"``;
the launcher owns the mapping options, seren's hostfile and the ``-x`` forwarding, and a test
sets only its task counts and placement intent.

Conventions the tests rely on (see docs/reframe.md):

* environments for MPI programs carry the feature ``mpi`` (tests ask for ``+mpi``);
* partition ``features``: ``rdma`` (RDMA NIC, ibverbs), ``gpu``, ``slurm``, ``spack`` (binaries from
  ``config/spack/<system>/spack.yaml``), and the benchmark suites provided without Spack:
  ``osu``, ``imb``, ``perftest``;
* partition ``resources``: ``gpu`` (options with ``{gpus_per_task}``), the GPU binding a test
  with device buffers asks for (crusher: ``--gpus-per-task={gpus_per_task} --gpu-bind=closest``);
* partition ``extras`` (all optional): ``num_nodes`` or ``nodes`` (node names; the hostfile of
  ``mpirun-hostfile``), ``ranks_per_node``, ``max_ranks_per_node``, ``max_host_ranks``,
  ``transports`` ({name: {VAR: value}}), ``rdma_device``, ``gid_index``, ``link_layer``,
  ``expect_mtu``, ``expect_rate``, ``netdev_mtu`` (the MTU of the RDMA port's netdev that
  ``fabric-health`` checks), ``gpu_runtime`` (cuda|rocm), ``topology`` (a topology file
  relative to the repository, or its text: the node sets are derived from it), ``node_sets``
  ({scope: slurm nodelist}) and ``node_set_sizes`` ({scope: nodes}), which win over the
  topology's, scope by scope; ``max_pending_time`` (how long a job may wait for its nodes
  before ReFrame cancels it and the test fails; ``-S max_pending_time=`` wins),
  ``osu_mbw_min_size`` (osu_mbw_mr's smallest size where smaller windows do not measure the
  links), ``link_burst_bytes`` (links shaped by a token bucket of that size).

Results storage is enabled (sqlite): one database per checkout, ``output/reports/results.db``
under the repository, so that two clones of the suite on one machine never mix their sessions
(``$FABRICTEST_RESULTS_DB`` names one shared by a site's checkouts instead: then every
session records its checkout in its settings file's path). Performance logs go to
``output/perflogs/`` under the repository (override with ``--perflogdir``); a dry run writes
none (``reframe_tests/fabric_records.py``).

ReFrame's debug log: every ``reframe`` call (a run, a dry run, a listing, a query of stored
sessions) gets its own file, ``output/logs/reframe-<time>-<pid>.log``, so no call truncates or
interleaves another's. The name comes from the clock and the process, never from the command
line: this file reads nothing from ``sys.argv``, and building the configuration does nothing
but create ``output/logs/`` (a fresh clone has no ``output/``; ReFrame does not create a log
handler's directory). ``$FABRICTEST_RFM_LOG`` names the file instead (appended to;
``fabric-report`` points it at a temporary file for its queries).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SYSTEMS_DIR = HERE / "systems"

_LIST_KEYS = ("systems", "environments", "modes", "storage")
LAUNCHERS_MODULE = "fabrictest_rfm_launchers"


GENERAL = {
    "check_search_path": [str(ROOT / "reframe_tests")],
    "report_file": str(ROOT / "output" / "reports" / "run-report-{sessionid}.json"),
}


def _load_module(path: Path, name: str | None = None):
    name = name or f"fabrictest_rfm_system_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_launchers():
    """``launchers.py``, loaded once per process: its launchers are registered with ReFrame
    (which refuses a name registered twice) before any system file names them."""
    module = sys.modules.get(LAUNCHERS_MODULE)
    if module is None:
        module = _load_module(HERE / "launchers.py", LAUNCHERS_MODULE)
        sys.modules[LAUNCHERS_MODULE] = module
    return module


def fragment_of(module) -> dict:
    """The configuration fragment a system module contributes (see the contract above)."""
    frag = getattr(module, "site_configuration", None)
    if frag is not None:
        if not isinstance(frag, dict):
            raise TypeError(f"{module.__name__}: site_configuration must be a dict")
        return {k: list(frag.get(k, [])) for k in _LIST_KEYS}
    system = getattr(module, "system", None)
    if system is None:
        raise TypeError(
            f"{module.__file__}: expose `site_configuration` or `system` (see settings.py)"
        )
    return {
        "systems": [system],
        "environments": list(getattr(module, "environments", [])),
        "modes": list(getattr(module, "modes", [])),
        "storage": list(getattr(module, "storage", [])),
    }


def load_system_fragments(directory: Path = SYSTEMS_DIR) -> list[tuple[int, str, dict]]:
    out = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = _load_module(path)
        out.append((int(getattr(module, "ORDER", 50)), path.stem, fragment_of(module)))
    out.sort(key=lambda item: (item[0], item[1]))
    return out


def _modes() -> list[dict]:
    return [
        {
            # everything; jobs run concurrently up to each partition's max_jobs (1 where tests
            # would share nodes and disturb each other's figures: local, seren)
            "name": "acceptance",
            "options": ["--exec-policy=async", "-S", "size_profile=full"],
        },
        {
            # the smallest sizes: a smoke test of every scenario in minutes
            "name": "quick",
            "options": ["-S", "size_profile=quick"],
        },
        {
            # the tests worth re-running after an upgrade, compared with the stored results
            "name": "regression",
            "options": ["--tag=regression", "-S", "size_profile=full"],
        },
    ]


#: this checkout's results database (``$FABRICTEST_RESULTS_DB``: a site's shared one)
RESULTS_DB = ROOT / "output" / "reports" / "results.db"


def _results_db() -> str:
    return os.environ.get("FABRICTEST_RESULTS_DB") or str(RESULTS_DB)


def log_file() -> str:
    """This call's debug log (see the module docstring); its directory exists on return."""
    explicit = os.environ.get("FABRICTEST_RFM_LOG")
    if explicit:
        Path(explicit).parent.mkdir(parents=True, exist_ok=True)
        return explicit
    name = f"reframe-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    for logs in (ROOT / "output" / "logs", Path(tempfile.gettempdir()) / "fabrictest-logs"):
        try:  # a read-only checkout logs to the temporary directory
            logs.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(logs, os.W_OK):
            return str(logs / name)
    raise OSError(f"no writable directory for ReFrame's log under {ROOT / 'output'} or /tmp")


def build() -> dict:
    load_launchers()
    merged: dict[str, list] = {k: [] for k in _LIST_KEYS}
    for _order, _name, frag in load_system_fragments():
        for key in _LIST_KEYS:
            merged[key].extend(frag[key])
    merged["modes"] = _modes() + merged["modes"]
    if not merged["storage"]:
        merged["storage"] = [{"enable": True, "sqlite_db_file": _results_db()}]
    return {
        **merged,
        "general": [
            {
                # this machine's own schedulers (a fork, the vcluster's slurmctld in a
                # namespace): polled at least once a second, where ReFrame's default decays to
                # once in 10 s for a site's shared slurmctld; a test of a few seconds then ends
                # when its job does
                "target_systems": ["local", "vcluster"],
                "poll_rate_min": 1.0,
                **GENERAL,
            },
            GENERAL,
        ],
        "logging": [
            {
                "level": "debug",
                "handlers": [
                    {"type": "stream", "name": "stdout", "level": "info", "format": "%(message)s"},
                    {
                        "type": "file",
                        "name": log_file(),
                        "level": "debug",
                        "format": "[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s",
                        "append": True,
                    },
                ],
                "handlers_perflog": [
                    {
                        "type": "filelog",
                        "prefix": "%(check_system)s/%(check_partition)s",
                        "level": "info",
                        "basedir": str(ROOT / "output" / "perflogs"),
                        "format": (
                            "%(check_job_completion_time)s|reframe %(version)s|"
                            "%(check_display_name)s|%(check_system)s|%(check_partition)s|"
                            "%(check_environ)s|%(check_jobid)s|%(check_result)s|"
                            "%(check_perfvalues)s"
                        ),
                        # each figure's name first: the scenarios sharing a file have other
                        # figures than its header (fabric-report reads them by name)
                        "format_perfvars": (
                            "%(check_perf_var)s|%(check_perf_value)s|%(check_perf_unit)s|"
                            "%(check_perf_ref)s|%(check_perf_lower_thres)s|"
                            "%(check_perf_upper_thres)s|"
                        ),
                        "append": True,
                    }
                ],
            }
        ],
    }


site_configuration = build()

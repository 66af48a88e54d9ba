"""The one search for third-party benchmarks outside Spack (design: "Where benchmark binaries are
found"): OSU from ``OSU_HOME`` (an install prefix of 5.x or 7.x, or a build tree) or ``PATH``;
IMB-MPI1 from ``IMB_HOME`` (the directory or its ``bin/``) or ``PATH``; perftest's
``ib_write_bw`` from ``PATH`` (Debian's ``perftest`` package); GPCNeT's ``network_test`` and
``network_load_test`` from ``GPCNET_HOME`` or ``PATH``; nccl-tests' (or rccl-tests')
``all_reduce_perf`` and ``alltoall_perf`` from ``NCCL_TESTS_HOME`` (its ``build/`` directory, or
an install prefix) or ``PATH``. Pure lookups: no ReFrame.

Two readers, so that they cannot disagree: the ReFrame configuration of systems without Spack
(``local``, ``vcluster``) gives a partition the features ``osu``/``imb``/``perftest``/``gpcnet``/``nccl`` from
:func:`benchmark_features`, and the ``FabricBinaries`` fixture gives the tests the paths from
:func:`find_benchmark`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

#: the OSU collectives the suite runs (reframe_tests/osu_collectives.py)
OSU_COLLECTIVES = ("osu_allreduce", "osu_alltoall", "osu_allgather", "osu_bcast",
                   "osu_reduce_scatter", "osu_barrier")
#: the OSU programs the suite runs (reframe_tests/osu.py, osu_collectives.py)
OSU_BENCHMARKS = ("osu_latency", "osu_bw", "osu_bibw", "osu_get_bw", "osu_mbw_mr",
                  *OSU_COLLECTIVES)
#: the perftest program the suite runs (reframe_tests/perftest.py)
PERFTEST_BENCHMARKS = ("ib_write_bw",)
IMB_NAME = "IMB-MPI1"
#: GPCNeT's programs (reframe_tests/gpcnet.py)
GPCNET_PROGRAMS = ("network_test", "network_load_test")
#: nccl-tests' (and rccl-tests') programs the suite runs (reframe_tests/nccl.py)
NCCL_PROGRAMS = ("all_reduce_perf", "alltoall_perf")

OSU_SUBDIRS = {
    "osu_latency": "pt2pt",
    "osu_bw": "pt2pt",
    "osu_bibw": "pt2pt",
    "osu_mbw_mr": "pt2pt",
    "osu_multi_lat": "pt2pt",
    "osu_get_bw": "one-sided",
    "osu_put_bw": "one-sided",
    "osu_get_latency": "one-sided",
    "osu_put_latency": "one-sided",
    **{name: "collective" for name in OSU_COLLECTIVES},
}


def osu_candidates(name: str, osu_home: str | os.PathLike) -> list[Path]:
    """Where OSU binary ``name`` may be under ``OSU_HOME``: an install prefix (5.x and 7.x:
    libexec/osu-micro-benchmarks/mpi/<kind>/), a 7.x build tree (c/mpi/<kind>/standard/ for
    pt2pt, c/mpi/collective/blocking/ for the collectives, c/mpi/<kind>/ for one-sided) or a
    5.x build tree (mpi/<kind>/)."""
    kind = OSU_SUBDIRS.get(name, "pt2pt")
    home = Path(osu_home)
    return [
        home / "libexec" / "osu-micro-benchmarks" / "mpi" / kind / name,
        home / "c" / "mpi" / kind / "standard" / name,
        home / "c" / "mpi" / kind / "blocking" / name,
        home / "c" / "mpi" / kind / name,
        home / "mpi" / kind / name,
        home / kind / name,
        home / "bin" / name,
        home / name,
    ]


def _is_exe(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _dir_or_bin(name: str, home: Path) -> list[Path]:
    """A build directory holding ``name``, or an install prefix with ``bin/``."""
    return [home / name, home / "bin" / name]


def _find(name: str, env: Mapping[str, str] | None, home_var: str | None,
          candidates=_dir_or_bin) -> str | None:
    """The first executable of ``candidates(name, $home_var)``, else ``name`` on ``PATH``."""
    env = os.environ if env is None else env
    home = env.get(home_var) if home_var else None
    if home:
        for cand in candidates(name, Path(home)):
            if _is_exe(cand):
                return str(cand)
    return shutil.which(name, path=env.get("PATH"))


def find_osu(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Path of OSU binary ``name`` from ``OSU_HOME`` or ``PATH``; None when absent."""
    return _find(name, env, "OSU_HOME", osu_candidates)


def find_imb(env: Mapping[str, str] | None = None, name: str = IMB_NAME) -> str | None:
    """Path of IMB-MPI1 from ``IMB_HOME`` (the directory or its bin/) or ``PATH``."""
    return _find(name, env, "IMB_HOME")


def find_perftest(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Path of perftest program ``name`` (``ib_write_bw``) from ``PATH``; None when absent."""
    return _find(name, env, None)


def find_gpcnet(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Path of GPCNeT program ``name`` from ``GPCNET_HOME`` (its build directory, or an install
    prefix with bin/) or ``PATH``; None when absent."""
    return _find(name, env, "GPCNET_HOME")


def _nccl_candidates(name: str, home: Path) -> list[Path]:
    """nccl-tests' build tree (``build/``), or an install prefix (``bin/``), or the directory."""
    return [home / "build" / name, home / "bin" / name, home / name]


def find_nccl(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Path of nccl-tests (or rccl-tests) program ``name`` from ``NCCL_TESTS_HOME`` or ``PATH``;
    None when absent."""
    return _find(name, env, "NCCL_TESTS_HOME", _nccl_candidates)


#: where each suite is searched for, and what to tell the user when it is not found
_SEARCH = {
    "osu": (find_osu, "OSU_HOME holds no OSU build with it and it is not on PATH"),
    "imb": (lambda name, env: find_imb(env, name), "IMB_HOME holds no IMB-MPI1 and it is not "
            "on PATH"),
    "perftest": (find_perftest, "it is not on PATH (Debian: apt install perftest)"),
    "gpcnet": (find_gpcnet, "GPCNET_HOME holds no GPCNeT build with it and it is not on PATH"),
    "nccl": (find_nccl, "NCCL_TESTS_HOME holds no nccl-tests (or rccl-tests) build with it and "
             "it is not on PATH"),
}
SUITES = tuple(_SEARCH)
#: the programs of each suite the families run: a partition has a suite's feature when any of
#: them is found, so a family's program left out here lists nothing where only it is built
#: (tests/reframe/test_family_programs.py reads the families and names what is missing)
PROGRAMS = {"osu": OSU_BENCHMARKS, "imb": (IMB_NAME,), "perftest": PERFTEST_BENCHMARKS,
            "gpcnet": GPCNET_PROGRAMS, "nccl": NCCL_PROGRAMS}


def find_benchmark(suite: str, name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Path of program ``name`` of ``suite`` (``osu``, ``imb``, ``perftest``); None when absent."""
    finder, _hint = _SEARCH[suite]
    return finder(name, os.environ if env is None else env)


def not_found_hint(suite: str) -> str:
    """Why :func:`find_benchmark` found nothing, in words (``OSU_HOME holds no ...``)."""
    return _SEARCH[suite][1]


def benchmark_features(env: Mapping[str, str] | None = None) -> list[str]:
    """The partition features (``osu``, ``imb``, ``perftest``, ``gpcnet``, ``nccl``, in that order) of the suites
    found on this host: a suite counts when any of the programs the suite runs is found, so
    that a partial build lists its tests and the missing programs' tests fail naming them."""
    env = os.environ if env is None else env
    return [s for s in SUITES if any(find_benchmark(s, n, env) for n in PROGRAMS[s])]

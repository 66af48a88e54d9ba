"""Where the suite finds benchmark binaries outside Spack (design: "Where benchmark binaries are
found"): OSU from ``OSU_HOME`` (an install prefix of 5.x or 7.x, or a build tree) or ``PATH``;
IMB-MPI1 from ``IMB_HOME`` (the directory or its ``bin/``) or ``PATH``. Pure lookups: no ReFrame.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

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
}


def osu_candidates(name: str, osu_home: str | os.PathLike) -> list[Path]:
    """Where OSU binary ``name`` may be under ``OSU_HOME``: an install prefix (5.x and 7.x:
    libexec/osu-micro-benchmarks/mpi/<kind>/), a 7.x build tree (c/mpi/<kind>/standard/ for
    pt2pt, c/mpi/<kind>/ for one-sided) or a 5.x build tree (mpi/<kind>/)."""
    kind = OSU_SUBDIRS.get(name, "pt2pt")
    home = Path(osu_home)
    return [
        home / "libexec" / "osu-micro-benchmarks" / "mpi" / kind / name,
        home / "c" / "mpi" / kind / "standard" / name,
        home / "c" / "mpi" / kind / name,
        home / "mpi" / kind / name,
        home / kind / name,
        home / "bin" / name,
        home / name,
    ]


def _is_exe(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_osu(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Path of OSU binary ``name`` from ``OSU_HOME`` or ``PATH``; None when absent."""
    env = os.environ if env is None else env
    home = env.get("OSU_HOME")
    if home:
        for cand in osu_candidates(name, home):
            if _is_exe(cand):
                return str(cand)
    return shutil.which(name, path=env.get("PATH"))


def find_imb(env: Mapping[str, str] | None = None, name: str = "IMB-MPI1") -> str | None:
    """Path of IMB-MPI1 from ``IMB_HOME`` (the directory or its bin/) or ``PATH``."""
    env = os.environ if env is None else env
    home = env.get("IMB_HOME")
    if home:
        for cand in (Path(home) / name, Path(home) / "bin" / name):
            if _is_exe(cand):
                return str(cand)
    return shutil.which(name, path=env.get("PATH"))

"""A real Spack (v1.x) for tests/spack, named by SPACK_ROOT, run offline and isolated.

Environment variables:
  SPACK_ROOT                  a Spack v1.x checkout (tests needing Spack skip without it)
  SPACK_PYTHON                the Python that runs Spack; it needs `clingo` (pip install clingo).
                              Default: this interpreter, when it has clingo.
  FABRICTEST_SPACK_BUILTIN    a local copy of Spack's builtin packages (a spack-packages checkout
                              or its repos/spack_repo/builtin). Default: what SPACK_ROOT's site
                              configuration says (`spack repo set --destination DIR --scope site
                              builtin`, or a `repos: builtin: PATH` entry).
  FABRICTEST_SPACK_PYTHON_PREFIX  the Python prefix declared as Spack's external `python` (with
                              numpy, mpi4py, pyyaml, setuptools>=77, pip, wheel importable). Default:
                              this interpreter's prefix when it is a venv (Debian's /usr Python
                              does not suit Spack's Python-package externals).
  FABRICTEST_SPACK_CACHE      Spack's cache directory (SPACK_USER_CACHE_PATH), kept between runs;
                              default ~/.cache/fabrictest/spack.
  FABRICTEST_SPACK_MIRROR     a source mirror directory (`_source-cache/archive/xx/<sha256>.tar.gz`)
                              added to the test environment.
Nothing from the user's or the system's Spack configuration is read (SPACK_DISABLE_LOCAL_CONFIG),
and the install tree and stages live under pytest's temporary directory.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


class Spack:
    def __init__(self, root: Path, python: str, work: Path, cache: Path):
        self.root = root
        self.cache = cache
        self.python = python
        self.work = work
        self.env = {
            **os.environ,
            "SPACK_ROOT": str(root),
            "SPACK_PYTHON": python,
            "SPACK_DISABLE_LOCAL_CONFIG": "1",
            "SPACK_USER_CACHE_PATH": str(cache),
        }
        self.env.pop("SPACK_ENV", None)

    def __call__(self, *args: str, env_dir: Path | None = None, timeout: float = 900, check=True):
        cmd = [str(self.root / "bin" / "spack")]
        if env_dir is not None:
            cmd += ["-e", str(env_dir)]
        cmd += list(args)
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=self.env, cwd=self.work
        )
        if check and proc.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc


def _spack_python() -> str:
    explicit = os.environ.get("SPACK_PYTHON")
    if explicit:
        return explicit
    if importlib.util.find_spec("clingo") is not None:
        return sys.executable
    pytest.skip("Spack needs a Python with clingo offline: pip install clingo, or set SPACK_PYTHON")


@pytest.fixture(scope="session")
def spack(tmp_path_factory) -> Spack:
    value = os.environ.get("SPACK_ROOT")
    if not value:
        pytest.skip("SPACK_ROOT is not set: the tests that run a real Spack (v1.x) are skipped")
    root = Path(value)
    if not (root / "bin" / "spack").is_file():
        pytest.skip(f"SPACK_ROOT={root} holds no bin/spack")
    s = Spack(root, _spack_python(), tmp_path_factory.mktemp("spack"), _cache_dir())
    version = s("--version").stdout.strip()
    if not re.match(r"1\.", version):
        pytest.skip(f"Spack {version} at {root}: these tests need Spack v1.x")
    return s


def _cache_dir() -> Path:
    """Spack's caches (package index, concretisation cache): kept between runs, since building
    the index of the builtin repository alone takes minutes on 2 cores; never configuration."""
    value = os.environ.get("FABRICTEST_SPACK_CACHE")
    path = Path(value) if value else Path.home() / ".cache" / "fabrictest" / "spack"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _builtin_repo() -> Path | None:
    value = os.environ.get("FABRICTEST_SPACK_BUILTIN")
    if not value:
        return None
    path = Path(value)
    for candidate in (path, path / "repos" / "spack_repo" / "builtin"):
        if (candidate / "repo.yaml").is_file() and (candidate / "packages").is_dir():
            return candidate
    pytest.fail(f"FABRICTEST_SPACK_BUILTIN={value} holds no builtin package repository")


def _python_prefix() -> Path:
    value = os.environ.get("FABRICTEST_SPACK_PYTHON_PREFIX")
    if value:
        return Path(value)
    if sys.prefix == sys.base_prefix:
        pytest.skip(
            "the external Python for Spack must not be the system's: run from a venv or set "
            "FABRICTEST_SPACK_PYTHON_PREFIX"
        )
    return Path(sys.prefix)


PY_MODULES = {  # Spack package -> distribution name
    "py-numpy": "numpy",
    "py-mpi4py": "mpi4py",
    "py-pyyaml": "PyYAML",
    "py-setuptools": "setuptools",
    "py-pip": "pip",
    "py-wheel": "wheel",
}


def python_externals(prefix: Path) -> dict:
    exe = prefix / "bin" / "python3"
    code = (
        "import importlib.metadata as m, platform, json;"
        f"names = {list(PY_MODULES.values())!r};"
        "out = {'python': platform.python_version()};"
        "out.update({n: m.version(n) for n in names});"
        "print(json.dumps(out))"
    )
    proc = subprocess.run([str(exe), "-c", code], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        pytest.skip(f"{exe} lacks one of {sorted(PY_MODULES.values())}: {proc.stderr.strip()}")
    versions = yaml.safe_load(proc.stdout)
    major = int(versions["setuptools"].split(".")[0])
    if major < 77:
        pytest.skip(
            f"{exe} has setuptools {versions['setuptools']}; pyproject.toml needs >=77 "
            "(pip install 'setuptools>=77')"
        )
    packages = {
        "python": {
            "buildable": False,
            "externals": [{"spec": f"python@{versions['python']}", "prefix": str(prefix)}],
        }
    }
    for spack_name, dist in PY_MODULES.items():
        packages[spack_name] = {
            "buildable": False,
            "externals": [
                {
                    "spec": f"{spack_name}@{versions[dist]}",
                    "prefix": str(prefix),
                    "dependencies": [{"spec": "python"}],
                }
            ],
        }
    return packages


def _first_line_version(cmd: list[str]) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"(\d+\.\d+(?:\.\d+)?)", out)
    assert m, f"no version in the output of {cmd}: {out}"
    return m[1]


def system_externals() -> dict:
    """gcc, gmake and the MPI on PATH, written as Spack externals."""
    gcc, gxx, gfortran = (shutil.which(n) for n in ("gcc", "g++", "gfortran"))
    make, mpicc, mpirun = shutil.which("make"), shutil.which("mpicc"), shutil.which("mpirun")
    if not (gcc and gxx and make and mpicc and mpirun):
        pytest.skip("gcc, g++, make, mpicc and mpirun are needed on PATH")
    gcc_version = subprocess.run(
        [gcc, "-dumpfullversion"], capture_output=True, text=True, timeout=30
    ).stdout.strip()
    compilers = {"c": gcc, "cxx": gxx}
    languages = "c,c++"
    if gfortran:
        compilers["fortran"] = gfortran
        languages += ",fortran"
    mpi_version_text = subprocess.run(
        [mpirun, "--version"], capture_output=True, text=True, timeout=30
    ).stdout
    if "Open MPI" in mpi_version_text or "OpenRTE" in mpi_version_text:
        mpi_name = "openmpi"
    elif "HYDRA" in mpi_version_text or "MPICH" in mpi_version_text:
        mpi_name = "mpich"
    else:
        pytest.skip(f"unknown MPI behind {mpirun}: {mpi_version_text[:200]}")
    mpi_version = re.search(r"(\d+\.\d+(?:\.\d+)?)", mpi_version_text)[1]
    mpi_prefix = str(Path(mpicc).resolve().parent.parent)
    return {
        "gcc": {
            "externals": [
                {
                    "spec": f"gcc@{gcc_version} languages:='{languages}'",
                    "prefix": str(Path(gcc).resolve().parent.parent),
                    "extra_attributes": {"compilers": compilers},
                }
            ]
        },
        "gmake": {
            "externals": [
                {
                    "spec": f"gmake@{_first_line_version([make, '--version'])}",
                    "prefix": str(Path(make).resolve().parent.parent),
                }
            ]
        },
        "mpi": {"buildable": False},
        mpi_name: {
            "buildable": False,
            "externals": [{"spec": f"{mpi_name}@{mpi_version}", "prefix": mpi_prefix}],
        },
    }


def copy_tree(dest: Path) -> Path:
    """The parts of this checkout that our packages build from (keeps develop builds' by-products
    out of the checkout)."""
    dest.mkdir(parents=True)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns(  # *.so: txrx's compiled loop is the recipe's to build
        "*.egg-info", "__pycache__", "alltomany", "bisection_bw", ".build-flags", "*.o", "*.so"
    )
    shutil.copytree(ROOT / "src", dest / "src", ignore=ignore)
    return dest


def write_env(env_dir: Path, specs: list[str], packages: dict, work: Path, develop=True) -> Path:
    env_dir.mkdir(parents=True, exist_ok=True)
    repos = {"fabrictest": str(ROOT / "spack_repo" / "fabrictest")}
    builtin = _builtin_repo()
    if builtin is not None:
        repos["builtin"] = str(builtin)
    spack: dict = {
        "specs": specs,
        "view": False,
        "concretizer": {"unify": True},
        "repos": repos,
        "bootstrap": {"enable": False},
        "config": {
            "install_tree": {"root": str(work / "opt")},
            "build_stage": [str(work / "stage")],
            "source_cache": str(work / "source-cache"),
        },
        "packages": packages,
    }
    if develop:
        tree = copy_tree(work / "tree")
        version = re.search(
            r'^version\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M
        )[1]
        spack["develop"] = {
            name: {"spec": f"{name}@={version}", "path": str(tree)}
            for name in ("py-fabrictest", "fabrictest-benchmarks")
        }
    mirror = os.environ.get("FABRICTEST_SPACK_MIRROR")
    if mirror:
        spack["mirrors"] = {"fabrictest-tests": f"file://{Path(mirror).resolve()}"}
    (env_dir / "spack.yaml").write_text(yaml.safe_dump({"spack": spack}, sort_keys=False))
    return env_dir


@pytest.fixture(scope="session")
def spack_env(spack) -> Path:
    """An environment with our two buildable packages, external MPI, compiler and Python."""
    packages = {**system_externals(), **python_externals(_python_prefix())}
    env = write_env(
        spack.work / "env",
        ["py-fabrictest", "fabrictest-benchmarks"],
        packages,
        spack.work,
    )
    repos = spack("repo", "list", env_dir=env, check=False)
    if "builtin" not in repos.stdout or "Error" in repos.stderr:
        pytest.skip(
            "Spack's builtin package repository is not usable offline: set "
            "FABRICTEST_SPACK_BUILTIN to a spack-packages checkout, or run `spack repo set "
            f"--destination DIR --scope site builtin`:\n{repos.stdout}\n{repos.stderr}"
        )
    return env

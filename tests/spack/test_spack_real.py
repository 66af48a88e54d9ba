"""Our Spack recipes with a real Spack v1.x (SPACK_ROOT), offline: audit, concretise and install
py-fabrictest and fabrictest-benchmarks against external Open MPI and Python, run what was
installed; concretise the bundle with GPU variants; check every system's environment file.
Skipped, with the reason, when SPACK_ROOT is not set (see tests/spack/conftest.py)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabrictest import mpirun as mpilaunch

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
OURS = ("py-fabrictest", "fabrictest-benchmarks", "perftest", "fabrictest", "gpcnet")


def test_audit_packages(spack, spack_env):
    proc = spack("audit", "packages", *OURS, env_dir=spack_env)
    assert "PKG-DIRECTIVES: passed" in proc.stdout
    assert "PKG-ATTRIBUTES: passed" in proc.stdout
    assert "errors" not in proc.stdout.lower()


def test_every_system_environment_is_valid_spack_configuration(spack, tmp_path):
    """Spack reads each config/spack/<system>/spack.yaml (schema, $env paths, repos)."""
    tree = tmp_path / "checkout"
    shutil.copytree(ROOT / "config" / "spack", tree / "config" / "spack")
    shutil.copytree(ROOT / "spack_repo", tree / "spack_repo")
    for env_dir in sorted((tree / "config" / "spack").glob("*/")):
        if not (env_dir / "spack.yaml").is_file():
            continue
        repos = spack("repo", "list", env_dir=env_dir).stdout
        assert re.search(
            rf"fabrictest\s.*{re.escape(str(tree / 'spack_repo' / 'fabrictest'))}", repos
        ), (env_dir.name, repos)
        packages = spack("config", "get", "packages", env_dir=env_dir).stdout
        assert "buildable: false" in packages


@pytest.fixture(scope="session")
def installed(spack, spack_env) -> dict[str, Path]:
    spack("concretize", "--fresh", "--force", env_dir=spack_env, timeout=1800)
    spack("install", "--fresh", env_dir=spack_env, timeout=1800)
    prefixes = {}
    for name in ("py-fabrictest", "fabrictest-benchmarks"):
        out = spack("find", "--format", "{prefix}", name, env_dir=spack_env).stdout.split()
        assert len(out) == 1, out
        prefixes[name] = Path(out[0])
    return prefixes


def test_concretise_uses_external_mpi_and_python(spack_env, installed):
    lock = json.loads((spack_env / "spack.lock").read_text())
    nodes = {n["name"]: n for n in lock["concrete_specs"].values()}
    assert {"py-fabrictest", "fabrictest-benchmarks"} <= set(nodes)
    assert "openmpi" in nodes or "mpich" in nodes
    for name in ("openmpi", "mpich", "python", "py-numpy", "py-mpi4py", "py-pyyaml"):
        if name in nodes:
            assert nodes[name].get("external"), f"{name} was not taken from the externals"
    assert "dev_path" in str(nodes["fabrictest-benchmarks"]["parameters"])


def test_installed_c_programs_run(mpirun, installed):
    bindir = installed["fabrictest-benchmarks"] / "bin"
    proc = mpirun(2, [bindir / "alltomany", "-p", "1", "-n", "2"], check=True)
    assert "Payload check                        = passed (8 messages)" in proc.stdout
    proc = mpirun(2, [bindir / "bisection_bw", "-e", "2k", "1", "2"], check=True)
    assert proc.stdout.count("Ranks, Msg Size:") == 2


def test_installed_python_package_imports(installed):
    prefix = installed["py-fabrictest"]
    site = list(prefix.glob("lib/python3*/site-packages"))
    assert site and (site[0] / "fabrictest" / "__init__.py").is_file(), list(prefix.rglob("*"))[:20]
    python = Path(os.environ.get("FABRICTEST_SPACK_PYTHON_PREFIX", "")) / "bin" / "python3"
    if not python.is_file():
        python = Path(sys.executable)
    proc = subprocess.run(
        [str(python), "-c", "import fabrictest, fabrictest.mpirun, fabrictest.txrx._loop as c; "
         "print(fabrictest.__file__); print(c.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**mpilaunch.environment(), "PYTHONPATH": str(site[0]), "PYTHONNOUSERSITE": "1"},
        cwd="/",
    )
    assert proc.returncode == 0, proc.stderr
    package, loop = proc.stdout.split()
    assert package.startswith(str(site[0]))
    # txrx's compiled loop, built by the recipe with the MPI's mpicc
    assert loop.startswith(str(site[0] / "fabrictest" / "txrx" / "_loop")), loop
    assert (prefix / "bin" / "txrx").is_file()


def test_bundle_concretises_with_gpu_variants_propagated(spack, spack_env):
    """The whole suite with +cuda: ours, perftest, OSU and IMB with one MPI, GPU where they can."""
    proc = spack(
        "spec",
        "--fresh",
        "fabrictest+cuda+python ^py-cupy cuda_arch=80",
        env_dir=spack_env,
        timeout=1800,
    )
    text = proc.stdout
    for name in (
        "py-fabrictest",
        "fabrictest-benchmarks",
        "perftest",
        "osu-micro-benchmarks",
        "intel-mpi-benchmarks",
    ):
        assert f"^{name}@" in text, name
    assert re.search(r"\^fabrictest-benchmarks@\S+\+cuda", text)
    assert re.search(r"\^osu-micro-benchmarks@7\S*\+cuda", text)
    assert re.search(r"\^perftest@\S+\+cuda", text)
    assert re.search(r"\^py-fabrictest@\S+\+cuda", text)
    assert re.search(r"\^py-cupy@1[3-9]", text)


def _cuda_wheel_home() -> Path | None:
    """NVIDIA's PyPI CUDA (nvidia-cuda-runtime + nvidia-cuda-nvcc: nvidia/cu13/)."""
    spec = importlib.util.find_spec("nvidia")
    for loc in list(spec.submodule_search_locations or []) if spec else []:
        home = Path(loc) / "cu13"
        if (home / "bin" / "nvcc").is_file() and (home / "lib" / "libcudart_static.a").is_file():
            return home
    return None


def test_cuda_variant_builds_with_external_cuda(spack, spack_env, mpirun):
    """fabrictest-benchmarks+cuda against the CUDA of NVIDIA's wheels, declared as an external
    `cuda`; without a GPU its device buffers are refused with one line."""
    home = _cuda_wheel_home()
    if home is None:
        pytest.skip("no CUDA from PyPI here: pip install nvidia-cuda-runtime nvidia-cuda-nvcc")
    nvcc = subprocess.run(
        [str(home / "bin" / "nvcc"), "--version"], capture_output=True, text=True, timeout=60
    ).stdout
    version = re.search(r"\bV(\d+\.\d+\.\d+)", nvcc)[1]
    config = yaml.safe_load((spack_env / "spack.yaml").read_text())["spack"]
    env_dir = spack.work / "env-cuda"
    env_dir.mkdir()
    config["specs"] = ["fabrictest-benchmarks+cuda cuda_arch=80"]
    config["develop"].pop("py-fabrictest")
    config["packages"]["cuda"] = {
        "buildable": False,
        "externals": [{"spec": f"cuda@{version}", "prefix": str(home)}],
    }
    (env_dir / "spack.yaml").write_text(yaml.safe_dump({"spack": config}, sort_keys=False))
    spack("concretize", "--fresh", "--force", env_dir=env_dir, timeout=1800)
    spack("install", "--fresh", env_dir=env_dir, timeout=1800)
    prefix = Path(
        spack(
            "find", "--format", "{prefix}", "fabrictest-benchmarks+cuda", env_dir=env_dir
        ).stdout.split()[0]
    )
    proc = mpirun(2, [prefix / "bin" / "alltomany", "-d", "host", "-p", "1", "-n", "2"], check=True)
    assert "Buffer memory                        = host" in proc.stdout
    proc = mpirun(2, [prefix / "bin" / "alltomany", "-p", "1", "-n", "2"], timeout=90)
    if proc.returncode != 0:
        ours = [x for x in proc.stderr.splitlines() if x.startswith("alltomany: error:")]
        assert len(ours) == 1 and "-d device needs a" in ours[0], proc.stderr

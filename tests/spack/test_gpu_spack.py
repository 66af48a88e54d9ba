"""The GPU systems' Spack side (issues 32 and 33): cuda-node's environment (a CUDA-aware Open MPI
built +cuda, OSU +cuda, our packages +cuda, nccl-tests), crusher's rccl-tests, the bundle's
+nccl, and our osu-micro-benchmarks (Spack's builtin recipe, --enable-cuda=basic against CUDA
13). Without Spack: the files say so. With SPACK_ROOT (tests/spack/conftest.py): Spack audits
the recipe, concretises cuda-node's environment as written (this machine's compiler and Python
as externals), and configures OSU basic against CUDA 13 and fully against CUDA 12."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ENVS = ROOT / "config" / "spack"
PACKAGES = ROOT / "spack_repo" / "fabrictest" / "packages"


def env(system: str) -> dict:
    return yaml.safe_load((ENVS / system / "spack.yaml").read_text())["spack"]


def test_cuda_node_environment_builds_a_cuda_aware_open_mpi():
    spack = env("cuda-node")
    assert spack["specs"] == ["fabrictest+cuda+nccl~rdma"]
    packages = spack["packages"]
    assert packages["mpi"]["require"] == ["openmpi"]
    assert "+cuda" in packages["openmpi"]["require"][0]
    assert "schedulers=slurm" in packages["openmpi"]["require"][0]
    assert packages["ucx"]["require"] == ["+cuda"]
    assert re.fullmatch(r"cuda@\d+\.\d+\.\d+", packages["cuda"]["externals"][0]["spec"])
    assert packages["cuda"]["buildable"] is False
    assert packages["all"]["variants"].startswith("cuda_arch=")


def test_bundle_nccl_variant_and_the_gpu_systems():
    bundle = (PACKAGES / "fabrictest" / "package.py").read_text()
    assert 'depends_on("nccl-tests+mpi", when="+nccl+cuda")' in bundle
    assert 'depends_on("rccl-tests+mpi", when="+nccl+rocm")' in bundle
    assert re.search(r'conflicts\(\s*"\+nccl", when="~cuda~rocm"', bundle)
    assert "+nccl" in env("crusher")["specs"][0] and "rccl" in env("crusher")["packages"]
    for system in ("crusher", "cuda-node"):
        text = (ROOT / "config" / "reframe" / "systems" / f"{system}.py").read_text()
        assert '"nccl"]' in text, system


def test_our_osu_recipe_is_the_builtin_one_with_basic_cuda_13():
    text = (PACKAGES / "osu_micro_benchmarks" / "package.py").read_text()
    assert "from spack_repo.builtin.packages.osu_micro_benchmarks.package import" in text
    assert 'self.spec.satisfies("+cuda ^cuda@13:")' in text
    assert '"--enable-cuda=basic"' in text
    assert "version(" not in text and "depends_on(" not in text  # the builtin's, untouched


# -- a real Spack ------------------------------------------------------------------------------

def _local_env(spack, spack_env, name: str, specs: list[str], packages: dict) -> Path:
    """An environment of ``specs`` with the test environment's repositories, develop paths,
    compiler and Python, and ``packages`` over them."""
    config = yaml.safe_load((spack_env / "spack.yaml").read_text())["spack"]
    base = {k: v for k, v in config["packages"].items()
            if k in ("gcc", "gmake") or k == "python" or k.startswith("py-")}
    config["specs"] = specs
    config["packages"] = {**base, **packages}
    env_dir = spack.work / name
    if env_dir.exists():
        shutil.rmtree(env_dir)
    env_dir.mkdir()
    (env_dir / "spack.yaml").write_text(yaml.safe_dump({"spack": config}, sort_keys=False))
    return env_dir


@pytest.mark.slow
def test_audit_our_osu_recipe(spack, spack_env):
    proc = spack("audit", "packages", "osu-micro-benchmarks", env_dir=spack_env)
    assert "PKG-DIRECTIVES: passed" in proc.stdout and "errors" not in proc.stdout.lower()


@pytest.mark.slow
def test_cuda_node_environment_concretises(spack, spack_env):
    """cuda-node's specs and packages as written (its CUDA 12.8 and Slurm externals need not
    exist to concretise), this machine's gcc and Python."""
    written = env("cuda-node")
    env_dir = _local_env(spack, spack_env, "cuda-node", written["specs"], written["packages"])
    spack("concretize", "--fresh", "--force", env_dir=env_dir, timeout=1800)
    lock = json.loads((env_dir / "spack.lock").read_text())
    nodes = {}
    for node in lock["concrete_specs"].values():
        nodes.setdefault(node["name"], node)

    def variants(name):
        return nodes[name]["parameters"]

    assert variants("openmpi")["cuda"] is True and nodes["openmpi"]["version"].startswith("4.1")
    assert "slurm" in variants("openmpi")["schedulers"]
    assert variants("ucx")["cuda"] is True
    assert nodes["cuda"].get("external") and nodes["cuda"]["version"] == "12.8.1"
    assert nodes["osu-micro-benchmarks"]["namespace"] == "fabrictest"
    assert variants("osu-micro-benchmarks")["cuda"] is True
    for name in ("fabrictest-benchmarks", "py-fabrictest", "nccl-tests", "nccl"):
        assert variants(name)["cuda"] is True, name
    assert variants("nccl-tests")["mpi"] is True
    assert "perftest" not in nodes and "py-cupy" in nodes


@pytest.mark.slow
@pytest.mark.parametrize(("cuda", "flag"), [("13.0.2", "--enable-cuda=basic"),
                                            ("12.8.1", "--enable-cuda")])
def test_osu_configures_against_cuda(spack, spack_env, cuda, flag):
    """The configure line Spack would run for osu-micro-benchmarks+cuda with that CUDA."""
    config = yaml.safe_load((spack_env / "spack.yaml").read_text())["spack"]
    mpi = {k: v for k, v in config["packages"].items() if k in ("mpi", "openmpi", "mpich")}
    env_dir = _local_env(spack, spack_env, f"osu-cuda-{cuda}", ["osu-micro-benchmarks+cuda"], {
        **mpi, "all": {"variants": "cuda_arch=90"},
        "cuda": {"buildable": False, "externals": [{"spec": f"cuda@{cuda}",
                                                     "prefix": "/opt/cuda-not-needed"}]}})
    spack("concretize", "--fresh", "--force", env_dir=env_dir, timeout=1800)
    code = ("import spack.environment as ev\n"
            "spec = next(s for s in ev.active_environment().all_specs()"
            " if s.name == 'osu-micro-benchmarks')\n"
            "for node in spec.traverse():  # what the MPI's package sets for a build\n"
            "    if node.name in ('openmpi', 'mpich'):\n"
            "        node.mpicc, node.mpicxx = 'mpicc', 'mpicxx'\n"
            "print(spec.namespace, ' '.join(spec.package.configure_args()))\n")
    script = env_dir / "osu_configure_args.py"  # `spack python -c` takes one statement
    script.write_text(code)
    out = spack("python", str(script), env_dir=env_dir, timeout=600).stdout.split()
    assert out[0] == "fabrictest" and flag in out[1:], out
    assert ("--enable-cuda" in out) == (flag == "--enable-cuda"), out

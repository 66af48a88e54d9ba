"""The gpcnet recipe: builtin's (whose only version is the moving ``master``) pinned to
commits of the official repository, a +verbose variant, in the
fabrictest bundle (+gpcnet) and the environment of the system that runs it (slingshot); with a
real Spack (SPACK_ROOT, tests/spack/conftest.py) it concretises against the external MPI, with
and without +verbose, and through the bundle. GPCNeT is built by hand from its public source
(never in CI: no network), as docs/spack.md says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "spack_repo" / "fabrictest" / "packages" / "gpcnet" / "package.py"


def test_recipe_pins_commits_of_the_official_source():
    text = RECIPE.read_text()
    # builtin's recipe (its git URL, dependencies and install) with our pinned versions
    assert "from spack_repo.builtin.packages.gpcnet.package import Gpcnet as BuiltinGpcnet" in text
    assert "class Gpcnet(BuiltinGpcnet):" in text
    versions = re.findall(r'version\(\s*"([^"]+)",([^)]*)\)', text)
    assert {v for v, _ in versions} == {"1.3-2021-07-30", "1.2"}
    for _name, args in versions:
        assert re.search(r'commit="[0-9a-f]{40}"', args), args  # a commit, not a branch
    assert 'variant("verbose"' in text and '"-DVERBOSE"' in text
    assert "super().build_targets + [" in text  # builtin's ["all", "CC=<mpicc>"], our FLAGS


def test_bundle_and_the_systems_that_run_it():
    bundle = (ROOT / "spack_repo/fabrictest/packages/fabrictest/package.py").read_text()
    assert 'variant(\n        "gpcnet",\n        default=False' in bundle
    assert 'depends_on("gpcnet", when="+gpcnet")' in bundle
    env = yaml.safe_load((ROOT / "config/spack/slingshot/spack.yaml").read_text())
    assert any("+gpcnet" in s for s in env["spack"]["specs"])
    system = (ROOT / "config/reframe/systems/slingshot.py").read_text()
    assert '"gpcnet"]' in system


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["gpcnet", "gpcnet+verbose", "gpcnet@1.2", "fabrictest+gpcnet"])
def test_concretises(spack, spack_env, spec):
    text = spack("spec", "--fresh", spec, env_dir=spack_env, timeout=1800).stdout
    assert re.search(r"gpcnet@(1\.3-2021-07-30|1\.2)", text), text
    if "verbose" in spec:
        assert re.search(r"gpcnet@\S+\+verbose", text), text
    else:
        assert re.search(r"gpcnet@\S+~verbose", text), text
    assert re.search(r"\^openmpi@\S+", text) or re.search(r"\^mpich@\S+", text), text

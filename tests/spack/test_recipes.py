"""Checks of the Spack package repository and environments that need no Spack: every recipe
parses, versions and dependencies agree with pyproject.toml, and every system has both a
ReFrame configuration and a Spack environment."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
REPO = ROOT / "spack_repo" / "fabrictest"
PACKAGES = REPO / "packages"
SPACK_ENVS = ROOT / "config" / "spack"
REFRAME_SYSTEMS = ROOT / "config" / "reframe" / "systems"
#: builtin packages we extend (a subclass of Spack's recipe: its versions, our one change)
#: recipes that subclass builtin's: True where builtin's versions are kept as they are, False
#: where ours pins its own (builtin's gpcnet has only the moving branch "master")
EXTENDED = {"osu-micro-benchmarks": True, "gpcnet": False}
MPI_PROVIDERS = {"openmpi", "mpich", "cray-mpich", "mvapich", "mvapich2", "intel-oneapi-mpi"}


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def package_dirs() -> list[Path]:
    return sorted(p for p in PACKAGES.iterdir() if (p / "package.py").is_file())


class Recipe:
    """Directives of one package.py, read with ast (no Spack import)."""

    def __init__(self, path: Path):
        self.path = path
        self.tree = ast.parse(path.read_text(), filename=str(path))
        classes = [n for n in self.tree.body if isinstance(n, ast.ClassDef)]
        assert len(classes) == 1, f"{path}: one package class expected"
        self.cls = classes[0]
        self.calls: dict[str, list[ast.Call]] = {}
        for node in ast.walk(self.cls):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                self.calls.setdefault(node.func.id, []).append(node)

    @staticmethod
    def _text(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):  # f"py-fabrictest@{_v}": keep the literal parts
            return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
        return None

    def _kw(self, call: ast.Call, name: str) -> str | None:
        for kw in call.keywords:
            if kw.arg == name:
                return self._text(kw.value)
        return None

    def versions(self) -> list[str]:
        return [self._text(c.args[0]) for c in self.calls.get("version", [])]

    def variants(self) -> set[str]:
        return {self._text(c.args[0]) for c in self.calls.get("variant", [])}

    def depends(self) -> list[tuple[str, str | None]]:
        """(spec, when) of every depends_on, `with when(...)` blocks folded into `when`."""
        out = []
        for node in ast.walk(self.cls):
            if not isinstance(node, ast.With):
                continue
            outer = self._text(node.items[0].context_expr.args[0])
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and getattr(inner.func, "id", "") == "depends_on":
                    inner._outer_when = outer  # type: ignore[attr-defined]
        for call in self.calls.get("depends_on", []):
            when = self._kw(call, "when")
            outer = getattr(call, "_outer_when", None)
            if outer:
                when = f"{outer} {when}" if when else outer
            out.append((self._text(call.args[0]), when))
        return out

    def imports(self) -> list[str]:
        return [n.module for n in self.tree.body if isinstance(n, ast.ImportFrom)]


def class_name(pkg: str) -> str:
    """Spack's rule: py-fabrictest -> PyFabrictest."""
    return "".join(part.capitalize() for part in re.split(r"[-_]", pkg))


def spack_name(requirement: str) -> tuple[str, str]:
    """'numpy>=1.21' -> ('py-numpy', '@1.21:'); the few forms pyproject.toml uses."""
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(?:>=\s*([0-9][\w.]*))?\s*", requirement)
    assert m, f"{requirement!r}: only 'name' and 'name>=X' are mapped to Spack; extend this test"
    name = m[1].lower().replace("_", "-").replace(".", "-")
    if re.fullmatch(r"cupy-cuda\d+x", name):
        name = "cupy"
    return f"py-{name}", f"@{m[2]}:" if m[2] else ""


@pytest.fixture(scope="module")
def recipes() -> dict[str, Recipe]:
    return {d.name.replace("_", "-"): Recipe(d / "package.py") for d in package_dirs()}


def test_repo_yaml():
    data = yaml.safe_load((REPO / "repo.yaml").read_text())
    assert data == {"repo": {"namespace": "fabrictest", "api": "v2.2"}}


def test_expected_packages(recipes):
    assert set(recipes) == {"py-fabrictest", "fabrictest-benchmarks", "perftest", "fabrictest",
                            "gpcnet", "osu-micro-benchmarks"}


@pytest.mark.parametrize("pkgdir", package_dirs(), ids=lambda p: p.name)
def test_package_parses_and_imports_v2_api(pkgdir):
    recipe = Recipe(pkgdir / "package.py")
    name = pkgdir.name.replace("_", "-")
    assert recipe.cls.name == class_name(name)
    imports = recipe.imports()
    assert "spack.package" in imports
    assert not any(m.startswith("spack.pkg") for m in imports), "old (v1 api) import"
    if name in EXTENDED:  # the builtin recipe's class, its versions
        assert f"spack_repo.builtin.packages.{pkgdir.name}.package" in imports, imports
        assert recipe.cls.bases
        assert bool(recipe.versions()) != EXTENDED[name], recipe.versions()
    else:
        assert any(m.startswith("spack_repo.builtin.build_systems.") for m in imports), imports
        assert recipe.versions(), "no version"
    assert recipe.cls.body and isinstance(recipe.cls.body[0], ast.Expr), "docstring first"
    compile(recipe.tree, str(pkgdir / "package.py"), "exec")


def test_python_package_agrees_with_pyproject(recipes):
    project = pyproject()
    recipe = recipes["py-fabrictest"]
    assert project["project"]["version"] in recipe.versions()
    deps = {spec: when for spec, when in recipe.depends()}
    runtime = [spec for spec, when in recipe.depends() if when is None]

    py_min = re.fullmatch(r">=\s*([\d.]+)", project["project"]["requires-python"])[1]
    assert f"python@{py_min}:" in runtime

    for req in project["build-system"]["requires"]:
        name, version = spack_name(req)
        assert f"{name}{version}" in runtime, f"build requirement {req} missing as {name}{version}"

    wanted = {spack_name(r)[0] for r in project["project"]["dependencies"]}
    for req in project["project"]["dependencies"]:
        name, version = spack_name(req)
        assert f"{name}{version}" in runtime, f"dependency {req} missing as {name}{version}"
    declared = {re.split(r"[@+~ ]", s)[0] for s in runtime if s.startswith("py-")}
    build_only = {spack_name(r)[0] for r in project["build-system"]["requires"]}
    assert declared - build_only == wanted, "py-* run dependencies differ from pyproject's"

    extras = project["project"]["optional-dependencies"]
    # [rdma]: pyverbs comes with rdma-core, not from PyPI
    assert "rdma" in extras and "rdma" in recipe.variants()
    assert deps.get("rdma-core+pyverbs") == "+rdma"
    # [gpu]: CuPy for CUDA
    assert "cuda" in recipe.variants()
    for req in extras["gpu"]:
        name, version = spack_name(req)
        assert deps.get(f"{name}{version}+cuda") == "+cuda", f"[gpu] {req} missing"


def test_versions_agree_across_recipes(recipes):
    version = pyproject()["project"]["version"]
    for name in ("py-fabrictest", "fabrictest-benchmarks", "fabrictest"):
        assert version in recipes[name].versions(), name
    numeric = {n: {v for v in recipes[n].versions() if v[0].isdigit()} for n in recipes
               if n not in EXTENDED}
    assert numeric["py-fabrictest"] == numeric["fabrictest-benchmarks"] == numeric["fabrictest"]


def _version_calls(recipe: Recipe) -> list[tuple[str, dict[str, str | None]]]:
    return [(Recipe._text(c.args[0]), {k.arg: Recipe._text(k.value) for k in c.keywords})
            for c in recipe.calls.get("version", [])]


def test_a_numbered_version_names_one_tree(recipes):
    """Spack's style: a branch version is named after its branch (`main`, a spec that says it
    moves); a numbered version is one tree (a commit, or an archive's sha256), so two installs
    of @0.1.0 build the same sources. A bundle fetches nothing."""
    for name, recipe in recipes.items():
        if "BundlePackage" in recipe.path.read_text():
            continue
        for version, kw in _version_calls(recipe):
            if "branch" in kw:
                assert kw["branch"] == version, f"{name}@{version} names branch {kw['branch']}"
            if version[0].isdigit():
                pinned = re.fullmatch(r"[0-9a-f]{40}", kw.get("commit") or "") or re.fullmatch(
                    r"[0-9a-f]{64}", kw.get("sha256") or "")
                assert pinned and "branch" not in kw, f"{name}@{version}: {kw} is no one tree"


def test_our_pinned_commit_is_in_this_repositorys_history(recipes):
    """The commit our numbered versions name exists, on the history of this checkout."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              timeout=60)

    shallow = git("rev-parse", "--is-shallow-repository")
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        pytest.skip("not a whole git history: the commit cannot be looked up")
    for name in ("py-fabrictest", "fabrictest-benchmarks"):
        (commit,) = {kw["commit"] for v, kw in _version_calls(recipes[name]) if "commit" in kw}
        found = git("merge-base", "--is-ancestor", commit, "HEAD")
        assert found.returncode == 0, f"{name}: {commit} is not in this checkout's history"


def test_c_package_has_gpu_variants_and_builds_src_c(recipes):
    recipe = recipes["fabrictest-benchmarks"]
    source = recipe.path.read_text()
    assert "CudaPackage" in source and "ROCmPackage" in source  # +cuda, +rocm variants
    assert 'build_directory = "src/c"' in source
    assert "GPU=cuda" in source and "GPU=rocm" in source
    assert ("mpi", None) in recipe.depends()


def test_perftest_has_checksummed_versions(recipes):
    for call in recipes["perftest"].calls["version"]:
        sha = Recipe._text(next(k.value for k in call.keywords if k.arg == "sha256"))
        assert re.fullmatch(r"[0-9a-f]{64}", sha)


def test_bundle_pulls_in_the_suite_and_propagates_gpu(recipes):
    deps = recipes["fabrictest"].depends()
    names = {re.split(r"[@+~ ]", spec)[0] for spec, _ in deps}
    assert {
        "py-fabrictest",
        "fabrictest-benchmarks",
        "perftest",
        "osu-micro-benchmarks",
        "intel-mpi-benchmarks",
    } <= names
    specs = {spec: when for spec, when in deps}
    for gpu in ("cuda", "rocm"):
        assert f"+{gpu}" in (specs.get(f"fabrictest-benchmarks+{gpu}") or "")
        assert f"+{gpu}" in (specs.get(f"osu-micro-benchmarks+{gpu}") or "")
        assert f"+{gpu}" in (specs.get(f"perftest+{gpu}") or "")


# ---- environments ----


def spack_env_systems() -> set[str]:
    return {d.name for d in SPACK_ENVS.iterdir() if (d / "spack.yaml").is_file()}


def reframe_systems() -> set[str]:
    return {p.stem for p in REFRAME_SYSTEMS.glob("*.py") if not p.stem.startswith("_")}


def test_every_reframe_system_has_a_spack_environment_and_vice_versa():
    found = reframe_systems()
    if not found:
        pytest.skip(f"no ReFrame system files in {REFRAME_SYSTEMS} yet")
    envs = spack_env_systems()
    assert not found - envs, (f"no config/spack/<name>/spack.yaml for {sorted(found - envs)}: "
                              "docs/architecture.md, 'Adding a system', step 2")
    assert not envs - found, (f"no config/reframe/systems/<name>.py for {sorted(envs - found)}: "
                              "docs/architecture.md, 'Adding a system', step 1")


def test_the_systems_are_found_not_listed():
    """The systems are the ReFrame system files (a new one is checked from its first commit,
    no list here to edit); the suite's own are among them."""
    assert {"local", "vcluster", "seren", "orfeo"} <= reframe_systems()


#: every system, ReFrame's or Spack's: one without the other fails above, the environment here
SYSTEMS = sorted(reframe_systems() | spack_env_systems())


@pytest.mark.parametrize("system", SYSTEMS)
def test_spack_environment(system):
    env_dir = SPACK_ENVS / system
    spack = yaml.safe_load((env_dir / "spack.yaml").read_text())["spack"]

    # the in-tree package repository, through $env
    repo = spack["repos"]["fabrictest"]
    assert repo.startswith("$env/")
    assert (env_dir / repo.removeprefix("$env/")).resolve() == REPO.resolve()

    # the bundle is the spec
    assert len(spack["specs"]) == 1
    root = spack["specs"][0]
    assert re.match(r"fabrictest([+~ ]|$)", root), root

    # our packages build from this checkout
    version = pyproject()["project"]["version"]
    develop = spack["develop"]
    assert "fabrictest-benchmarks" in develop
    if "~python" not in root:
        assert "py-fabrictest" in develop
    for name, entry in develop.items():
        assert entry["spec"] == f"{name}@={version}"
        assert (env_dir / entry["path"]).resolve() == ROOT.resolve()

    # MPI (and rdma-core where RDMA tools are built) are the site's, never built
    packages = spack["packages"]
    providers = [p for p in MPI_PROVIDERS if p in packages]
    assert len(providers) == 1, providers
    mpi = packages[providers[0]]
    if system == "cuda-node":  # no site MPI is CUDA-aware: Open MPI is built here, +cuda
        assert packages["mpi"]["require"] == [providers[0]] == ["openmpi"]
        assert "+cuda" in mpi["require"][0] and "externals" not in mpi
    else:
        assert packages["mpi"]["buildable"] is False
        assert mpi["buildable"] is False and mpi["externals"]
    for ext in mpi.get("externals", []):
        assert re.match(rf"{providers[0]}@\d", ext["spec"])
        assert ext.get("prefix") or ext.get("modules")
    if "~rdma" not in root:
        rdma = packages["rdma-core"]
        assert rdma["buildable"] is False
        assert all("+pyverbs" in e["spec"] for e in rdma["externals"])
    if "+rocm" in root:
        assert "amdgpu_target=" in packages["all"]["variants"]
        assert packages["hip"]["externals"]


def test_gpu_system_uses_rocm_and_cray_mpich():
    spack = yaml.safe_load((SPACK_ENVS / "crusher" / "spack.yaml").read_text())["spack"]
    assert "+rocm" in spack["specs"][0]
    assert "cray-mpich" in spack["packages"]

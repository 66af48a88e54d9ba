"""The layer contracts of pyproject.toml ([tool.importlinter], docs/architecture.md) hold on the
tree, and each one can fail: `lint-imports` with the project's own contracts, run on a copy of
the package with one forbidden import added, names that contract BROKEN and exits non-zero."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = ROOT / "src" / "fabrictest"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    """The project's contracts on the `fabrictest` package found first from `cwd`."""
    assert LINT_IMPORTS.exists(), "lint-imports missing: the [dev] extra installs import-linter"
    env = dict(os.environ, PYTHONPATH=str(cwd))
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(PYPROJECT), "--no-cache", "--no-logo"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of src/fabrictest under tmp_path, which lint-imports then analyses."""
    shutil.copytree(PACKAGE, tmp_path / "fabrictest", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_the_tree_keeps_every_contract():
    proc = lint_imports(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_an_untouched_copy_keeps_every_contract(package_copy):
    # the control for the cases below: the copy itself is analysed, and is clean
    proc = lint_imports(package_copy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert str(package_copy) not in proc.stderr


@pytest.mark.parametrize(
    "module, line, contract",
    [
        ("parsers/_util.py", "import reframe", "parsers are pure"),
        ("parsers/osu.py", "from fabrictest import sysinfo", "parsers are pure"),
        ("txrx/stats.py", "import reframe.utility.sanity", "txrx imports no ReFrame"),
        ("txrx/stats.py", "from fabrictest.report import stats", "txrx imports no ReFrame"),
        ("txrx/stats.py", "import matplotlib", "txrx imports no ReFrame"),
        ("vcluster/plan.py", "import reframe_tests.fabric_base", "vcluster imports no ReFrame"),
        ("vcluster/plan.py", "import tests.conftest", "vcluster imports no ReFrame"),
        ("report/stats.py", "from fabrictest.txrx import errors", "report does not import txrx"),
        ("sysinfo.py", "from fabrictest import health", "fabrictest's modules import only"),
        ("health/checks.py", "from . import gather", "health: the CLI above the gathering"),
        ("health/gather.py", "from .cli import main", "health: the CLI above the gathering"),
        ("health/checks.py", "import subprocess", "health checks run no command"),
        ("health/checks.py", "from fabrictest import sysinfo", "health checks run no command"),
        ("references/model.py", "from .loading import load", "references: checks above"),
        ("references/loading.py", "from .judging import refusals", "references: checks above"),
        ("references/judging.py", "from .consistency import TestSpec", "references: checks above"),
    ],
)
def test_a_forbidden_import_breaks_its_contract(package_copy, module, line, contract):
    target = package_copy / "fabrictest" / module
    target.write_text(target.read_text() + f"\n{line}\n")
    proc = lint_imports(package_copy)
    assert proc.returncode != 0, proc.stdout
    broken = [ln for ln in proc.stdout.splitlines() if ln.endswith("BROKEN")]
    assert any(ln.startswith(contract) for ln in broken), proc.stdout


def test_a_module_outside_the_layers_is_refused(package_copy):
    # the layers contract is exhaustive: a new top-level module must be given its layer
    (package_copy / "fabrictest" / "newthing.py").write_text("X = 1\n")
    proc = lint_imports(package_copy)
    assert proc.returncode != 0, proc.stdout
    assert "fabrictest.newthing" in proc.stdout + proc.stderr

"""The layer contracts of pyproject.toml ([tool.importlinter], docs/architecture.md) hold on the
tree, and each one can fail: `lint-imports` with the project's own contracts, run on a copy of
the package (and of reframe_tests/ and config/, the ReFrame side) with one forbidden import
added, names that contract BROKEN and exits non-zero."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = ROOT / "src" / "fabrictest"
REFRAME_SIDE = ("reframe_tests", "config")  # namespace packages of the repository root
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    """The project's contracts on the `fabrictest` package (and `reframe_tests`, `config`)
    found first from `cwd`."""
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
    """A copy of src/fabrictest, reframe_tests/ and config/ under tmp_path, which lint-imports
    then analyses."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(PACKAGE, tmp_path / "fabrictest", ignore=ignore)
    for name in REFRAME_SIDE:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=ignore)
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
        ("txrx/stats.py", "from fabrictest.report.records import stats", "txrx imports no ReFrame"),
        ("txrx/stats.py", "import matplotlib", "txrx imports no ReFrame"),
        ("vcluster/plan.py", "import reframe_tests.fabric_base", "vcluster imports no ReFrame"),
        ("sweep/upper_groups.py", "from scipy.stats import t", "the sweep runs on the base"),
        ("vcluster/plan.py", "import tests.conftest", "vcluster imports no ReFrame"),
        ("report/records/stats.py", "from fabrictest.txrx import errors", "report does not import txrx"),
        # report: the floor imports no command, a command no command module, and the five
        # commands below acceptance and html none of each other
        ("report/records/stats.py", "from fabrictest.report.compare import rows",
         "report: cli above the commands"),
        ("report/page/plots.py", "from fabrictest.report.options import load",
         "report: cli above the commands"),
        ("report/history/figures.py", "from fabrictest.report.compare.rows import newest",
         "report: cli above the commands"),
        ("report/acceptance/stage1.py", "from fabrictest.report.history.cmd import run",
         "report: a command module (cmd) is imported by the CLI only"),
        ("plan/jobs.py", "import reframe", "plan runs ReFrame as a subprocess only"),
        ("plan/output.py", "from fabrictest.report import outfiles",
         "plan runs ReFrame as a subprocess only"),
        ("sweep/cost.py", "from fabrictest.plan import jobs", "fabrictest's modules import only"),
        ("sysinfo.py", "from fabrictest import health", "fabrictest's modules import only"),
        ("health/checks.py", "from . import gather", "health: the CLI above the gathering"),
        ("health/gather.py", "from .cli import main", "health: the CLI above the gathering"),
        ("health/checks.py", "import subprocess", "health checks run no command"),
        ("health/checks.py", "from fabrictest import sysinfo", "health checks run no command"),
        # the counters room: its layers, and its pure modules reading nothing
        ("counters/snapshot.py", "from . import judge", "counters: the command above"),
        ("counters/perfquery.py", "from .snapshot import Counter", "counters: the command above"),
        ("counters/kinds.py", "import subprocess", "counters' pure modules run no command"),
        ("counters/judge.py", "from fabrictest import sysinfo", "counters' pure modules"),
        ("counters/difference.py", "import reframe", "counters' pure modules"),
        ("counters/thresholds.py", "from fabrictest.references import reference_dir",
         "counters' pure modules"),
        ("parsers/osu.py", "from fabrictest.counters import kinds", "parsers are pure"),
        ("references/model.py", "from .loading import load", "references: checks above"),
        ("references/loading.py", "from .judging import refusals", "references: checks above"),
        ("references/judging.py", "from .consistency import TestSpec", "references: checks above"),
        # the circles once there: the sweep's runners <-> simulate, rdma connect <-> transmit
        ("sweep/runners.py", "from .simulate import SimulatedRunner", "no import circles"),
        ("txrx/transports/rdma/transmit.py", "from . import connect", "no import circles"),
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


def test_a_report_module_outside_its_packages_is_refused(package_copy):
    # report-layers is exhaustive: a new module of report/ belongs to a command's package or
    # to the records
    (package_copy / "fabrictest" / "report" / "loose.py").write_text("X = 1\n")
    proc = lint_imports(package_copy)
    assert proc.returncode != 0, proc.stdout
    assert "fabrictest.report.loose" in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "module, line, contract",
    [
        # a family importing another (ReFrame loads them by path: `from osu import ...`)
        ("reframe_tests/txrx.py", "from osu import OsuBase", "families do not import each other"),
        ("reframe_tests/imb.py", "import perftest", "families do not import each other"),
        # the base importing a family
        ("reframe_tests/fabric_base.py", "from sweep import SweepTest",
         "families do not import each other"),
        ("config/reframe/systems/local.py", "from fabrictest.parsers import osu",
         "config imports only launching"),
        ("config/reframe/launchers.py", "from fabrictest.references import load",
         "config imports only launching"),
        ("config/reframe/systems/vcluster.py", "from fabrictest.vcluster.cluster import up",
         "config imports only launching"),
        ("config/reframe/settings.py", "import reframe_tests.fabric_base",
         "config imports only launching"),
    ],
)
def test_a_forbidden_import_on_the_reframe_side_breaks_its_contract(
    package_copy, module, line, contract
):
    target = package_copy / module
    target.write_text(target.read_text() + f"\n{line}\n")
    proc = lint_imports(package_copy)
    assert proc.returncode != 0, proc.stdout
    broken = [ln for ln in proc.stdout.splitlines() if ln.endswith("BROKEN")]
    assert any(ln.startswith(contract) for ln in broken), proc.stdout


def families() -> set[str]:
    """The family modules of reframe_tests/: all but the base (fabric_*) and scenario_math."""
    return {p.stem for p in (ROOT / "reframe_tests").glob("*.py")
            if not p.stem.startswith("fabric_") and p.stem != "scenario_math"}


def test_the_families_contract_names_every_family():
    """A new family file is covered by `families-independent` only once it is listed there."""
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    (independent,) = [c for c in contracts if c["id"] == "families-independent"]
    assert set(independent["forbidden_modules"]) == families(), (
        "list every family of reframe_tests/ in the families-independent contract"
    )
    assert families() >= {"txrx", "osu", "sweep"}  # the rule itself: files found

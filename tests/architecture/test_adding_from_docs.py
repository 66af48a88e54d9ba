"""A family and a system added by following docs/architecture.md literally ("Adding a test
family", "Adding a system"), in a copy of the checkout: both list (`reframe -l`) and dry-run,
and the fast loop's guards pass on the copy. Then the same family with each mistake of issue
43 planted (left out of the families contract, a variable without a rule, a reference in the
wrong unit, a wrong benchmark name): each guard of the fast selection fails, naming it.
The family is an OSU program on OsuBase, whose parser it uses: step 1 (a parser) is not needed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "reframe"))
from _rfm import run_reframe  # noqa: E402

#: the fast selection, as scripts/run-tests.sh --fast writes it
FAST = re.search(r'FABRICTEST_FAST=1 exec python -m pytest -m "([^"]+)"',
                 (ROOT / "scripts" / "run-tests.sh").read_text())[1]
#: the fast loop's checks of a family and a system (tests/architecture/test_fast_loop.py)
GUARDS = ("tests/architecture/test_layers.py::test_the_families_contract_names_every_family",
          "tests/reframe/test_variables.py::test_every_variable_has_a_rule_and_a_safe_kind",
          "tests/reframe/test_references.py", "tests/reframe/test_family_programs.py",
          "tests/spack/test_recipes.py",
          "tests/reframe/test_listing.py::test_every_family_has_a_listing_statement")

#: the new family, an OSU program on OsuBase (the family of issue 43's trial)
FAMILY = '''"""OSU's multi-pair latency, ``PROGRAM``: ``lat_pairs`` pairs of ranks between two
nodes."""

from __future__ import annotations

import reframe as rfm
from fabric_osu import OsuBase
from fabric_types import Count
from reframe.core.builtins import parameter, performance_function, run_after, variable


@rfm.simple_test
class OsuMultiLatTest(OsuBase):
    descr = "OSU multi-pair latency between two nodes"
    benchmark = parameter(["PROGRAM"])
    #: pairs of ranks (unset: 2)
    lat_pairs = variable(Count, type(None), value=None)
    shaped_by = ("max_size", "osu_iterations", "lat_pairs")

    def placement_on(self, part):
        nodes = self.pair_nodes_on(part)
        return nodes, 2 * (self.lat_pairs or 2) // nodes

    @run_after("setup")
    def configure(self):
        self.executable = self.osu_binary(self.benchmark)
        self.executable_opts = self.size_opts()
        self.place(*self.placement_on(self.current_partition), round_robin=False)

    def result_problems(self):
        return self.run_problems(self.result(), self.executable_name(), self.benchmark)

    @performance_function("us")
    def latency(self):
        return min(self.result().rows, key=lambda r: r.size).value
'''


def checkout_copy(tmp: Path) -> Path:
    """The parts of this checkout the suite and its fast guards read."""
    dest = tmp / "checkout"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "data", "golden", "output")
    for name in ("reframe_tests", "config", "reference", "src/fabrictest", "tests", "spack_repo",
                 "scripts"):
        shutil.copytree(ROOT / name, dest / name, ignore=skip)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: {old!r} is no longer there: follow the docs again"
    path.write_text(text.replace(old, new, 1))


def add_system(root: Path, name: str = "scratch") -> None:
    """docs/architecture.md, "Adding a system", steps 1-3."""
    # 1. the closest system's file, its name (the file's), hostnames, nodes and environments'
    #    target_systems changed
    seren = (root / "config/reframe/systems/seren.py").read_text()
    (root / f"config/reframe/systems/{name}.py").write_text(seren.replace("seren", name))
    # 2. cp -r config/spack/seren config/spack/<name>
    shutil.copytree(root / "config/spack/seren", root / f"config/spack/{name}")
    # 3. the starting reference file of a system with no figures yet
    shutil.copy(root / "reference/templates/new-system.yaml", root / f"reference/{name}.yaml")


def add_family(root: Path, program: str = "osu_multi_lat", register: bool = True,
               rule: bool = True) -> None:
    """docs/architecture.md, "Adding a test family", step 2 and what it lists beside the file."""
    (root / "reframe_tests/osu_multi_lat.py").write_text(FAMILY.replace("PROGRAM", program))
    if register:  # the families-independent contract names it
        edit(root / "pyproject.toml", 'forbidden_modules = [\n    "alltomany",',
             'forbidden_modules = [\n    "alltomany",\n    "osu_multi_lat",')
    if rule:  # a rule for its new variable
        edit(root / "reframe_tests/fabric_variables.py",
             '"max_repetitions", "perftest_iters",', '"max_repetitions", "perftest_iters", '
             '"lat_pairs",')
    # its program among those the one search looks for
    edit(root / "src/fabrictest/binaries.py", '"osu_mbw_mr",\n', '"osu_mbw_mr", "osu_multi_lat",\n')
    # step 4: what it needs, stated for the listing tests
    listing = root / "tests/reframe/test_listing.py"
    edit(listing, '    "NcclTest",\n)', '    "NcclTest",\n    "OsuMultiLatTest",\n)')
    edit(listing, '"NcclTest": ("nccl", "gpu"),\n}', '"NcclTest": ("nccl", "gpu"),\n'
         '    "OsuMultiLatTest": ("osu",),\n}')


def fast_guards(root: Path) -> subprocess.CompletedProcess:
    """The fast selection of the guards, run on the copy (its fabrictest first on the path)."""
    env = {**os.environ, "FABRICTEST_FAST": "1",
           "PYTHONPATH": os.pathsep.join([str(root / "src"), os.environ.get("PYTHONPATH", "")]),
           "RFM_CONFIG_FILES": str(root / "config/reframe/settings.py"),
           "RFM_REFERENCE_PREFIX": str(root / "reference")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-m", FAST, *GUARDS], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_family_and_a_system_added_from_the_docs_list_and_dry_run(tmp_path):
    root = checkout_copy(tmp_path)
    add_system(root)
    add_family(root)
    listing = run_reframe(["--system", "scratch", "-l"], tmp_path / "list", timeout=180,
                          root=root)
    assert listing.returncode == 0, listing.output[-3000:]
    assert "OsuMultiLatTest %benchmark=osu_multi_lat" in listing.output, listing.output[-3000:]
    assert "TxRxTest %scenario=paired" in listing.output  # the system lists the suite too
    dry = run_reframe(["--system", "scratch", "--dry-run", "-n", "OsuMultiLatTest"],
                      tmp_path / "dry", timeout=180, root=root)
    assert dry.returncode == 0, dry.output[-3000:]
    script = dry.job_script("OsuMultiLatTest")
    # the system's own Spack environment, nodes and launcher; the family's 2 pairs on 2 nodes
    assert f"spack env activate --sh -d {root}/config/spack/scratch" in script, script
    assert "printf 'scratch-01 slots=2\\nscratch-02 slots=2\\n' > hostfile.txt" in script, script
    assert re.search(r"^mpirun -np 4 -map-by ppr:2:node -hostfile hostfile.txt .* osu_multi_lat$",
                     script, re.MULTILINE), script
    guards = fast_guards(root)
    assert guards.returncode == 0, guards.stdout[-4000:] + guards.stderr[-2000:]
    assert re.search(r"\d+ passed", guards.stdout), guards.stdout[-2000:]


def test_the_fast_guards_fail_on_each_planted_mistake(tmp_path):
    root = checkout_copy(tmp_path)
    add_system(root)
    # a family left out of the contract, with a variable without a rule, running a program by
    # a wrong name; and a reference in the wrong unit
    add_family(root, program="osu_multi_latency", register=False, rule=False)
    edit(root / "reference/local.yaml", "latency: [1.0, null, 49.0, us]",
         "latency: [1.0, null, 49.0, ms]")
    guards = fast_guards(root)
    out = guards.stdout
    assert guards.returncode != 0, out[-3000:]
    failed = {
        "families contract": "FAILED tests/architecture/test_layers.py::"
                             "test_the_families_contract_names_every_family",
        "variable rule": "FAILED tests/reframe/test_variables.py::"
                         "test_every_variable_has_a_rule_and_a_safe_kind[osu_multi_lat.py]",
        "reference unit": "FAILED tests/reframe/test_references.py::"
                          "test_reference_file_loads_and_matches_the_tests[local]",
        "benchmark name": "FAILED tests/reframe/test_family_programs.py::"
                          "test_every_program_a_family_runs_is_searched_for",
        # ... and the name the list was given is then run by no family
        "name in the list": "FAILED tests/reframe/test_family_programs.py::"
                            "test_every_program_searched_for_is_run_by_a_family",
    }
    for mistake, line in failed.items():
        assert line in out, (mistake, out[-4000:])
    assert "lat_pairs: no rule in fabric_variables.RULES" in out
    assert "runs osu program 'osu_multi_latency'" in out
    assert "OsuPt2PtTest.local.osu_latency.latency unit 'ms' != the test's 'us'" in out
    # nothing else failed: each mistake is found by its own guard
    assert len(re.findall(r"^FAILED ", out, re.MULTILINE)) == len(failed), out[-4000:]

"""The fast loop (`run-tests.sh --fast`) holds the family contract (issue 43: it passed with a
family left out of the families contract, a variable without a rule, a reference in the wrong
unit and a wrong benchmark name, because those checks sat in modules that also start ReFrame and
`proc` was set per module). `proc` is now set per test: these checks are in the selection.
tests/architecture/test_adding_from_docs.py plants each mistake in a copy of the checkout and
shows each of these guards failing on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAST = "not slow and not mpi and not vcluster and not proc"
GUARDS = (
    "tests/architecture/test_layers.py::test_the_families_contract_names_every_family",
    "tests/reframe/test_variables.py::test_every_variable_has_a_rule_and_a_safe_kind",
    "tests/reframe/test_references.py::test_reference_file_loads_and_matches_the_tests",
    "tests/reframe/test_family_contract.py::",
    "tests/reframe/test_family_programs.py::test_every_program_a_family_runs_is_searched_for",
)


def test_the_family_checks_are_in_the_fast_selection():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", FAST,
         "-p", "no:cacheprovider", "tests/architecture", "tests/reframe"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "FABRICTEST_FAST": "1"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    selected = proc.stdout.splitlines()
    for guard in GUARDS:
        assert any(line.startswith(guard) for line in selected), f"{guard} not in --fast"
    # and a ReFrame run beside them stays out
    assert not any("test_local_runs_exactly_what_it_lists" in line for line in selected)

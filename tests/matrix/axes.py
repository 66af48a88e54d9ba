"""The matrix's axes: the checks (the ReFrame families found in ``reframe_tests/``, then the
commands above them) and the faults."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAMILIES_DIR = ROOT / "reframe_tests"

#: fault id -> its column title; ``healthy`` first (every check must PASS it)
FAULTS: dict[str, str] = {
    "healthy": "healthy",
    "link_down": "link down",
    "flap": "flap during a test",
    "bw_0_5": "0.5x bandwidth",
    "bw_0_85": "0.85x bandwidth",
    "error_burst": "error-counter burst",
    "saturated": "saturated 32-bit counter",
    "nonfinite": "NaN/inf/negative figure",
    "truncated": "truncated output",
    "doubled": "doubled output",
    "other_benchmark": "another benchmark's output",
    "hung_tool": "hung tool (SIGSTOP)",
    "missing_tool": "missing tool",
    "empty_selection": "empty selection",
    "lost_records": "lost records",
    "stale_foreign": "stale or foreign evidence",
}
HEALTHY = "healthy"

#: the commands that judge above the families (each a row after the families); ``reframe
#: run`` is the suite's run itself (./scripts/run-suite.sh), whose selection and records are
#: the run's, not one family's
COMMANDS = ("reframe run", "acceptance", "counters verdict", "fabric-health", "fabric-sweep",
            "fabric-report compare", "fabric-report history")


def _is_simple_test(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "simple_test" or (
        isinstance(target, ast.Name) and target.id == "simple_test")


def families() -> dict[str, str]:
    """``{class name: file name}`` of every ``@rfm.simple_test`` class in reframe_tests/, in
    file order: a family added there is a row without anyone listing it."""
    out: dict[str, str] = {}
    for path in sorted(FAMILIES_DIR.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and any(map(_is_simple_test, node.decorator_list)):
                out[node.name] = path.name
    return out


def rows() -> list[str]:
    return [*families(), *COMMANDS]

"""The ReFrame side uses ReFrame's public API only: no module of reframe_tests/ or config/
reads or writes an attribute whose name starts with one underscore (ReFrame keeps its own
state there, `_perfvalues`, `_job`, ...; our own state on a test lives in public names, so it
can neither read ReFrame's nor clash with it). Dunders (`__dict__`) are Python's, not
ReFrame's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "reframe_tests").glob("*.py"), *(ROOT / "config").rglob("*.py")])


def private_attributes(source: str) -> list[str]:
    """`line: .name` for every attribute access to a single-underscore name in ``source``."""
    found = [(node.lineno, node.attr) for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Attribute) and node.attr.startswith("_")
             and not node.attr.startswith("__")]
    return [f"{line}: .{name}" for line, name in sorted(found)]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_attribute_is_touched(path):
    assert private_attributes(path.read_text()) == []


def test_the_check_sees_a_private_attribute():
    code = "failed = {k: v for k, v in self._perfvalues.items()}\nself._links = []\n"
    assert private_attributes(code) == ["1: ._perfvalues", "2: ._links"]
    assert private_attributes("self.perfvalues\nself.__dict__\n") == []

"""Every ReFrame test class of the suite has a one-line description (issue 30: `reframe
--describe` showed `"descr": ""` for every test), read from the source (no ReFrame run)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _classes():
    """The tests (`@rfm.simple_test`) and the fixtures (`fixture(Class, ...)`)."""
    sources = {p: p.read_text() for p in sorted((ROOT / "reframe_tests").glob("*.py"))}
    every = "\n".join(sources.values())
    for path, text in sources.items():
        for node in ast.parse(text).body:
            if not isinstance(node, ast.ClassDef):
                continue
            decorated = any("simple_test" in ast.unparse(d) for d in node.decorator_list)
            if decorated or f"fixture({node.name}" in every:
                yield path.name, node


def test_every_test_class_has_a_one_line_descr():
    found = dict.fromkeys(f"{f}:{c.name}" for f, c in _classes())
    assert len(found) >= 15, found
    for fname, cls in _classes():
        descr = [s.value.value for s in cls.body if isinstance(s, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == "descr" for t in s.targets)
                 and isinstance(s.value, ast.Constant)]
        assert descr, f"{fname}:{cls.name} has no class-level descr"
        text = descr[0]
        assert text.strip() and "\n" not in text and len(text) <= 100, (cls.name, text)

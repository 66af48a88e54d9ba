"""Every page of the report escapes its text one way: report/page/markup.py's ``escape`` (None
as empty, everything else ``html.escape``d). No other module of report/ imports ``html``."""

from __future__ import annotations

import ast
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "src" / "fabrictest" / "report"
ESCAPE = REPORT / "page" / "markup.py"


def _imports_html(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import) and any(a.name == "html" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "html" and not node.level:
            return True
    return False


def test_only_the_markup_module_escapes_html():
    modules = sorted(REPORT.rglob("*.py"))
    assert len(modules) > 40 and _imports_html(ESCAPE)  # the tree was found, and the one
    assert [p.relative_to(REPORT).as_posix() for p in modules
            if p != ESCAPE and _imports_html(p)] == []

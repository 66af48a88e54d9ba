"""A cited test exists, is collected and is not marked skip: read from its source (it is not
run here; CI runs it)."""

from __future__ import annotations

import ast

from .axes import ROOT


def _marks(decorators: list[ast.expr]) -> list[str]:
    """The ``pytest.mark.X`` names of a decorator list or a ``pytestmark`` value."""
    out = []
    for node in decorators:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute) and \
                    sub.value.attr == "mark":
                out.append(sub.attr)
    return out


def problems(nodeid: str) -> list[str]:
    """Why ``nodeid`` (``tests/x/test_y.py::test_z[param]``, or ``::Class::test_z``) is no
    evidence: empty when it names a collected test that is not marked skip."""
    path, _, rest = nodeid.partition("::")
    file = ROOT / path
    name, _, param = rest.partition("[")
    parts = name.split("::")
    if not (file.is_file() and file.name.startswith("test_") and path.startswith("tests/")):
        return [f"{nodeid}: no test file {path} under tests/"]
    tree = ast.parse(file.read_text())
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            if {"skip", "skipif"} & set(_marks([node.value])):
                out.append(f"{nodeid}: the module is marked skip")
    scope, found = tree.body, None
    for part in parts:
        found = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                      and n.name == part), None)
        if found is None:
            return [f"{nodeid}: {part} is not defined in {path}"]
        scope = found.body
    if not parts[-1].startswith("test"):
        out.append(f"{nodeid}: {parts[-1]} is not collected (no test_ prefix)")
    if {"skip", "skipif"} & set(_marks(found.decorator_list)):
        out.append(f"{nodeid}: marked skip")
    if param:
        literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        if param.rstrip("]") not in literals:
            out.append(f"{nodeid}: no parameter {param.rstrip(']')!r} in {path}")
    return out




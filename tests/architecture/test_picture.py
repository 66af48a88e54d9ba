"""docs/architecture.md's picture of who imports whom is the code's: every arrow drawn is an
import between the two boxes (top-level modules of `fabrictest`, `reframe_tests/` and
`config/`), and every such import is drawn; every layer of the `layers` contract is a box."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp")  # import-linter's graph builder ([dev])

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
NOTHING = "(nothing of ours)"


def drawn() -> dict[str, set[str]]:
    """{box: the boxes its arrow points at}, from the fenced block after 'Who imports whom'."""
    text = DOC.read_text()
    at = text.index("Who imports whom")
    block = re.search(r"```\n(.*?)```", text[at:], re.S)
    assert block, "no picture after 'Who imports whom'"
    out: dict[str, set[str]] = {}
    for line in block[1].splitlines():
        box, arrow, targets = line.partition("->")
        assert arrow, f"not an arrow: {line!r}"
        box, targets = box.strip(), targets.strip()
        assert box not in out, f"{box} drawn twice"
        out[box] = set() if targets == NOTHING else {t.strip() for t in targets.split(",")}
    return out


def imported(monkeypatch) -> dict[str, set[str]]:
    """{box: the boxes it imports}, from the code (any import, at any depth of either box; the
    package's own `__init__`, which holds only its version, is no box)."""
    monkeypatch.syspath_prepend(str(ROOT))  # reframe_tests and config: namespace packages
    graph = grimp.build_graph("fabrictest", "reframe_tests", "config", cache_dir=None)

    def box(module: str) -> str | None:
        parts = module.split(".")
        if parts[0] != "fabrictest":
            return parts[0]
        return parts[1] if len(parts) > 1 else None

    out: dict[str, set[str]] = {}
    for module in graph.modules:
        here = box(module)
        if here is None:
            continue
        out.setdefault(here, set())
        for target in graph.find_modules_directly_imported_by(module):
            there = box(target)
            if there is not None and there != here:
                out[here].add(there)
    return out


def test_every_import_between_the_boxes_is_drawn_and_nothing_else(monkeypatch):
    picture, code = drawn(), imported(monkeypatch)
    assert set(picture) == set(code), "boxes drawn but not in the code, or the other way round"
    missing = sorted(f"{a} -> {b}" for a in code for b in code[a] - picture[a])
    extra = sorted(f"{a} -> {b}" for a in picture for b in picture[a] - code[a])
    assert (missing, extra) == ([], []), f"not drawn: {missing}; drawn, not in the code: {extra}"


def test_every_layer_is_a_box():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in contracts["contracts"] if c["id"] == "layers")["layers"]
    boxes = {name.strip() for layer in layers for name in re.split(r"[:|]", layer)}
    assert boxes <= set(drawn())

"""The family contract is one table, in FabricTest's docstring and in docs/architecture.md
("Adding a test family"): both name the same things, and each is something FabricTest has,
so the table cannot drift from the base a family is written on."""

from __future__ import annotations

import re

from _rfm import ROOT
from fabric_base import FabricTest

DOC = ROOT / "docs" / "architecture.md"


def names(cells: list[str]) -> set[str]:
    """The Python names a table cell is about: the leading identifier of each quoted item
    (`placement_on(part) -> ...` -> placement_on; `@performance_function(...)` is no name)."""
    out = set()
    for cell in cells:
        out |= {m for m in re.findall(r"`+(\w+)", cell) if m != "rfm"}
    return out


def docstring_rows() -> dict[str, set[str]]:
    rows: dict[str, set[str]] = {"D": set(), "O": set(), "C": set()}
    kind = None
    for line in FabricTest.__doc__.splitlines():
        m = re.match(r"\s{4}([DOC])\s{2,}(.*?)(\s{2,}|$)", line)
        if m:
            kind = m[1]
            rows[kind] |= names([m[2]])
        elif kind and re.match(r"\s{10}\S", line):  # a name column continued
            rows[kind] |= names([line.strip().split("  ")[0]])
        elif line.strip().startswith("===="):
            kind = None
    return rows


def doc_rows() -> dict[str, set[str]]:
    rows: dict[str, set[str]] = {"D": set(), "O": set(), "C": set()}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\s*\| ([DOC]) \| (.*?) \| .* \|$", line)
        if m:
            rows[m[1]] |= names([m[2]])
    return rows


def test_the_docstring_and_the_docs_show_the_same_contract():
    in_code, in_docs = docstring_rows(), doc_rows()
    assert in_code["D"] and in_code["O"] and in_code["C"], in_code
    assert in_code == in_docs


def test_every_name_of_the_contract_is_the_bases():
    for kind, found in docstring_rows().items():
        missing = sorted(n for n in found if n not in ("parameters", "variables")
                         and not hasattr(FabricTest, n))
        assert not missing, f"{kind}: FabricTest has no {missing}"


def test_a_name_the_base_lacks_is_caught():
    assert "placement_of" not in dir(FabricTest)
    assert names(["`placement_of(part)`"]) == {"placement_of"}

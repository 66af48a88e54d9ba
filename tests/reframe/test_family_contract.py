"""The family contract is one table, in FabricTest's docstring and in docs/architecture.md
("Adding a test family"): both name the same things, and each is something FabricTest has,
so the table cannot drift from the base a family is written on. And what the base derives
for every family: shaping() from shaped_by."""

from __future__ import annotations

import re

import pytest
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


class _Family:
    """Just what the base's shaping reads: a family's shaped_by and its variables."""

    shaped_by = ("msg_size", "nmsg", "transport")
    msg_size, nmsg, transport = 65536, 0, "uc"
    shaping = FabricTest.shaping
    record_shaping = FabricTest.record_shaping


def test_shaping_is_derived_from_shaped_by_once():
    fam = _Family()
    assert fam.shaping() == {"msg_size": 65536, "nmsg": 0, "transport": "uc"}
    fam.record_shaping(nmsg=20_000, transport=None)  # resolved at setup; None: does not apply
    assert fam.shaping() == {"msg_size": 65536, "nmsg": 20_000, "transport": None}
    assert _Family().shaping()["nmsg"] == 0  # recorded per case, not on the class


def test_a_shaping_value_for_a_variable_shaped_by_does_not_list_is_refused():
    with pytest.raises(ValueError, match="num_reps not in shaped_by"):
        _Family().record_shaping(num_reps=3)

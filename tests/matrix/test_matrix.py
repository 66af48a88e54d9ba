"""The fault x check matrix (docs/fault-matrix.md): the committed file is the generated one;
every healthy cell PASSes, every fault cell FAILs (naming the faulty element where it has one)
or says why it does not apply; the known gaps are exactly the cells that do neither (xfail,
strict: a fix's landing forces its entry's removal); every cited test exists, is collected and
is not marked skip."""

from __future__ import annotations

import pytest

from matrix import cited
from matrix.axes import COMMANDS, FAULTS, HEALTHY, ROOT, families, rows
from matrix.build import matrix
from matrix.cell import FAIL, NA, PASS
from matrix.generate import render
from matrix.known_gaps import KNOWN_GAPS

pytestmark = pytest.mark.slow  # about 10 s of CPU: every cell is computed once per session
DOC = ROOT / "docs" / "fault-matrix.md"


def test_the_committed_matrix_is_the_generated_one():
    assert DOC.read_text() == render(matrix()), (
        "docs/fault-matrix.md is stale: python -m tests.matrix.generate > docs/fault-matrix.md")


def test_the_rows_are_every_family_found_and_the_commands():
    found = families()
    assert {"TxRxTest", "OsuPt2PtTest", "BisectionTest", "NicHealthTest"} <= set(found)
    assert rows() == [*found, *COMMANDS] and list(matrix()) == rows()
    assert all(list(cells) == list(FAULTS) for cells in matrix().values())


def test_the_known_gaps_are_fault_cells_with_a_reason():
    for (row, fault), why in KNOWN_GAPS.items():
        assert row in rows() and fault in FAULTS and fault != HEALTHY, (row, fault)
        assert why.strip()


def _params():
    for row in rows():
        for fault in FAULTS:
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[(row, fault)])] \
                if (row, fault) in KNOWN_GAPS else []
            yield pytest.param(row, fault, marks=marks, id=f"{row} x {fault}")


@pytest.mark.parametrize("row,fault", list(_params()))
def test_cell(row, fault):
    cell = matrix()[row][fault]
    for nodeid in cell.cites:
        assert cited.problems(nodeid) == [], f"{row} x {fault}: {cited.problems(nodeid)}"
    if fault == HEALTHY:
        assert cell.outcome == PASS, f"{row} fails its healthy input: {cell.text}"
        return
    assert cell.outcome in (FAIL, NA), f"{row} x {FAULTS[fault]}: {cell.outcome}: {cell.text}"
    for name in cell.names:
        assert name in cell.text, f"{row} x {FAULTS[fault]} does not name {name}: {cell.text}"


def test_a_cited_test_that_is_skipped_or_missing_is_no_evidence(tmp_path, monkeypatch):
    path = tmp_path / "tests" / "x" / "test_y.py"
    path.parent.mkdir(parents=True)
    path.write_text("import pytest\n\n@pytest.mark.skip(reason='later')\ndef test_a():\n"
                    "    pass\n\n@pytest.mark.parametrize('c', ['one'])\ndef test_b(c):\n"
                    "    pass\n\ndef helper():\n    pass\n")
    monkeypatch.setattr(cited, "ROOT", tmp_path)
    assert cited.problems("tests/x/test_y.py::test_a") == ["tests/x/test_y.py::test_a: marked "
                                                           "skip"]
    assert cited.problems("tests/x/test_y.py::test_b[one]") == []
    assert cited.problems("tests/x/test_y.py::test_b[two]") == [
        "tests/x/test_y.py::test_b[two]: no parameter 'two' in tests/x/test_y.py"]
    assert cited.problems("tests/x/test_y.py::test_c")[0].endswith("test_c is not defined in "
                                                                   "tests/x/test_y.py")
    assert "not collected" in cited.problems("tests/x/test_y.py::helper")[0]
    path.write_text("import pytest\npytestmark = pytest.mark.skip\n\ndef test_a():\n    pass\n")
    assert cited.problems("tests/x/test_y.py::test_a") == [
        "tests/x/test_y.py::test_a: the module is marked skip"]


def test_a_family_without_a_recorded_output_has_no_passing_cell():
    """A family added to reframe_tests/ is a row at once; until its output is registered in
    outputs.OUTPUTS its cells are UNTESTED, so its healthy cell fails test_cell."""
    from matrix import outputs

    cells = outputs.cells("SomeNewFamilyTest")
    assert {c.outcome for c in cells.values()} == {"UNTESTED"}
    assert "tests/matrix/outputs.py" in cells["healthy"].text

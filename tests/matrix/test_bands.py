"""The bandwidth cells: a ratio is not scaled by the fault; a family whose figures a slower link
does not move (bands.UNMOVED) is n/a only while the rows it names FAIL the fault, and only
while the references' runs send the small messages the reason says."""

from __future__ import annotations

from fabrictest.references.loading import load_all
from fabrictest.references.model import Reference
from matrix import bands
from matrix.axes import ROOT
from matrix.cell import FAIL, NA, PASS, Cell, failed, na

UNIT_BYTES, MOST_NODES = 32, 8  # the reason's "32-256 byte messages ... on 8 nodes at most"


def test_the_unmoved_cell_stands_while_its_rows_fail_the_fault():
    cell = bands.unmoved("AllToManyTest")["bw_0_5"]
    assert cell.outcome == NA and "fabric-health and acceptance FAIL it" in cell.text
    both = {"fabric-health": failed("rate: FAIL"), "acceptance": failed("NOT ACCEPTED")}
    assert bands.confirmed("AllToManyTest", "bw_0_5", cell, both) is cell


def test_a_row_that_stops_failing_turns_it_back_into_the_gap():
    cell = bands.unmoved("AllToManyTest")["bw_0_5"]
    for said in (Cell(PASS, "HEALTH ok"), na("not reached")):
        rows = {"fabric-health": said, "acceptance": failed("NOT ACCEPTED")}
        back = bands.confirmed("AllToManyTest", "bw_0_5", cell, rows)
        assert back.outcome == PASS and f"fabric-health, which was to fail it, says " \
            f"{said.outcome}" in back.text
    lost = bands.confirmed("AllToManyTest", "bw_0_5", cell, {"acceptance": failed("x")})
    assert lost.outcome == PASS and "no such row" in lost.text


def test_a_family_not_unmoved_is_left_as_computed():
    cell = Cell(FAIL, "ReFrame fails 6 of 6 figures")
    assert bands.confirmed("NcclTest", "bw_0_5", cell, {}) is cell


def test_the_references_runs_send_the_small_messages_the_reason_says():
    shapes = [prov["measured_with"]
              for ref_file in load_all(ROOT / "reference").values()
              if "AllToManyTest" in ref_file.classes
              for prov in ref_file.classes["AllToManyTest"].provenance.values()]
    assert len(shapes) >= 2
    for shape in shapes:
        assert shape["unit_size"] == UNIT_BYTES and shape["num_nodes"] <= MOST_NODES, shape


def test_a_ratio_is_left_as_it_was_and_a_family_of_ratios_only_is_a_gap(monkeypatch):
    growth = ("sys", "sys.end_to_end_growth", Reference(1.0, None, 0.5, "x"))
    rate = ("sys", "sys.bw", Reference(100.0, -0.2, None, "MB/s"))
    monkeypatch.setattr(bands, "figures", lambda family: [growth])
    only = bands.cells("SomeRatioTest")
    assert {c.outcome for c in only.values()} == {PASS}
    assert "every figure is a ratio" in only["bw_0_5"].text
    monkeypatch.setattr(bands, "figures", lambda family: [growth, rate])
    both = bands.cells("SomeRatioTest")["bw_0_5"]
    assert both.outcome == FAIL and both.names == ("sys.bw",)
    assert "fails 1 of 1 figures" in both.text and "1 ratios" in both.text

"""report/ keeps small modules with one job (issue 43: three were over 400 lines, split by
job): no module of src/fabrictest/report over 400 lines."""

from __future__ import annotations

from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "src" / "fabrictest" / "report"
LIMIT = 400


def test_no_report_module_is_over_the_limit():
    sizes = {p.relative_to(REPORT).as_posix(): len(p.read_text().splitlines())
             for p in REPORT.rglob("*.py")}
    assert len(sizes) > 40  # the tree was found
    assert {k: n for k, n in sizes.items() if n > LIMIT} == {}

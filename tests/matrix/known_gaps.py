"""The cells that PASS a fault, or have no evidence, today, each naming what fixes it (an
issue item and its owner, or "unassigned"): the matrix test marks exactly these
xfail(strict=True), so a fix's landing fails the test until its entry is removed here."""

from __future__ import annotations

KNOWN_GAPS: dict[tuple[str, str], str] = {}

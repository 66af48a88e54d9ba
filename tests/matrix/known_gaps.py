"""The cells that PASS a fault, or have no evidence, today, each naming what fixes it (an
issue item and its owner, or "unassigned"): the matrix test marks exactly these
xfail(strict=True), so a fix's landing fails the test until its entry is removed here."""

from __future__ import annotations

EDGE = "unassigned (reference/*.yaml): a band of exactly {band} admits a link at 0.5x " \
       "(accepted at its edge)"

KNOWN_GAPS: dict[tuple[str, str], str] = {
    ("AllToManyTest", "bw_0_5"): EDGE.format(band="+100 % on a time"),
}

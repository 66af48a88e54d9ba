"""Figures as the sweep prints them: three significant digits, at most six decimals."""

from __future__ import annotations

import math


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(v)))))
    return f"{v:.{min(digits, 6)}f}"

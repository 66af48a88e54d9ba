"""Counted nouns in the report's sentences: "1 sweep", "2 sweeps", "1 entry", "3 entries"."""

from __future__ import annotations


def counted(n: int, noun: str, many: str | None = None) -> str:
    """`n` and the noun, plural unless n is 1 (`many` where the plural is not noun + s)."""
    return f"{n} {noun if n == 1 else (many or noun + 's')}"

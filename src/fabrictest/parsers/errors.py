"""The one exception every parser raises on text that is not its tool's output."""

from __future__ import annotations


class ParseError(ValueError):
    """The text is not (or no longer) output of the tool the parser reads.

    Raised for empty text, another tool's output, or output truncated before its first
    result row (header only).
    """

"""Small helpers shared by the parsers (not part of the API)."""

from __future__ import annotations

from .errors import ParseError


def require_text(text: str | bytes | None, tool: str) -> str:
    """Decode bytes, reject None/blank input with a ParseError naming the tool."""
    if text is None:
        raise ParseError(f"no {tool} output (None)")
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not text.strip():
        raise ParseError(f"empty {tool} output")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def to_float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def to_int(token: str) -> int | None:
    try:
        return int(token, 0) if token.lower().startswith("0x") else int(token)
    except ValueError:
        return None

"""Small helpers shared by the parsers (not part of the API)."""

from __future__ import annotations

import math
import re

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


def ends_mid_line(text: str | bytes | None) -> bool:
    """True when the text's last line has no newline: the tool was cut off while writing it
    (every tool here ends its lines with a newline, so a complete output ends with one)."""
    if not text:
        return False
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return not text.endswith(("\n", "\r"))


def human_bytes(n: int) -> str:
    """``4`` -> ``4 B``, ``65536`` -> ``64 KiB``, ``4194304`` -> ``4 MiB`` (exact powers only
    get a binary prefix; anything else stays in bytes)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def doubling_sizes(first: int, last: int) -> list[int]:
    """The sizes a benchmark that doubles its message size prints from ``first`` to ``last``
    (0 is followed by 1, as OSU and IMB do)."""
    sizes, size = [], first
    while size <= last:
        sizes.append(size)
        size = size * 2 if size else 1
    return sizes


def sizes_missing(name: str, got: list[int], expected: list[int]) -> str | None:
    """None when ``got`` is exactly ``expected``; otherwise what is missing, e.g.
    ``osu_latency: 3 of 23 sizes; last 4 B, expected up to 4 MiB``."""
    if got == expected:
        return None
    if not expected:
        return f"{name}: no sizes requested (bad range)"
    if not got:
        return f"{name}: 0 of {len(expected)} sizes; expected up to {human_bytes(expected[-1])}"
    if got == expected[: len(got)]:
        return (
            f"{name}: {len(got)} of {len(expected)} sizes; last {human_bytes(got[-1])}, "
            f"expected up to {human_bytes(expected[-1])}"
        )
    absent = [s for s in expected if s not in got]
    extra = [s for s in got if s not in expected]
    parts = []
    if absent:
        parts.append("missing " + ", ".join(human_bytes(s) for s in absent[:5])
                     + (" ..." if len(absent) > 5 else ""))
    if extra:
        parts.append("unexpected " + ", ".join(human_bytes(s) for s in extra[:5]))
    if not parts:
        parts.append("sizes out of order or repeated")
    return (f"{name}: {len(got)} sizes, expected {len(expected)} from "
            f"{human_bytes(expected[0])} to {human_bytes(expected[-1])}: {'; '.join(parts)}")


def not_a_figure(name: str, value: float | None, zero_ok: bool = False) -> str | None:
    """None when ``value`` is a figure the tool can print: finite and positive (or zero when
    ``zero_ok``, e.g. a time printed to 4 decimals); otherwise what is wrong, e.g.
    ``osu_bw: bandwidth at 8 B is inf, not a finite positive number``. None: absent (the
    caller's own check names it)."""
    if value is None:
        return None
    if math.isfinite(value) and (value > 0 or (zero_ok and value == 0)):
        return None
    kind = "finite number >= 0" if zero_ok else "finite positive number"
    return f"{name} is {value:g}, not a {kind}"


#: lines a compiler or an MPI prints into a job's output, never a benchmark's figures: a
#: compiler's warning count (clang, icx, nvcc: ``3 warnings generated.``; NVHPC: ``0 inform,
#: 3 warnings, 0 severes, 0 fatal for main``; a bare ``3 warnings``), Open MPI's help
#: aggregation (``[node1:1234] 3 more processes have sent help message ...``, ``[node1:1234]
#: Set MCA parameter "orte_base_help_aggregate" to 0 ...``)
_TOOL_NOISE = re.compile(
    r"^(?:\d+ warnings?(?: generated| found)?\.?"
    r"|\d+ inform,\s+\d+ warnings,\s+\d+ severes,\s+\d+ fatal for \S+"
    r"|\[[\w.-]+:\d+\] (?:\d+ more process(?:es)? ha(?:s|ve) sent help message .*"
    r"|Set MCA parameter \"\w+\" to 0 to see all help / error messages))$")


def tool_noise(line: str) -> bool:
    """True for a compiler's or an MPI's own line (:data:`_TOOL_NOISE`) in a job's output."""
    return _TOOL_NOISE.match(line.strip()) is not None

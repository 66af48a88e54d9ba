"""A figure whose unit column was cut is refused, never read without its unit.

A figure without its unit is read as a bare number: its direction is then guessed from its
name, its sessions in other units no longer convert, and a history or a comparison runs on
without the fact that says what the number is. ReFrame writes every figure with its unit (a
run report's ``perfvalues`` entry is ``[value, reference, lower, upper, unit, result]``, a
perflog's format its ``_unit`` column), so an entry cut before the unit, or a perflog header
naming no unit column, is a cut or hand-made input: the readers refuse it in the line these
return (exit 2). A unit written as
empty or ``None`` is a unit the test declared (a ratio, say), and is read as such.

Pure: no I/O.
"""

from __future__ import annotations

#: the fields of a run report's figure up to its unit (ReFrame 3 and 4)
UNIT_FIELD = 4


def cut_unit(source: str, test: str, pvar: str, pv) -> str | None:
    """Why a run report's figure ``pv`` (a list) cut before its unit is refused, else None."""
    if isinstance(pv, list) and pv and len(pv) <= UNIT_FIELD:
        return (f"{source}: {test} {pvar}: its entry {pv!r} stops after {len(pv)} fields, "
                "before the unit (ReFrame writes value, reference, lower, upper, unit, "
                "result): refused, a figure is never read without its unit")
    return None


def unitless_header(source: str, fields: list[str] | None) -> str | None:
    """Why a perflog header whose figures' ``fields`` hold no ``unit`` is refused, else
    None."""
    if fields and "unit" not in fields:
        return (f"{source}: its header names the figures' fields ({', '.join(fields)}) "
                "without a unit column: refused, a figure is never read without its unit "
                "(the suite's perflog format writes %(check_perf_unit)s)")
    return None

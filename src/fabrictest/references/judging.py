"""Whether a run's figures may be judged against the entry found for them: a figure measured
with other shaping values (``measured_with``) gets no reference, and a reference's unit must be
its performance function's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .model import MEASURED_WITH, PROVENANCE_KEY, Reference, ReferenceFile


def _same(value: Any, recorded: Any) -> bool:
    choices = recorded if isinstance(recorded, list) else [recorded]
    return any(value == c or str(value) == str(c) for c in choices)


def _shown(recorded: Any) -> str:
    if isinstance(recorded, list):
        return " or ".join(_shown(v) for v in recorded)
    return "none (it did not apply)" if recorded is None else str(recorded)


def refusals(
    ref_file: ReferenceFile,
    test_class: str,
    system: str,
    keys: tuple[str, ...],
    figures: Iterable[str],
    shaping: Mapping[str, Any],
) -> dict[str, str]:
    """``{figure: why it has no reference}`` for the ``figures`` found at ``keys`` (see
    :func:`resolve`) when the run's ``shaping`` values (``None``: does not apply to this run)
    differ from what they were measured with, or the file does not say. The reason starts with
    ``no reference for NAME=VALUE``."""
    cref = ref_file.classes[test_class]
    indexed = set(cref.index)
    out: dict[str, str] = {}
    for var in figures:
        recorded = cref.measured_with(keys, var)
        for name, value in shaping.items():
            if value is None or name in indexed:
                continue
            if name not in recorded:
                out[var] = (
                    f"no reference for {name}={value}: {ref_file.path.name} does not say which "
                    f"{name} its {test_class} figures on {system} were measured with "
                    f"({PROVENANCE_KEY}.{test_class}.{system}.{MEASURED_WITH})"
                )
                break
            if not _same(value, recorded[name]):
                out[var] = (
                    f"no reference for {name}={value}: {ref_file.path.name} holds {test_class} "
                    f"figures on {system} measured with {name}={_shown(recorded[name])}"
                )
                break
    return out


def unit_mismatches(
    ref_file: ReferenceFile,
    test_class: str,
    keys: tuple[str, ...],
    references: Mapping[str, Reference],
    units: Mapping[str, str | None],
) -> list[str]:
    """One line per figure whose reference unit is not its performance function's unit."""
    out = []
    for var, ref in references.items():
        unit = units.get(var)
        if var in units and ref.unit is not None and ref.unit != (unit or ""):
            out.append(
                f"{ref_file.path.name}:{test_class}:{'.'.join(keys)}.{var}: reference unit "
                f"{ref.unit!r} is not the performance function's {unit!r}"
            )
    return out


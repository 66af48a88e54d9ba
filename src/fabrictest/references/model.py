"""What a loaded reference file is: its entries (``[ref, lower, upper, unit]``), per test class
with its ``$index`` and ``$provenance``, and the names of the file's reserved keys."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROVENANCE_KEY = "$provenance"
INDEX_KEY = "$index"
PROVENANCE_FIELDS = ("document", "table")
MEASURED_WITH = "measured_with"


class ReferenceError(ValueError):
    """A reference file that ReFrame would reject or that lacks provenance."""


@dataclass(frozen=True)
class Reference:
    value: float
    lower: float | None
    upper: float | None
    unit: str | None

    def bounds(self) -> tuple[float, float]:
        """The accepted interval [low, high] (infinite where unbounded)."""
        lo = -math.inf if self.lower is None else self.value * (1 + self.lower)
        hi = math.inf if self.upper is None else self.value * (1 + self.upper)
        if self.value < 0:
            lo, hi = hi, lo
        return lo, hi

    def accepts(self, measured: float) -> bool:
        lo, hi = self.bounds()
        return lo <= measured <= hi


@dataclass
class ClassReferences:
    name: str
    index: tuple[str, ...]
    #: (key path below the class, excluding the variable) -> {perf var: Reference}
    entries: dict[tuple[str, ...], dict[str, Reference]]
    provenance: dict[str, Any] = field(default_factory=dict)

    def provenance_for(self, keys: tuple[str, ...], var: str) -> dict[str, Any] | None:
        """The source of one value: its system's block, overridden by the value's own entry
        (``measured_with`` merged key by key)."""
        system = keys[0] if keys else ""
        block = self.provenance.get(system)
        if not isinstance(block, Mapping):
            return None
        out = {k: v for k, v in block.items() if k != "values"}
        per_value = (block.get("values") or {}).get(".".join([*keys[1:], var]))
        if isinstance(per_value, Mapping):
            merged = {**(out.get(MEASURED_WITH) or {}), **(per_value.get(MEASURED_WITH) or {})}
            out.update(per_value)
            if merged:
                out[MEASURED_WITH] = merged
        return out

    def measured_with(self, keys: tuple[str, ...], var: str) -> dict[str, Any]:
        """The shaping values one figure was measured with (empty: none recorded)."""
        return dict((self.provenance_for(keys, var) or {}).get(MEASURED_WITH) or {})


@dataclass
class ReferenceFile:
    path: Path
    system: str
    classes: dict[str, ClassReferences]
    raw: dict[str, Any]


"""What a loaded reference file is: its checked figures (:class:`Reference`: ``[ref, lower,
upper, unit]`` and where the figure came from), per test class with its ``$index`` and
``$provenance``, and the names of the file's reserved keys. A file is parsed once, by
:func:`~.loading.load`; everything else (the entry a test gets, what ReFrame is handed, the
failure message) reads these objects."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .direction import HIGHER, LOWER, better

PROVENANCE_KEY = "$provenance"
INDEX_KEY = "$index"
PROVENANCE_FIELDS = ("document", "table")
MEASURED_WITH = "measured_with"
#: `measured_with` keys that describe the bed, not a test's variable: a bed whose nodes share
#: one host's cores, and how many nodes they carried (the vcluster). A pair's rate there falls
#: as the cores carry more nodes, so the sweep refuses such a reference at another size
BED_KEYS = ("host_cores", "bed_nodes")
#: a `$provenance` field (block or per value) saying why a figure's bounds are wider than the
#: strict band; every run then says what the figure can still catch
LOOSE_KEY = "loose"
#: a `$provenance` field of a class's system block saying why the figures the file gives no
#: reference on that system are informational there (recorded, printed, never judged)
INFORMATIONAL_KEY = "informational"

#: the band a bound keeps to: a reference fails at a drop (rates) or rise (times) a user
#: cares about; a wider bound needs a `loose:` reason, and is never wider than the loose band
STRICT_LOWER, STRICT_UPPER = -0.5, 1.0
LOOSE_LOWER, LOOSE_UPPER = -0.99, 999.0
#: a reference is a normal positive number in this range (1e-300, a subnormal, 1e308 are
#: typing errors, not figures of a fabric: a nanosecond to a petabyte per second); a rate's or
#: a time's own bounds, by its unit, are ``parsers.physical.PLAUSIBLE``
MIN_REFERENCE, MAX_REFERENCE = 1e-9, 1e15


def percent(fraction: float) -> str:
    """``0.99999`` -> ``'99.999 %'`` (a bound as people read it, however large)."""
    p = fraction * 100
    return f"{p:.6g} %" if math.isfinite(p) else f"{fraction:g} x 100 %"


def reference_value_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a reference (or an expected figure), or None."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return f"reference {value!r} is not a number"
    if not math.isfinite(value):
        return f"reference {value!r} is not a finite number"
    if value <= 0:
        return (f"reference {value:g} is not positive (every figure here is a rate, time or "
                "ratio; bounds relative to 0 are 0)")
    if not MIN_REFERENCE <= value <= MAX_REFERENCE:
        return (f"reference {value:g} is outside {MIN_REFERENCE:g}..{MAX_REFERENCE:g} "
                "(no fabric figure is that small or large: a typing error?)")
    return None


def side_that_matters(unit: str | None, figure: str) -> str | None:
    """'lower' for a figure that must be bounded from below (a rate: better higher), 'upper'
    for one bounded from above (a time, a growth: better lower), None when neither says."""
    way = better(unit or "", figure)
    return {HIGHER: "lower", LOWER: "upper"}.get(way)


class ReferenceError(ValueError):
    """A reference file that ReFrame would reject or that lacks provenance."""


def merged_provenance(provenance: Mapping[str, Any], keys: tuple[str, ...],
                      var: str) -> dict[str, Any] | None:
    """The source of one figure (``keys``: its key path, system key first): its system's block
    of a class's ``$provenance``, overridden by the figure's own entry under ``values``
    (``measured_with`` merged key by key); None when the system has no block."""
    system = keys[0] if keys else ""
    block = provenance.get(system)
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


def _reason(block: Mapping[str, Any] | None, key: str) -> str | None:
    reason = (block or {}).get(key)
    return reason.strip() if isinstance(reason, str) and reason.strip() else None


def band(value: float, lower: float | None, upper: float | None
         ) -> tuple[float | None, float | None]:
    """A reference band's edges (low, high), absolute: ``value x (1 + lower)`` and ``value x
    (1 + upper)``, None where a threshold is unset (unbounded on that side). The one place of
    this arithmetic: reference files, the report's records and its ratios (value 1) use it.
    Of a negative reference the thresholds are mirrored (ReFrame's ``assert_reference``:
    ``value x (1 - lower)`` .. ``value x (1 - upper)``), so that lower still bounds below."""
    sign = -1 if value < 0 else 1
    lo = None if lower is None else value * (1 + sign * lower)
    hi = None if upper is None else value * (1 + sign * upper)
    return lo, hi


@dataclass(frozen=True)
class Reference:
    """One checked figure of a reference file: its value, its bounds (fractions of the value,
    None: unbounded) and unit, and (for a figure loaded from a file) its source, the merged
    ``$provenance`` of the figure, which takes no part in comparisons."""

    value: float
    lower: float | None
    upper: float | None
    unit: str | None
    #: the figure's ``$provenance`` (its system's block with its own entry merged over it);
    #: None where the file has no block for it or the figure is not from a file. A plain
    #: mapping (ReFrame deep-copies a test case, and with it its references, to retry it)
    provenance: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def measured_with(self) -> dict[str, Any]:
        """The shaping values the figure was measured with (empty: none recorded)."""
        return dict((self.provenance or {}).get(MEASURED_WITH) or {})

    @property
    def loose_reason(self) -> str | None:
        """The ``loose:`` reason given for the figure's wide bounds (None: none given)."""
        return _reason(self.provenance, LOOSE_KEY)

    def for_reframe(self) -> tuple:
        """The tuple ReFrame's ``reference`` takes: ``(value, lower, upper, unit)``, or
        ``(value, lower, upper)`` without a unit (ReFrame warns on a unit of None)."""
        bounds = (self.value, self.lower, self.upper)
        return bounds if self.unit is None else (*bounds, self.unit)

    def bounds(self) -> tuple[float, float]:
        """The accepted interval [low, high] (infinite where unbounded)."""
        lo, hi = band(self.value, self.lower, self.upper)
        return -math.inf if lo is None else lo, math.inf if hi is None else hi

    def accepts(self, measured: float) -> bool:
        lo, hi = self.bounds()
        return lo <= measured <= hi

    def outside_strict_band(self) -> list[str]:
        """The bounds wider than the strict band, as ``catches only ...`` phrases."""
        out = []
        if self.lower is not None and self.lower < STRICT_LOWER:
            out.append(f"catches only a drop over {percent(-self.lower)}")
        if self.upper is not None and self.upper > STRICT_UPPER:
            out.append(f"catches only a rise over {percent(self.upper)}")
        return out


@dataclass
class ClassReferences:
    name: str
    index: tuple[str, ...]
    #: (key path below the class, as strings, excluding the variable) -> {perf var: Reference}
    entries: dict[tuple[str, ...], dict[str, Reference]]
    provenance: dict[str, Any] = field(default_factory=dict)
    #: the same figures below the class as the file nests them, with the file's own keys (an
    #: integer parameter's key stays an integer): one level per ``$index`` name, then
    #: ``{perf var: Reference}`` (the very dicts of ``entries``)
    tree: dict[Any, Any] = field(default_factory=dict)

    def provenance_for(self, keys: tuple[str, ...], var: str) -> dict[str, Any] | None:
        """The source of one value: its system's block, overridden by the value's own entry
        (``measured_with`` merged key by key); the loaded figure's own when it is in the
        file."""
        ref = self.entries.get(tuple(keys), {}).get(var)
        if ref is not None:
            return None if ref.provenance is None else dict(ref.provenance)
        return merged_provenance(self.provenance, tuple(keys), var)

    def loose_reason(self, keys: tuple[str, ...], var: str) -> str | None:
        """The ``loose:`` reason given for one figure's wide bounds (None: none given)."""
        return _reason(self.provenance_for(keys, var), LOOSE_KEY)

    def informational_reason(self, system: str) -> str | None:
        """Why the class's figures without a reference on `system` are informational there
        (its system block's ``informational:``), or None: such a figure then fails the test
        for the lack of a reference."""
        block = self.provenance.get(system)
        return _reason(block, INFORMATIONAL_KEY) if isinstance(block, Mapping) else None

    def looseness(self) -> list[str]:
        """One line per figure whose bounds are wider than the strict band (each has a
        ``loose:`` reason, or the file would not have loaded): what it can still catch."""
        out = []
        for keys, values in self.entries.items():
            for var, ref in values.items():
                wide = ref.outside_strict_band()
                if wide:
                    out.append(f"{self.name}:{'.'.join([*keys, var])} {' and '.join(wide)} "
                               f"(loose: {ref.loose_reason})")
        return out

    def measured_with(self, keys: tuple[str, ...], var: str) -> dict[str, Any]:
        """The shaping values one figure was measured with (empty: none recorded)."""
        return dict((self.provenance_for(keys, var) or {}).get(MEASURED_WITH) or {})


@dataclass
class ReferenceFile:
    """A reference file, parsed and checked once (:func:`~.loading.load`): no raw YAML is
    kept, so nothing reads the file's text a second time."""

    path: Path
    system: str
    classes: dict[str, ClassReferences]


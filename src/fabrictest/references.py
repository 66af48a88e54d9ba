"""Loading and checking ``reference/<system>.yaml`` (the suite's performance references).

A reference file is ReFrame's external-reference YAML (``reference = {'$ref': FILE}``; ReFrame
reads it itself) plus one top-level block ReFrame ignores, ``$provenance`` (ReFrame only looks up
the test's class name; ``$provenance`` can never be one), saying where every number came from:

.. code-block:: yaml

    $provenance:
      TxRxTest:                       # per test class ...
        seren:                        # ... and system: the block's source
          document: seeds/000_bc14321ba763bb8c.txt
          table: "One transmitter and one receiver on the same node, output"
          note: "97.6 Gbps per stream on 100 GbE"
          values:                     # optional per-value sources (dotted key path)
            many-to-one.rdma.host.stream_gbps: {document: ..., table: ...}
    TxRxTest:
      $index: ['$system', 'scenario', 'method', 'buffer']
      seren:
        same-node:
          rdma:
            host:
              stream_gbps: [97.0, -0.1, null, Gbps]   # [ref, lower, upper, unit]

Keys below ``$system`` are the values of the test parameters/variables named in ``$index``
(ReFrame treats a key that does not match exactly as an anchored regex, e.g. ``'.*'``, but only
for string values: integer parameters such as ``iterations`` need their exact keys).
Thresholds are fractions of the reference: a value below ``ref * (1 + lower)`` or above
``ref * (1 + upper)`` fails the test; ``null`` means unbounded.

Functions: :func:`load` (parse and structurally validate one file), :func:`load_all`,
:func:`lookup` (the reference ReFrame will use for a test's parameters), :func:`check_against`
(cross-check a file with the tests' parameters, variables and performance units),
:func:`for_reframe` (the file without ``$provenance``: what ReFrame's reader sees).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PROVENANCE_KEY = "$provenance"
INDEX_KEY = "$index"
PROVENANCE_FIELDS = ("document", "table")


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
        """The source of one value: its per-value entry, else its system's block."""
        system = keys[0] if keys else ""
        block = self.provenance.get(system)
        if not isinstance(block, Mapping):
            return None
        per_value = block.get("values") or {}
        dotted = ".".join([*keys[1:], var])
        if dotted in per_value:
            return dict(per_value[dotted])
        return {k: v for k, v in block.items() if k != "values"}


@dataclass
class ReferenceFile:
    path: Path
    system: str
    classes: dict[str, ClassReferences]
    raw: dict[str, Any]


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _parse_value(where: str, val: Any) -> Reference:
    if not isinstance(val, list) or len(val) not in (3, 4):
        raise ReferenceError(f"{where}: expected [ref, lower, upper, unit], got {val!r}")
    ref, lower, upper = val[:3]
    unit = val[3] if len(val) == 4 else None
    if not _num(ref):
        raise ReferenceError(f"{where}: reference {ref!r} is not a number")
    for name, thr in (("lower", lower), ("upper", upper)):
        if thr is not None and not _num(thr):
            raise ReferenceError(f"{where}: {name} threshold {thr!r} is not a number or null")
    if lower is not None and lower > 0:
        raise ReferenceError(f"{where}: lower threshold {lower} must be <= 0")
    if upper is not None and upper < 0:
        raise ReferenceError(f"{where}: upper threshold {upper} must be >= 0")
    if lower is not None and lower < -1 and ref >= 0:
        raise ReferenceError(f"{where}: lower threshold {lower} < -1 accepts negative values")
    if unit is not None and not isinstance(unit, str):
        raise ReferenceError(f"{where}: unit {unit!r} is not a string")
    return Reference(float(ref), lower, upper, unit)


def _walk(where: str, node: Any, depth: int, keys: tuple[str, ...], out: dict) -> None:
    if not isinstance(node, Mapping):
        raise ReferenceError(f"{where}: expected a mapping at {'.'.join(keys) or 'top'}")
    if depth == 0:
        values = {}
        for var, val in node.items():
            if not isinstance(var, str) or var.startswith("$"):
                raise ReferenceError(f"{where}: bad performance variable name {var!r}")
            values[var] = _parse_value(f"{where}:{'.'.join([*keys, var])}", val)
        out[keys] = values
        return
    for key, child in node.items():
        _walk(where, child, depth - 1, (*keys, str(key)), out)


def load(path: str | Path, require_provenance: bool = True) -> ReferenceFile:
    """Parse and validate one reference file; raises :class:`ReferenceError`."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ReferenceError(f"{path}: not YAML: {err}") from err
    if not isinstance(raw, dict):
        raise ReferenceError(f"{path}: top level must be a mapping of test class names")
    provenance = raw.get(PROVENANCE_KEY, {}) or {}
    if not isinstance(provenance, dict):
        raise ReferenceError(f"{path}: {PROVENANCE_KEY} must be a mapping")
    system = path.stem
    classes: dict[str, ClassReferences] = {}
    for name, body in raw.items():
        if name == PROVENANCE_KEY:
            continue
        where = f"{path.name}:{name}"
        if not re.fullmatch(r"[A-Za-z_]\w*", str(name)):
            raise ReferenceError(f"{where}: not a test class name")
        if not isinstance(body, dict) or INDEX_KEY not in body:
            raise ReferenceError(f"{where}: needs an {INDEX_KEY} (first level: '$system')")
        index = tuple(body[INDEX_KEY])
        if not index or index[0] != "$system":
            raise ReferenceError(f"{where}: {INDEX_KEY} must start with '$system', got {index}")
        entries: dict[tuple[str, ...], dict[str, Reference]] = {}
        data = {k: v for k, v in body.items() if k != INDEX_KEY}
        for sys_key in data:
            if not re.fullmatch(sys_key, system):
                raise ReferenceError(
                    f"{where}: system key {sys_key!r} does not match the file's system {system!r}"
                )
        _walk(where, data, len(index), (), entries)
        prov = provenance.get(name, {}) or {}
        cref = ClassReferences(name, index, entries, prov)
        if require_provenance:
            for keys, values in entries.items():
                for var in values:
                    src = cref.provenance_for(keys, var)
                    missing = [f for f in PROVENANCE_FIELDS if not (src or {}).get(f)]
                    if missing:
                        raise ReferenceError(
                            f"{where}: {'.'.join([*keys, var])} has no provenance "
                            f"({', '.join(missing)} missing under {PROVENANCE_KEY})"
                        )
        classes[name] = cref
    for name in provenance:
        if name not in classes:
            raise ReferenceError(f"{path.name}: {PROVENANCE_KEY} names unknown class {name!r}")
    return ReferenceFile(path=path, system=system, classes=classes, raw=raw)


def load_all(directory: str | Path) -> dict[str, ReferenceFile]:
    """Every ``<system>.yaml`` in ``directory``, by system name."""
    return {p.stem: load(p) for p in sorted(Path(directory).glob("*.yaml"))}


def for_reframe(ref_file: ReferenceFile) -> dict[str, Any]:
    """The file's content without ``$provenance``: exactly what ReFrame's reader consumes."""
    return {k: v for k, v in ref_file.raw.items() if k != PROVENANCE_KEY}


def _match(level: Mapping[Any, Any], key: Any) -> Any:
    """ReFrame's lookup: an exact key, else (string values only) the first key that matches
    as an anchored regex."""
    if key in level:
        return level[key]
    if isinstance(key, str):
        for k, v in level.items():
            if isinstance(k, str) and re.fullmatch(k, key):
                return v
    raise KeyError(key)


def lookup(
    ref_file: ReferenceFile, test_class: str, system: str, params: Mapping[str, Any]
) -> dict[str, Reference]:
    """The references ReFrame uses for ``test_class`` on ``system`` with ``params`` (values of
    the ``$index`` names); raises KeyError like ReFrame's lookup when there are none."""
    cref = ref_file.classes[test_class]
    node: Any = {k: v for k, v in ref_file.raw[test_class].items() if k != INDEX_KEY}
    path = []
    for name in cref.index:
        key = system if name == "$system" else params[name]
        node = _match(node, key)
        path.append(str(key))
    return {var: _parse_value(var, val) for var, val in node.items()}


@dataclass
class TestSpec:
    """What a test class offers a reference file: its index-able names and their values
    (``None``: any value), and its performance variables with units (regexes allowed)."""

    name: str
    params: dict[str, tuple[Any, ...] | None]
    perf_units: dict[str, str]


def check_against(ref_file: ReferenceFile, specs: Mapping[str, TestSpec]) -> list[str]:
    """Problems between a reference file and the tests: unknown classes, index names that are
    not parameters/variables, keys that are not parameter values, unknown performance
    variables, units that differ from the tests'. Empty when consistent."""
    problems = []
    for name, cref in ref_file.classes.items():
        spec = specs.get(name)
        if spec is None:
            problems.append(f"{ref_file.path.name}: {name} is not a test class")
            continue
        for idx in cref.index[1:]:
            if idx.startswith("$"):
                continue
            if idx not in spec.params:
                problems.append(f"{ref_file.path.name}: {name} indexes unknown name {idx!r}")
        for keys, values in cref.entries.items():
            for level, key in zip(cref.index[1:], keys[1:], strict=False):
                allowed = spec.params.get(level)
                if allowed is None:
                    continue
                if not any(str(a) == key or re.fullmatch(key, str(a)) for a in allowed):
                    problems.append(
                        f"{ref_file.path.name}: {name} {level}={key!r} is none of {allowed}"
                    )
            for var, ref in values.items():
                unit = None
                for pattern, u in spec.perf_units.items():
                    if re.fullmatch(pattern, var):
                        unit = u
                        break
                if unit is None:
                    problems.append(
                        f"{ref_file.path.name}: {name} has no performance variable {var!r}"
                    )
                elif ref.unit is not None and ref.unit != unit:
                    problems.append(
                        f"{ref_file.path.name}: {name}.{'.'.join(keys)}.{var} unit {ref.unit!r}"
                        f" != the test's {unit!r}"
                    )
    return problems


def coverage(
    ref_file: ReferenceFile, test_class: str, system: str, variants: Iterable[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The parameter combinations in ``variants`` that get no reference on ``system``."""
    missing = []
    for params in variants:
        try:
            if test_class not in ref_file.classes:
                raise KeyError(test_class)
            lookup(ref_file, test_class, system, params)
        except KeyError:
            missing.append(params)
    return missing

"""Loading and checking ``reference/<system>.yaml`` (the suite's performance references).

A reference file is ReFrame's external-reference YAML (``reference = {'$ref': FILE}``; ReFrame
reads it itself) plus one top-level block ReFrame ignores, ``$provenance`` (ReFrame only looks up
the test's class name; ``$provenance`` can never be one), saying where every number came from
and what it was measured with:

.. code-block:: yaml

    $provenance:
      TxRxTest:                       # per test class ...
        seren:                        # ... and system: the block's source
          document: seeds/000_bc14321ba763bb8c.txt
          table: "One transmitter and one receiver on the same node, output"
          note: "97.6 Gbps per stream on 100 GbE"
          measured_with:              # the shaping variables' values behind these figures
            msg_size: 65536
            num_blks: 10
            num_cmsgs: 100
            nmsg: [100000, 1000000]   # a list: the figure holds for each of these values
          values:                     # optional per-value entries (dotted key path below the
            many-to-one.rdma.host.stream_gbps:   # system, as written in the file, + figure);
              note: "..."             # they inherit the block's fields and override them
              measured_with: {nmsg: 1000000}     # merged over the block's measured_with
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

**A reference must be able to fail.** :func:`load` refuses, with one line naming the file, the
key path and the figure: both bounds null; a zero reference (relative bounds of zero are zero);
a lower bound <= -1 (it accepts every non-negative value) or > 0; an upper bound < 0; a
non-finite reference or bound; a negative reference. The ReFrame base
(``reframe_tests/fabric_base.py``) loads the file through :func:`load` too, so a bad file fails
the test, and checks at run time that each reference's unit is its performance function's.

**What a figure was measured with.** A variable that changes what is measured (message size,
message count, sizes, iterations, ranks per node, nodes, ...) is a *shaping variable*: each test
family lists its own in ``shaped_by`` and reports their effective values for a run (``nmsg=0``
resolved to the count the size profile chose). Each one is either a level of ``$index`` or
listed in ``$provenance.<Class>.<system>.measured_with`` (with per-value overrides under
``values``): a value, a list of values the figure holds for, or ``null`` (the variable did not
apply, e.g. ``transport`` for ``--method mpi``; a run where it applies gets no reference). A
run whose value (``None`` in ``shaping()``: does not apply to this run, not checked) is not the
one (or one of the list) the reference was measured with gets **no reference** for that
figure: ``no reference for msg_size=1024`` (failing the test unless ``-S
missing_reference=warn``), instead of being judged against another size's value. A shaping
variable neither indexed nor listed also means no reference. :func:`check_against`
(run by ``tests/reframe/test_references.py``) reports files that do not list every shaping
variable of a class. A calibration command writing a file must write ``measured_with`` with the
values of its run.

Functions: :func:`load` (parse and validate one file), :func:`load_all`, :func:`lookup` /
:func:`resolve` (the reference ReFrame will use for a test's parameters, and its key path),
:func:`refusals` (which figures of a run have no usable reference), :func:`unit_mismatches`,
:func:`check_against` (cross-check a file with the tests' parameters, variables, units and
shaping variables), :func:`for_reframe` (the file without ``$provenance``: what ReFrame's reader
sees).
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


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _parse_value(where: str, val: Any) -> Reference:
    """One ``[ref, lower, upper, unit]`` that can fail; ReferenceError (one line: ``where``
    names file, key path and figure) otherwise."""
    if not isinstance(val, list) or len(val) not in (3, 4):
        raise ReferenceError(f"{where}: expected [ref, lower, upper, unit], got {val!r}")
    ref, lower, upper = val[:3]
    unit = val[3] if len(val) == 4 else None
    if not _num(ref) or not math.isfinite(ref):
        raise ReferenceError(f"{where}: reference {ref!r} is not a finite number")
    for name, thr in (("lower", lower), ("upper", upper)):
        if thr is not None and (not _num(thr) or not math.isfinite(thr)):
            raise ReferenceError(
                f"{where}: {name} threshold {thr!r} is not a finite number or null"
            )
    shown = "[" + ", ".join("null" if v is None else str(v) for v in val) + "]"
    never = f"{where}: {shown} can never fail:"
    if lower is None and upper is None:
        raise ReferenceError(f"{never} both bounds are null")
    if ref == 0:
        raise ReferenceError(f"{never} bounds relative to a reference of 0 are 0 (use a "
                             "positive reference: measure one)")
    if ref < 0:
        raise ReferenceError(f"{where}: reference {ref} is negative (every figure here is a "
                             "rate, time or ratio)")
    if lower is not None and lower > 0:
        raise ReferenceError(f"{where}: lower threshold {lower} must be <= 0")
    if lower is not None and lower <= -1:
        raise ReferenceError(
            f"{never} a lower threshold of {lower} accepts every value >= {ref * (1 + lower):g}"
            " (use null for no lower bound)"
        )
    if upper is not None and upper < 0:
        raise ReferenceError(f"{where}: upper threshold {upper} must be >= 0")
    if unit is not None and not isinstance(unit, str):
        raise ReferenceError(f"{where}: unit {unit!r} is not a string")
    return Reference(float(ref), lower, upper, unit)


def _check_measured_with(where: str, block: Any) -> None:
    if block is None:
        return
    if not isinstance(block, Mapping):
        raise ReferenceError(f"{where}: {MEASURED_WITH} must map variable names to values")
    for name, value in block.items():
        values = value if isinstance(value, list) else [value]
        if not values or not all(v is None or isinstance(v, (str, int, float)) for v in values):
            raise ReferenceError(
                f"{where}: {MEASURED_WITH}.{name} must be a value (null: does not apply) or a list "
                f"of values, "
                f"got {value!r}"
            )


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


def load(
    path: str | Path, require_provenance: bool = True, system: str | None = None
) -> ReferenceFile:
    """Parse and validate one reference file (for ``system``: by default the file's stem);
    raises :class:`ReferenceError` with one line naming the file, key path and figure."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as err:
        raise ReferenceError(f"{path}: cannot read: {err.strerror or err}") from err
    except yaml.YAMLError as err:
        first = " ".join(str(err).split())
        raise ReferenceError(f"{path}: not YAML: {first}") from err
    if not isinstance(raw, dict):
        raise ReferenceError(f"{path}: top level must be a mapping of test class names")
    provenance = raw.get(PROVENANCE_KEY, {}) or {}
    if not isinstance(provenance, dict):
        raise ReferenceError(f"{path}: {PROVENANCE_KEY} must be a mapping")
    system = system or path.stem
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
        if not isinstance(prov, Mapping):
            raise ReferenceError(f"{path.name}: {PROVENANCE_KEY}.{name} must be a mapping")
        for sys_name, block in prov.items():
            if isinstance(block, Mapping):
                here = f"{path.name}: {PROVENANCE_KEY}.{name}.{sys_name}"
                _check_measured_with(here, block.get(MEASURED_WITH))
                for dotted, entry in (block.get("values") or {}).items():
                    if isinstance(entry, Mapping):
                        _check_measured_with(f"{here}.values.{dotted}", entry.get(MEASURED_WITH))
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


def _match_key(level: Mapping[Any, Any], key: Any) -> Any:
    """The key of ``level`` that ReFrame's lookup picks for ``key`` (see :func:`_match`)."""
    if key in level:
        return key
    if isinstance(key, str):
        for k in level:
            if isinstance(k, str) and re.fullmatch(k, key):
                return k
    raise KeyError(key)


def resolve(
    ref_file: ReferenceFile, test_class: str, system: str, params: Mapping[str, Any]
) -> tuple[tuple[str, ...], dict[str, Reference]]:
    """The key path (as written in the file, system key first) and the references ReFrame uses
    for ``test_class`` on ``system`` with ``params`` (values of the ``$index`` names); raises
    KeyError like ReFrame's lookup when there are none."""
    cref = ref_file.classes[test_class]
    node: Any = {k: v for k, v in ref_file.raw[test_class].items() if k != INDEX_KEY}
    path: list[str] = []
    for name in cref.index:
        key = _match_key(node, system if name == "$system" else params[name])
        node = node[key]
        path.append(str(key))
    where = f"{ref_file.path.name}:{test_class}:{'.'.join(path)}"
    return tuple(path), {var: _parse_value(f"{where}.{var}", val) for var, val in node.items()}


def lookup(
    ref_file: ReferenceFile, test_class: str, system: str, params: Mapping[str, Any]
) -> dict[str, Reference]:
    """The references ReFrame uses for ``test_class`` on ``system`` with ``params`` (values of
    the ``$index`` names); raises KeyError like ReFrame's lookup when there are none."""
    return resolve(ref_file, test_class, system, params)[1]


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


@dataclass
class TestSpec:
    """What a test class offers a reference file: its index-able names and their values
    (``None``: any value), and its performance variables with units (regexes allowed)."""

    name: str
    params: dict[str, tuple[Any, ...] | None]
    perf_units: dict[str, str]
    shaped_by: tuple[str, ...] = ()


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
                recorded = cref.measured_with(keys, var)
                unsaid = [s for s in spec.shaped_by if s not in cref.index and s not in recorded]
                if unsaid:
                    problems.append(
                        f"{ref_file.path.name}: {name}.{'.'.join(keys)}.{var} does not say which "
                        f"{', '.join(unsaid)} it was measured with "
                        f"({PROVENANCE_KEY}.{name}.{keys[0]}.{MEASURED_WITH})"
                    )
                unknown = sorted(set(recorded) - set(spec.shaped_by))
                if unknown:
                    problems.append(
                        f"{ref_file.path.name}: {name}.{'.'.join(keys)}.{var} {MEASURED_WITH} "
                        f"names {unknown}, not shaping variables of {name} {spec.shaped_by}"
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

"""Reading and validating one reference file, once: every entry must be able to fail, every
``measured_with`` must be values, every figure must have provenance (see the package's
docstring for the format). What :func:`load` returns holds each figure as a checked
:class:`~.model.Reference` with its provenance, nested with the file's own keys
(:attr:`~.model.ClassReferences.tree`); :func:`for_reframe` builds ReFrame's ``reference``
from those objects."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from ..parsers import physical
from .model import (
    INDEX_KEY,
    INFORMATIONAL_KEY,
    LOOSE_KEY,
    LOOSE_LOWER,
    LOOSE_UPPER,
    MEASURED_WITH,
    PROVENANCE_FIELDS,
    PROVENANCE_KEY,
    STRICT_LOWER,
    STRICT_UPPER,
    ClassReferences,
    Reference,
    ReferenceError,
    ReferenceFile,
    merged_provenance,
    percent,
    reference_value_problem,
    side_that_matters,
)


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class _UniqueKeyLoader(yaml.SafeLoader):
    """yaml's safe loader, refusing a mapping that writes one key twice (the last would
    silently win: a reference edited in one place and read from another)."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            twice = key in seen
        except TypeError:  # an unhashable key: the stock constructor says so
            break
        if twice:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is written twice in one mapping", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def read_yaml(path: Path) -> Any:
    """A YAML file's content; ReferenceError (one line naming the file) when it cannot be
    read, is not text, is not YAML or writes a key twice."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise ReferenceError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ReferenceError(
            f"{path}: not a text file (byte {err.start} is not UTF-8): not a reference file"
        ) from None
    stream = io.StringIO(text)
    stream.name = path.name  # yaml's messages name the file, not "<unicode string>"
    try:
        return yaml.load(stream, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as err:
        first = " ".join(str(err).split())
        raise ReferenceError(f"{path}: not YAML: {first}") from None


def parse_entry(where: str, val: Any, figure: str = "") -> Reference:
    """One ``[ref, lower, upper, unit]`` that can fail, bounded on the side that matters for
    ``figure`` in its unit; ReferenceError (one line: ``where`` names file, key path and
    figure) otherwise. The band of the bounds is checked by :func:`load` (it needs the
    provenance's ``loose:`` reason)."""
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
    problem = reference_value_problem(ref)
    if problem:
        raise ReferenceError(f"{where}: {problem}")
    if (why := physical.implausible(ref, unit)) is not None:  # per unit: physical.PLAUSIBLE
        raise ReferenceError(f"{where}: reference {why}: impossible")
    side = side_that_matters(unit, figure) if figure else None
    if side == "lower" and lower is None:
        raise ReferenceError(f"{never} a rate ({figure} in {unit}) needs a lower bound: only a "
                             "drop can fail it")
    if side == "upper" and upper is None:
        kind = "a time" if unit and unit.strip() in ("s", "ms", "us", "ns") else "better lower"
        raise ReferenceError(f"{never} {figure} in {unit} ({kind}) needs an upper bound: only a "
                             "rise can fail it")
    return Reference(float(ref), lower, upper, unit)


def band_problem(where: str, ref: Reference, loose_reason: str | None) -> str | None:
    """Why a bound is too wide to fail at a drop a user cares about, or None: without a
    ``loose:`` reason the bounds keep to [STRICT_LOWER, STRICT_UPPER]; with one, to the loose
    band."""
    lo_limit, up_limit = ((LOOSE_LOWER, LOOSE_UPPER) if loose_reason
                          else (STRICT_LOWER, STRICT_UPPER))
    hint = ("even with a loose: reason" if loose_reason else
            f"give a '{LOOSE_KEY}: <why>' reason in its {PROVENANCE_KEY} to go past "
            f"{STRICT_LOWER:+g}/{STRICT_UPPER:+g}")
    if ref.lower is not None and ref.lower < lo_limit:
        return (f"{where}: lower bound {ref.lower:g} catches only a drop over "
                f"{percent(-ref.lower)} (at most {percent(-lo_limit)}: {hint})")
    if ref.upper is not None and ref.upper > up_limit:
        return (f"{where}: upper bound {ref.upper:g} catches only a rise over "
                f"{percent(ref.upper)} (at most {percent(up_limit)}: {hint})")
    return None


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


def _walk(where: str, node: Any, depth: int, keys: tuple[str, ...], out: dict) -> dict:
    """The checked tree below ``node`` (``depth`` levels of the file's keys, then
    ``{figure: Reference}``); each leaf dict also goes into ``out`` under its key path."""
    if not isinstance(node, Mapping):
        raise ReferenceError(f"{where}: expected a mapping at {'.'.join(keys) or 'top'}")
    if depth == 0:
        values = {}
        for var, val in node.items():
            if not isinstance(var, str) or var.startswith("$"):
                raise ReferenceError(f"{where}: bad performance variable name {var!r}")
            values[var] = parse_entry(f"{where}:{'.'.join([*keys, var])}", val, var)
        out[keys] = values
        return values
    return {key: _walk(where, child, depth - 1, (*keys, str(key)), out)
            for key, child in node.items()}


def load(
    path: str | Path, require_provenance: bool = True, system: str | None = None
) -> ReferenceFile:
    """Parse and validate one reference file (for ``system``: by default the file's stem);
    raises :class:`ReferenceError` with one line naming the file, key path and figure."""
    path = Path(path)
    raw = read_yaml(path)
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
        tree = _walk(where, data, len(index), (), entries)
        prov = provenance.get(name, {}) or {}
        if not isinstance(prov, Mapping):
            raise ReferenceError(f"{path.name}: {PROVENANCE_KEY}.{name} must be a mapping")
        for sys_name, block in prov.items():
            if isinstance(block, Mapping):
                here = f"{path.name}: {PROVENANCE_KEY}.{name}.{sys_name}"
                _check_measured_with(here, block.get(MEASURED_WITH))
                why = block.get(INFORMATIONAL_KEY)
                if why is not None and not (isinstance(why, str) and why.strip()):
                    raise ReferenceError(f"{here}: {INFORMATIONAL_KEY} must say why the "
                                         f"figures without a reference are not judged, got "
                                         f"{why!r}")
                for dotted, entry in (block.get("values") or {}).items():
                    if isinstance(entry, Mapping):
                        _check_measured_with(f"{here}.values.{dotted}", entry.get(MEASURED_WITH))
        for keys, values in entries.items():  # each figure with its source (the same dicts
            for var, ref in values.items():    # as the tree's leaves)
                values[var] = replace(ref, provenance=merged_provenance(prov, keys, var))
        for keys, values in entries.items():
            for var, ref in values.items():
                problem = band_problem(f"{where}:{'.'.join([*keys, var])}", ref,
                                       ref.loose_reason)
                if problem:
                    raise ReferenceError(problem)
        if require_provenance:
            for keys, values in entries.items():
                for var, ref in values.items():
                    missing = [f for f in PROVENANCE_FIELDS if not (ref.provenance or {}).get(f)]
                    if missing:
                        raise ReferenceError(
                            f"{where}: {'.'.join([*keys, var])} has no provenance "
                            f"({', '.join(missing)} missing under {PROVENANCE_KEY})"
                        )
        classes[name] = ClassReferences(name, index, entries, prov, tree)
    for name in provenance:
        if name not in classes:
            raise ReferenceError(f"{path.name}: {PROVENANCE_KEY} names unknown class {name!r}")
    return ReferenceFile(path=path, system=system, classes=classes)


def load_all(directory: str | Path) -> dict[str, ReferenceFile]:
    """Every ``<system>.yaml`` in ``directory``, by system name."""
    return {p.stem: load(p) for p in sorted(Path(directory).glob("*.yaml"))}


def for_reframe(
    ref_file: ReferenceFile, test_class: str, keys: tuple[str, ...], judged: Mapping[str, str]
) -> dict[str, Any]:
    """The ``reference`` handed to ReFrame for one test: the entry at ``keys`` (the key path
    :func:`~.entry_lookup.resolve` found, system key first) under the system key alone, with
    ``$index`` its first name: ReFrame does not look the entry up again by the test's
    attributes, which can differ from the values it was found by (an indexed shaping variable
    takes its effective value: BisectionTest's ``num_nodes`` None ran on 16 nodes, and
    ReFrame's own lookup of ``None`` found nothing and passed the figures unjudged). It holds
    each figure of ``judged`` (``{figure: the file's figure whose bounds it takes}``) as the
    tuple ReFrame's ``reference`` takes (:meth:`~.model.Reference.for_reframe`). A figure
    left out of ``judged`` is not judged.

    Built from the checked objects of the file already loaded: ReFrame reads no file (no
    ``$ref``), and ``$provenance`` never reaches it."""
    cref = ref_file.classes[test_class]
    node, path = cref.tree, []
    for key in keys:
        real = next(k for k in node if str(k) == key)
        path.append(real)
        node = node[real]
    entry: dict[Any, Any] = {figure: node[source].for_reframe()
                             for figure, source in judged.items()}
    return {INDEX_KEY: list(cref.index[:1]), path[0]: entry}

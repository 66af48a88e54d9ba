"""A reference file against the test classes it is for: classes, index names, keys, figures,
units and shaping variables that the tests do not have (run by
``tests/reframe/test_references.py``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .model import BED_KEYS, MEASURED_WITH, PROVENANCE_KEY, ReferenceFile


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
                recorded = ref.measured_with
                unsaid = [s for s in spec.shaped_by if s not in cref.index and s not in recorded]
                if unsaid:
                    problems.append(
                        f"{ref_file.path.name}: {name}.{'.'.join(keys)}.{var} does not say which "
                        f"{', '.join(unsaid)} it was measured with "
                        f"({PROVENANCE_KEY}.{name}.{keys[0]}.{MEASURED_WITH})"
                    )
                unknown = sorted(set(recorded) - set(spec.shaped_by) - set(BED_KEYS))
                if unknown:
                    problems.append(
                        f"{ref_file.path.name}: {name}.{'.'.join(keys)}.{var} {MEASURED_WITH} "
                        f"names {unknown}, not shaping variables of {name} {spec.shaped_by}"
                    )
    return problems


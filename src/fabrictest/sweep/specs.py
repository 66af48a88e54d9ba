"""The simulation's fault specs: `--sim-slow NODE=FACTOR` and `--sim-down NODE`.

NODE may be a hostlist expression (`node[01-04]`). A spec that does not parse, names a node
outside the sweep, or gives a factor outside (0, 1] is refused with one line (SpecError).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from . import nodes as nodeset


class SpecError(ValueError):
    """A malformed fault spec; `str(err)` is the one line printed."""


def _names(expr: str, option: str, spec: str, known: set[str]) -> list[str]:
    if not expr.strip():
        raise SpecError(f"{option} {spec!r}: no node named")
    try:
        names = nodeset.expand(expr)
    except nodeset.NodeSetError as err:
        raise SpecError(f"{option} {spec!r}: {err}") from None
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SpecError(f"{option} {spec!r}: {unknown[0]} is not one of the sweep's nodes")
    return names


def _factor(text: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SpecError(f"--sim-slow {spec!r}: FACTOR {text!r} is not a number") from None
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise SpecError(f"--sim-slow {spec!r}: FACTOR must be in (0, 1], got {text}")
    return value


def parse_slow(specs: Iterable[str], nodes: Sequence[str]) -> dict[str, float]:
    """`NODE=FACTOR` specs -> {node: capacity factor}."""
    known = set(nodes)
    out: dict[str, float] = {}
    for spec in specs:
        expr, sep, factor = spec.partition("=")
        if not sep:
            raise SpecError(f"--sim-slow {spec!r}: expected NODE=FACTOR, e.g. node03=0.25")
        value = _factor(factor.strip(), spec)
        for name in _names(expr.strip(), "--sim-slow", spec, known):
            if name in out:
                raise SpecError(f"--sim-slow {spec!r}: {name} is given twice")
            out[name] = value
    return out


def parse_down(specs: Iterable[str], nodes: Sequence[str]) -> list[str]:
    """`NODE` specs -> the nodes whose link is down."""
    known = set(nodes)
    out: list[str] = []
    for spec in specs:
        if "=" in spec:
            raise SpecError(f"--sim-down {spec!r}: expected NODE (no =FACTOR)")
        for name in _names(spec.strip(), "--sim-down", spec, known):
            if name in out:
                raise SpecError(f"--sim-down {spec!r}: {name} is given twice")
            out.append(name)
    return out

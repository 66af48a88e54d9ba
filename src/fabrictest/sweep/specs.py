"""The simulation's fault specs.

    --sim-slow NODE=FACTOR[:tx|:rx]    NODE sends (tx), receives (rx) or both at FACTOR x
    --sim-down NODE[:tx|:rx]           NODE cannot send, receive, or either
    --sim-slow @FILE, --sim-down @FILE one spec a line (# comments, blank lines)

NODE may be a hostlist expression (`node[01-04]`). A spec that does not parse, names a node
outside the sweep or twice for the same direction, or gives a factor outside (0, 1], is
refused with one line (SpecError), naming the file and line for @FILE.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from . import nodes as nodeset

DIRECTIONS = {"": (True, True), "tx": (True, False), "rx": (False, True)}


class SpecError(ValueError):
    """A malformed fault spec; `str(err)` is the one line printed."""


def _expand(specs: Iterable[str], option: str) -> list[tuple[str, str]]:
    """(spec, where) pairs, with @FILE replaced by its lines."""
    out = []
    for spec in specs:
        if not spec.startswith("@"):
            out.append((spec, f"{option} {spec!r}"))
            continue
        path = spec[1:]
        if not path:
            raise SpecError(f"{option} '@': no file named")
        try:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except (OSError, UnicodeDecodeError) as err:
            why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            raise SpecError(f"{option} @{path}: {why}") from None
        found = 0
        for n, line in enumerate(lines, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("@"):
                raise SpecError(f"{option} @{path} line {n}: {line!r}: no @FILE inside a file")
            out.append((line, f"{option} @{path} line {n}: {line!r}"))
            found += 1
        if not found:
            raise SpecError(f"{option} @{path}: no spec in the file")
    return out


def _names(expr: str, where: str, known: set[str]) -> list[str]:
    if not expr.strip():
        raise SpecError(f"{where}: no node named")
    try:
        names = nodeset.expand(expr.strip())
    except nodeset.NodeSetError as err:
        raise SpecError(f"{where}: {err}") from None
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SpecError(f"{where}: {unknown[0]} is not one of the sweep's nodes")
    return names


def _direction(text: str, where: str) -> str:
    d = text.strip().lower()
    if d not in DIRECTIONS:
        raise SpecError(f"{where}: direction {text!r} is not tx or rx")
    return d


def parse_slow(specs: Iterable[str], nodes: Sequence[str]) -> dict[str, tuple[float, float]]:
    """`NODE=FACTOR[:tx|:rx]` specs -> {node: (send factor, receive factor)}."""
    known = set(nodes)
    out: dict[str, list[float | None]] = {}
    for spec, where in _expand(specs, "--sim-slow"):
        expr, sep, rest = spec.partition("=")
        if not sep:
            raise SpecError(f"{where}: expected NODE=FACTOR[:tx|:rx], e.g. node03=0.25:tx")
        factor, colon, direction = rest.partition(":")
        d = _direction(direction, where) if colon else ""
        if colon and not d:
            raise SpecError(f"{where}: direction '' is not tx or rx")
        try:
            value = float(factor.strip())
        except ValueError:
            raise SpecError(f"{where}: FACTOR {factor.strip()!r} is not a number") from None
        if not (math.isfinite(value) and 0.0 < value <= 1.0):
            raise SpecError(f"{where}: FACTOR must be in (0, 1], got {factor.strip()}")
        tx, rx = DIRECTIONS[d]
        for name in _names(expr, where, known):
            cur = out.setdefault(name, [None, None])
            for i, on in enumerate((tx, rx)):
                if not on:
                    continue
                if cur[i] is not None:
                    raise SpecError(f"{where}: {name} {('tx', 'rx')[i]} is given twice")
                cur[i] = value
    return {n: (t if t is not None else 1.0, r if r is not None else 1.0)
            for n, (t, r) in out.items()}


def parse_down(specs: Iterable[str], nodes: Sequence[str]) -> dict[str, tuple[bool, bool]]:
    """`NODE[:tx|:rx]` specs -> {node: (cannot send, cannot receive)}."""
    known = set(nodes)
    out: dict[str, list[bool]] = {}
    for spec, where in _expand(specs, "--sim-down"):
        if "=" in spec:
            raise SpecError(f"{where}: expected NODE[:tx|:rx] (no =FACTOR)")
        expr, sep, direction = spec.partition(":")
        d = _direction(direction, where) if sep else ""
        if sep and not d:
            raise SpecError(f"{where}: direction '' is not tx or rx")
        tx, rx = DIRECTIONS[d]
        for name in _names(expr, where, known):
            cur = out.setdefault(name, [False, False])
            for i, on in enumerate((tx, rx)):
                if on and cur[i]:
                    raise SpecError(f"{where}: {name} {('tx', 'rx')[i]} is given twice")
                cur[i] = cur[i] or on
    return {n: (t, r) for n, (t, r) in out.items()}

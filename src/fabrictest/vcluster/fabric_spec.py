"""`--fat-tree LEAVESxSPINES` and `--dragonfly GROUPSxSWITCHES` as values (pure): the shape's
kind and its two counts, within what one machine holds."""

from __future__ import annotations

import re

from .shaping import PlanError

FAT_TREE, DRAGONFLY = "fat-tree", "dragonfly"
KINDS = (FAT_TREE, DRAGONFLY)
MAX_SWITCHES = 32  # switch namespaces on one machine
_SPEC = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*$")


def parse_shape(kind: str, text: str) -> tuple[str, int, int]:
    """('fat-tree', '4x2') -> ('fat-tree', 4, 2); PlanError for anything else."""
    opt = f"--{kind}"
    what = "LEAVESxSPINES" if kind == FAT_TREE else "GROUPSxSWITCHES"
    if kind not in KINDS:
        raise PlanError(f"{kind!r} is not a fabric shape ({', '.join(KINDS)})")
    m = _SPEC.match(str(text))
    if not m:
        raise PlanError(f"{opt} {text!r}: expected {what}, e.g. {'4x2' if kind == FAT_TREE else '2x2'}")
    a, b = int(m.group(1)), int(m.group(2))
    if kind == FAT_TREE and not (2 <= a and 1 <= b):
        raise PlanError(f"{opt} {text}: at least 2 leaves and 1 spine")
    if kind == DRAGONFLY and not (2 <= a and 1 <= b):
        raise PlanError(f"{opt} {text}: at least 2 groups of 1 switch")
    switches = a + b if kind == FAT_TREE else a * b
    if switches > MAX_SWITCHES:
        raise PlanError(f"{opt} {text}: {switches} switches, at most {MAX_SWITCHES} on one "
                        "machine")
    return kind, a, b


def parse_fabric(value: str) -> tuple[str, int, int] | None:
    """A plan's `fabric` field ('fat-tree:4x2', '' for none) -> its shape."""
    if not value:
        return None
    kind, _, counts = str(value).partition(":")
    return parse_shape(kind, counts)


def leaves_of(shape: tuple[str, int, int]) -> int:
    """How many switches hold nodes: a fat tree's leaves, every switch of a dragonfly."""
    kind, a, b = shape
    return a if kind == FAT_TREE else a * b


__all__ = ["DRAGONFLY", "FAT_TREE", "KINDS", "leaves_of", "parse_fabric", "parse_shape"]

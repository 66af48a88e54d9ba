"""The entry ReFrame picks for a test: its key path in the file and its references, found the
way ReFrame's own lookup finds them (exact key, else an anchored regex for string values), in
the checked figures :func:`~.loading.load` made (nothing is parsed again)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .model import Reference, ReferenceFile


def _match_key(level: Mapping[Any, Any], key: Any) -> Any:
    """The key of ``level`` that ReFrame's lookup picks for ``key``: an exact key, else
    (string values only) the first key that matches as an anchored regex."""
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
    KeyError like ReFrame's lookup when there are none. The references are the loaded file's
    own :class:`~.model.Reference` objects (with their provenance)."""
    cref = ref_file.classes[test_class]
    node: Any = cref.tree
    path: list[str] = []
    for name in cref.index:
        key = _match_key(node, system if name == "$system" else params[name])
        node = node[key]
        path.append(str(key))
    return tuple(path), dict(node)


def lookup(
    ref_file: ReferenceFile, test_class: str, system: str, params: Mapping[str, Any]
) -> dict[str, Reference]:
    """The references ReFrame uses for ``test_class`` on ``system`` with ``params`` (values of
    the ``$index`` names); raises KeyError like ReFrame's lookup when there are none."""
    return resolve(ref_file, test_class, system, params)[1]


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

"""Merging calibrated entries into `reference/<system>.yaml`, keeping everything else as it is.

ruamel.yaml's round trip (not text surgery): comments, quoting, flow lists, key order and
anchors of everything the calibration does not write come out byte for byte as they went in
(checked on every reference file of the repository). Only the calibrated classes' entries
and their provenance change; a calibrated entry under a YAML alias (`8: *a2m_local`) gets its
own copy first, so the other keys sharing that mapping keep their values. The result must
pass `fabrictest.references.load()` before it replaces the file (atomically).
"""

from __future__ import annotations

import copy
import io
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from fabrictest import references
from fabrictest.report.calibrate.method import COUNT_RULE, COUNT_UNIT, Calibration, Entry
from fabrictest.report.records import outfiles, refformat
from fabrictest.report.records.results import ResultsError


def _yaml() -> YAML:
    y = YAML()
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    y.representer.add_representer(
        type(None), lambda rep, _d: rep.represent_scalar("tag:yaml.org,2002:null", "null"))
    return y


def _flow_seq(items: Sequence[Any]) -> CommentedSeq:
    s = CommentedSeq(items)
    s.fa.set_flow_style()
    return s


def _flow_map(items: Mapping[str, Any]) -> CommentedMap:
    """A fresh one-line mapping (fresh: an object used twice would be dumped as an alias)."""
    m = CommentedMap((k, _flow_map(v) if isinstance(v, Mapping) else v)
                     for k, v in items.items())
    m.fa.set_flow_style()
    return m


def _refcounts(node: Any, counts: dict[int, int]) -> None:
    if isinstance(node, (dict, list)):
        counts[id(node)] = counts.get(id(node), 0) + 1
        if counts[id(node)] > 1:
            return  # an alias: its children were counted at its first occurrence
        for child in (node.values() if isinstance(node, dict) else node):
            _refcounts(child, counts)


def _own(parent: CommentedMap, key: Any, counts: dict[int, int]) -> Any:
    """parent[key], copied first when a YAML alias shares it with other keys."""
    child = parent[key]
    if counts.get(id(child), 1) > 1:
        counts[id(child)] -= 1
        child = copy.deepcopy(child)
        if hasattr(child, "anchor"):
            child.anchor.value = None
        parent[key] = child
    return child


def _child_map(parent: CommentedMap, key: Any, counts: dict[int, int]) -> CommentedMap:
    if key not in parent:
        parent[key] = CommentedMap()
    child = _own(parent, key, counts)
    if not isinstance(child, dict):
        raise ResultsError(f"cannot merge: {key!r} is not a mapping in the reference file")
    return child


def _leaves(node: Any, depth: int, path: tuple = ()) -> set[tuple]:
    """(key path, pvar) of every entry below a system key."""
    if depth == 0:
        return {(path, var) for var in node} if isinstance(node, dict) else set()
    out: set[tuple] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            out |= _leaves(v, depth - 1, (*path, k))
    return out


def _dotted(entry: Entry) -> str:
    return ".".join([*(str(k) for k in entry.keys), entry.pvar])


def merge_text(text: str | None, cal: Calibration, index_of_new: Mapping[str, Sequence[str]],
               meta: Mapping[str, Any]) -> tuple[str, dict[str, int]]:
    """The file's new text and counts of entries added and replaced. `index_of_new` gives the
    `$index` of classes the file does not have yet; `meta` the calibration's command, date,
    factor, floor and session records."""
    y = _yaml()
    doc = y.load(text) if text and text.strip() else None
    if doc is None:
        doc = CommentedMap()
        doc.yaml_set_start_comment(
            f"References for `{cal.system}`, written by {refformat.MEASURED_BY} (see "
            "$provenance).\nFormat and provenance rules: src/fabrictest/references/, "
            "docs/reframe.md.")
    if not isinstance(doc, dict):
        raise ResultsError("cannot merge: the reference file is not a mapping")
    counts: dict[int, int] = {}
    _refcounts(doc, counts)
    if cal.entries and references.PROVENANCE_KEY not in doc:
        doc.insert(0, references.PROVENANCE_KEY, CommentedMap())
    added = replaced = 0
    by_class: dict[str, list[Entry]] = {}
    for e in cal.entries:
        by_class.setdefault(e.cls, []).append(e)
    for cls, entries in by_class.items():
        if cls not in doc:
            doc[cls] = CommentedMap([(references.INDEX_KEY,
                                      _flow_seq(list(index_of_new[cls])))])
        body = _child_map(doc, cls, counts)
        depth = len(body[references.INDEX_KEY]) - 1
        system = _child_map(body, cal.system, counts)
        for e in entries:
            node = system
            for k in e.keys:
                node = _child_map(node, k, counts)
            value = refformat.entry(e.ref, e.lower, e.upper, e.unit)
            if e.pvar in node and isinstance(node[e.pvar], list):
                replaced += 1
                leaf = _own(node, e.pvar, counts)
                leaf[:] = value  # in place: keeps its flow style and comments
            else:
                added += 1
                node[e.pvar] = _flow_seq(value)
        prov_root = _child_map(doc, references.PROVENANCE_KEY, counts)
        _provenance(prov_root, cls, cal.system, entries, depth, system, counts, meta)
    buf = io.StringIO()
    y.dump(doc, buf)
    return buf.getvalue(), {"added": added, "replaced": replaced}


def _provenance(prov_root: CommentedMap, cls: str, system: str, entries: list[Entry],
                depth: int, system_node: Any, counts: dict[int, int],
                meta: Mapping[str, Any]) -> None:
    """A system block when every entry of the class on this system is calibrated now; else
    one block per calibrated value, leaving the hand-written block as it is."""
    prov_cls = _child_map(prov_root, cls, counts)
    calibrated = {(tuple(e.keys), e.pvar) for e in entries}
    present = {(tuple(p), v) for p, v in _leaves(system_node, depth)}
    shapings = {tuple(sorted(e.shaping.items())) for e in entries}
    whole = present <= {(tuple(k), v) for k, v in calibrated}

    def block(shaping: Mapping[str, Any], these: list[Entry]) -> dict:
        wide = [f"{_dotted(e)} {' and '.join(phrases)}" for e in these
                if (phrases := references.Reference(e.ref, e.lower, e.upper, e.unit)
                    .outside_strict_band())]
        loose = (f"calibrated: the sessions' spread, --floor {100 * meta['floor']:g}% or "
                 f"--factor {meta['factor']:g} give bounds past the strict band: "
                 f"{'; '.join(wide)}") if wide else None
        return refformat.provenance(
            system=system, sessions=[_flow_map(s) for s in meta["sessions"]],
            command=meta["command"], date=meta["date"], factor=meta["factor"],
            floor=meta["floor"], shaping=_flow_map(shaping) if shaping else None,
            spreads={_dotted(e): e.summary() for e in these}, loose=loose,
            counts=COUNT_RULE if any(e.unit == COUNT_UNIT for e in these) else None)

    if whole and len(shapings) == 1:
        prov_cls[system] = block(entries[0].shaping, entries)
        return
    sys_block = _child_map(prov_cls, system, counts)
    values = _child_map(sys_block, "values", counts)
    for e in entries:
        values[_dotted(e)] = block(e.shaping, [e])


def write(path: Path, cal: Calibration, index_of_new: Mapping[str, Sequence[str]],
          meta: Mapping[str, Any]) -> tuple[str, dict[str, int]]:
    """Merge into `path` (created when absent), validate, replace atomically."""
    old = path.read_text() if path.exists() else None
    text, counts = merge_text(old, cal, index_of_new, meta)
    validate(text, cal)
    outfiles.write_text(path, text, "-o")
    return text, counts


def validate(text: str, cal: Calibration) -> None:
    """The merged file passes the suite's reference checks, and every calibrated entry is what
    ReFrame will look up for its figure."""
    with tempfile.TemporaryDirectory(prefix="calibrate-") as tmp:
        p = Path(tmp) / f"{cal.system}.yaml"
        p.write_text(text)
        try:
            ref_file = references.load(p)
        except references.ReferenceError as err:
            raise ResultsError(f"the merged reference file would not load: {err}") from err
    for e in cal.entries:
        index = ref_file.classes[e.cls].index
        params = dict(zip(index[1:], e.keys, strict=True))
        got = references.lookup(ref_file, e.cls, cal.system, params).get(e.pvar)
        want = references.Reference(float(e.ref), e.lower, e.upper, e.unit)
        if got != want:
            raise ResultsError(f"{e.cls} {_dotted(e)}: the merged file gives {got}, not {want}")

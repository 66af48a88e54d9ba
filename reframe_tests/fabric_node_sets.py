"""A partition's node sets: hand-written ``extras.node_sets`` / ``node_set_sizes``, and what
its ``extras.topology`` gives (fabrictest.parsers.node_sets) for every scope not written.

``extras.topology`` is a file path relative to the repository (`config/reframe/topology/...`)
or, when it holds a line break, the topology itself (`scontrol show topology` /
`topology.conf` lines, or our `SWITCH: NODES parent=SWITCH` format). It is read once per
partition. A topology that cannot be read or parsed is a :class:`TopologyError`: the listing
warns once per partition in plain ``reframe -l``/``-r`` (never only at ``-vv``), keeps every case
that reads the node sets listed there and fails each at setup with that one line
(``fabric_placement``), so that no family vanishes from a run without a word.
"""

from __future__ import annotations

from pathlib import Path

from fabrictest.parsers import ParseError
from fabrictest.parsers.hostlists import expand
from fabrictest.parsers.node_sets import (
    NodeSets,
    compress_hostlist,
    derive_node_sets,
    merge,
    parse_any_topology,
    sizes,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
_CACHE: dict[str, NodeSets] = {}


class TopologyError(ValueError):
    """``extras.topology`` cannot be read or parsed: a fault of the configuration, which fails
    the cases that need it, not a reason that a case does not fit the partition."""


def derived(part) -> NodeSets:
    """The node sets ``part``'s topology gives (none without ``extras.topology``)."""
    spec = part.extras.get("topology")
    if not spec:
        return NodeSets()
    key = f"{part.fullname}:{spec}"
    if key not in _CACHE:
        if "\n" in spec:
            text, where = spec, "extras.topology"
        else:
            path = REPO_ROOT / spec
            try:
                text = path.read_text()
            except OSError as e:
                raise TopologyError(f"{part.fullname}: extras.topology: cannot read {path}: "
                                    f"{e.strerror}") from None
            where = spec
        try:
            _CACHE[key] = derive_node_sets(parse_any_topology(text))
        except ParseError as e:
            raise TopologyError(f"{part.fullname}: {where}: {e}") from None
    return _CACHE[key]


def node_sets(part) -> dict[str, str]:
    """scope -> Slurm hostlist; hand-written sets win."""
    return merge(part.extras.get("node_sets", {}), derived(part))


def node_set_sizes(part) -> dict[str, int]:
    """scope -> nodes; hand-written sizes win."""
    return sizes(part.extras.get("node_set_sizes", {}), derived(part),
                 part.extras.get("node_sets", {}))


def first_nodes(hostlist: str, count: int) -> str:
    """The first ``count`` nodes of a Slurm hostlist, as a hostlist."""
    return compress_hostlist(expand(hostlist, "node set")[:count])

"""Generated topologies for planning (``--generate``): a Slurm ``topology.conf`` (topology/tree)
for a dragonfly or a 3-level fat tree of any size, in the form ``parsers/topology_text`` reads.

* ``dragonfly:groups=G,switches=S,nodes=N``: G groups of S switches with N nodes each, the
  groups under one top switch (Slurm's tree view of a dragonfly: the global links are not in
  topology.conf);
* ``fattree:pods=P,leaves=L,nodes=N``: P pods of L leaf switches with N nodes each, each
  pod's aggregation switch under one core switch (a 3-level tree).

Nodes are named ``nid00001`` ... in leaf order, as on a Cray EX. At most
``parsers.hostlists.MAX_NODES`` (100,000) nodes: the most one hostlist expands to, in the
families' node sets as here.
"""

from __future__ import annotations

import re

from ..parsers.hostlists import MAX_NODES, compress

KEYS = {"dragonfly": ("groups", "switches", "nodes"), "fattree": ("pods", "leaves", "nodes")}
_PAIR = re.compile(r"^([a-z]+)=(\d+)$")


class GenerateError(ValueError):
    """One line: what is wrong with the ``--generate`` value."""


def parse_spec(spec: str) -> tuple[str, dict[str, int]]:
    """``'dragonfly:groups=25,switches=25,nodes=16'`` -> ``('dragonfly', {...})``."""
    kind, _, rest = spec.partition(":")
    if kind not in KEYS:
        raise GenerateError(f"--generate {spec}: the kind is one of {', '.join(KEYS)}")
    want = KEYS[kind]
    counts: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        m = _PAIR.match(item)
        if not m or m.group(1) not in want:
            raise GenerateError(f"--generate {spec}: {item!r} is not one of "
                                f"{', '.join(k + '=N' for k in want)}")
        if m.group(1) in counts:
            raise GenerateError(f"--generate {spec}: {m.group(1)} given twice")
        counts[m.group(1)] = int(m.group(2))
    missing = [k for k in want if k not in counts]
    if missing:
        raise GenerateError(f"--generate {spec}: missing {', '.join(missing)}")
    if any(v < 1 for v in counts.values()):
        raise GenerateError(f"--generate {spec}: every count must be at least 1")
    total = counts[want[0]] * counts[want[1]] * counts["nodes"]
    if total > MAX_NODES:
        raise GenerateError(f"--generate {spec}: {total:,} nodes, at most {MAX_NODES:,}")
    return kind, counts


def topology_conf(spec: str) -> str:
    """The topology.conf text of ``spec`` (see the module docstring)."""
    kind, c = parse_spec(spec)
    outer, inner = KEYS[kind][0], KEYS[kind][1]
    groups, per_group, per_leaf = c[outer], c[inner], c["nodes"]
    width = max(5, len(str(groups * per_group * per_leaf)))
    leaf_word, group_word = ("sw", "group") if kind == "dragonfly" else ("leaf", "pod")
    lines = [f"# fabric-plan --generate {spec}: {groups * per_group * per_leaf} nodes"]
    group_lines = []
    node = 1
    for g in range(groups):
        leaves = []
        for s in range(per_group):
            leaf = f"{leaf_word}{g:03d}{s:03d}"
            names = [f"nid{i:0{width}d}" for i in range(node, node + per_leaf)]
            node += per_leaf
            lines.append(f"SwitchName={leaf} Nodes={compress(names)}")
            leaves.append(leaf)
        group_lines.append(f"SwitchName={group_word}{g:03d} Switches={compress(leaves)}")
    top = "top" if kind == "dragonfly" else "core"
    lines += group_lines
    lines.append(f"SwitchName={top} Switches={compress([f'{group_word}{g:03d}' for g in range(groups)])}")
    return "\n".join(lines) + "\n"


__all__ = ["KEYS", "GenerateError", "parse_spec", "topology_conf"]

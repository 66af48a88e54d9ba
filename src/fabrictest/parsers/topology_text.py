"""Topology texts -> `Topology` (topology_model.py): Slurm's and our own.

* Slurm's tree (topology/tree): `scontrol show topology` prints one line per switch,
  `SwitchName=sw1 Level=0 LinkSpeed=1 Nodes=node01,node02` (a leaf) or `SwitchName=top Level=1
  LinkSpeed=1 Nodes=node[01-04] Switches=sw1,sw2` (an inner switch, listing every node below
  it); `topology.conf` has the same keys (case-insensitive, `#` comments, `\\` continues a
  line). A switch listed under several parents is a fat tree's (the Slurm topology guide's
  `SwitchName=s4 Switches=s[0-3]` ... `s7`); `LinkSpeed` is the relative rate of its links.
* Slurm's block (topology/block, 23.11 and later): `BlockName=b1 Nodes=node[01-04]` and
  `BlockSizes=4,16` in topology.conf; `scontrol show topology` prints `BlockName=b1
  BlockIndex=0 Nodes=... BlockSize=4` (and `AggregatedBlock=` lines, 24.11 and later). The
  base blocks are read as groups.
* our own small file, one switch a line: `sw1: node[01-02] parent=top` (several parents:
  `parent=s4,s5`; `speed=N` its LinkSpeed; `global=SW,...` a dragonfly switch's global
  links), and two settings on lines of their own: `routing=dmodk` and `shape=dragonfly`.

Every text must end with a newline: a last line without one was cut while written
(`SwitchName=s6 Switches=s` is not a switch `s`), and is refused. A switch or block listed
twice is refused (never first- or last-wins), and so are `Level=` values Slurm would not print
(a leaf above level 0, an inner switch not one above its switches).
"""

from __future__ import annotations

import re

from ._util import require_text
from .errors import ParseError
from .hostlists import expand
from .topology_model import ROUTINGS, Switch, Topology, finish, natural

_KEY = re.compile(r"(\w+)=(\S*)")
_OWN = re.compile(r"^(?P<name>[\w.+-]+)\s*:\s*(?P<rest>.*)$")
_TREE_KEYS = {"switchname", "level", "linkspeed", "nodes", "switches"}
_BLOCK_KEYS = {"blockname", "aggregatedblock", "blockindex", "nodes", "blocksize",
               "blocksizes"}


def _whole(text, what: str) -> str:
    text = require_text(text, what)
    last = text.rsplit("\n", 1)[-1]
    if last.strip():  # (blanks after the last newline are no line)
        raise ParseError(f"{what}: output ends mid-line ({last[:60]!r} has no newline): cut "
                         "short?")
    return text


def _lines(text: str):
    """(line number, text without comment) of each non-empty line, continuations joined."""
    held, start = "", 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if line.endswith("\\"):
            held, start = held + line[:-1] + " ", start or lineno
            continue
        line, held = (held + line).strip(), ""
        if line:
            yield (start or lineno), line
        start = 0


def _int(value: str, what: str, lineno: int, line: str, lowest: int = 0) -> int:
    try:
        n = int(value)
    except ValueError:
        raise ParseError(f"{what}: line {lineno}: bad number {value!r}: {line}") from None
    if n < lowest:
        raise ParseError(f"{what}: line {lineno}: {value} is below {lowest}: {line}")
    return n


def _one_name(name: str, key: str, what: str, lineno: int) -> None:
    """A switch or block line names one switch or block (Slurm's ``SwitchName=`` and
    ``BlockName=`` take a name, not a hostlist): ``leaf[1-4]`` would otherwise be read as one
    switch of that name."""
    if any(c in name for c in "[],"):
        raise ParseError(f"{what}: line {lineno}: {key}={name} names several (a hostlist); "
                         f"{key}= names one: write a line for each")


def parse_scontrol_topology(text: str) -> Topology:
    """`scontrol show topology` (tree or block plugin) or the lines of a `topology.conf`."""
    what = "scontrol show topology"
    text = _whole(text, what)
    tree: dict[str, Switch] = {}
    blocks: dict[str, Switch] = {}
    aggregated: dict[str, list[str]] = {}
    sizes: list[int] = []
    for lineno, line in _lines(text):
        pairs = _KEY.findall(line)
        keys = {k.lower(): v for k, v in pairs}
        if len(keys) != len(pairs):
            raise ParseError(f"{what}: line {lineno}: a key given twice: {line}")
        leftover = _KEY.sub("", line).strip()
        if "switchname" not in keys and not keys.keys() & {"blockname", "aggregatedblock",
                                                            "blocksizes"}:
            low = line.lower()
            if "topology" in low and "not" in low:
                raise ParseError(f"{what}: no tree or block topology ({line})")
            raise ParseError(f"{what}: line {lineno} names no switch or block: {line}")
        if leftover:
            raise ParseError(f"{what}: line {lineno}: {leftover!r} is not KEY=VALUE: {line}")
        if "switchname" in keys:
            unknown = keys.keys() - _TREE_KEYS
            if unknown:
                raise ParseError(f"{what}: line {lineno}: unknown key "
                                 f"{sorted(unknown)[0]!r}: {line}")
            name = keys["switchname"]
            if not name:
                raise ParseError(f"{what}: line {lineno}: SwitchName= names no switch")
            _one_name(name, "SwitchName", what, lineno)
            if name in tree:
                raise ParseError(f"{what}: switch {name} listed twice")
            level = (_int(keys["level"], what, lineno, line) if "level" in keys else None)
            speed = (_int(keys["linkspeed"], what, lineno, line, 1)
                     if keys.get("linkspeed") else None)
            children = expand(keys.get("switches", ""), f"{what}: line {lineno}: Switches=")
            # scontrol lists under an inner switch every node below it: only a leaf's are its
            nodes = ([] if children else
                     expand(keys.get("nodes", ""), f"{what}: line {lineno}: Nodes="))
            tree[name] = Switch(name=name, level=level, nodes=nodes, children=children,
                                link_speed=speed)
            continue
        unknown = keys.keys() - _BLOCK_KEYS
        if unknown:
            raise ParseError(f"{what}: line {lineno}: unknown key {sorted(unknown)[0]!r}: "
                             f"{line}")
        if "blocksizes" in keys:
            if sizes or len(keys) > 1:
                raise ParseError(f"{what}: line {lineno}: BlockSizes= given twice or beside "
                                 f"a block: {line}")
            sizes = [_int(v, what, lineno, line, 1) for v in keys["blocksizes"].split(",")]
            continue
        name = keys.get("blockname") or keys.get("aggregatedblock") or ""
        if not name:
            raise ParseError(f"{what}: line {lineno}: a block without a name: {line}")
        _one_name(name, "BlockName" if "blockname" in keys else "AggregatedBlock", what, lineno)
        nodes = expand(keys.get("nodes", ""), f"{what}: line {lineno}: Nodes=")
        if "blocksize" in keys:
            _int(keys["blocksize"], what, lineno, line, 1)
        if "blockindex" in keys:
            _int(keys["blockindex"], what, lineno, line)
        if name in blocks or name in aggregated:
            raise ParseError(f"{what}: block {name} listed twice")
        if "aggregatedblock" in keys:
            aggregated[name] = nodes
        else:
            blocks[name] = Switch(name=name, level=0, nodes=nodes)
    if tree and (blocks or aggregated or sizes):
        raise ParseError(f"{what}: both switches (topology/tree) and blocks (topology/block)")
    if tree:
        _check_levels(tree, what)
        finish(tree, what)
        return Topology(switches=tree, source="scontrol")
    if not blocks:
        raise ParseError(f"{what}: no switch and no block")
    finish(blocks, what)
    topo = Topology(switches=blocks, source="block", block_sizes=sizes)
    _check_aggregated(topo, aggregated, what)
    return topo


def _check_levels(tree: dict[str, Switch], what: str) -> None:
    """Slurm's levels (`scontrol show topology` prints them, topology.conf has none): a leaf
    switch is level 0, an inner one a level above each of its switches, one above the highest
    when every one of them is listed (`scontrol show topology NODE` lists the switches on the
    node's path only)."""
    for s in tree.values():
        if s.level is None:
            continue
        if not s.children:
            if s.level != 0:
                raise ParseError(f"{what}: leaf switch {s.name} at Level={s.level}: Slurm puts "
                                 "a switch without switches below it at level 0")
            continue
        known = [tree[c].level for c in s.children if c in tree and tree[c].level is not None]
        if not known:
            continue
        if s.level <= max(known) or (len(known) == len(s.children) and
                                     s.level != max(known) + 1):
            raise ParseError(f"{what}: switch {s.name} at Level={s.level} above switches at "
                             f"levels {sorted(set(known))}: Slurm puts it one above the "
                             "highest")


def _check_aggregated(topo: Topology, aggregated: dict[str, list[str]], what: str) -> None:
    """An aggregated block holds whole base blocks (the nodes of some of them)."""
    where = topo.switch_of()
    for name, nodes in aggregated.items():
        outside = [n for n in nodes if n not in where]
        if outside:
            raise ParseError(f"{what}: aggregated block {name}: node {outside[0]} is in no "
                             "base block")


def parse_topology_file(text: str) -> Topology:
    """Our own format: `SWITCH: [NODES] [parent=S,...] [speed=N] [global=S,...]`, one switch
    a line, and the settings `routing=dmodk`, `shape=dragonfly` on lines of their own."""
    what = "topology file"
    text = _whole(text, what)
    topo: dict[str, Switch] = {}
    routing, dragonfly = None, False
    for lineno, line in _lines(text):
        m = _OWN.match(line)
        if not m:
            key, eq, value = line.partition("=")
            if eq and key.strip() == "routing" and value.strip() in ROUTINGS:
                routing = value.strip()
                continue
            if eq and key.strip() == "shape" and value.strip() == "dragonfly":
                dragonfly = True
                continue
            raise ParseError(f"{what}: line {lineno}: expected 'SWITCH: NODES "
                             f"[parent=SWITCH]' (or routing=dmodk, shape=dragonfly), got "
                             f"{line!r}")
        name = m.group("name")
        sw = Switch(name=name)
        for tok in m.group("rest").split():
            key, eq, value = tok.partition("=")
            where = f"{what}: line {lineno}: {key}="
            if not eq:
                sw.nodes += expand(tok, f"{what}: line {lineno}: nodes")
            elif key == "parent":
                sw.parents += [p for p in expand(value, where) if p not in sw.parents]
            elif key == "speed":
                sw.link_speed = _int(value, what, lineno, line, 1)
            elif key == "global":
                sw.globals += expand(value, where)
                dragonfly = True
            else:
                raise ParseError(f"{what}: line {lineno}: unknown key in {tok!r}")
        if name in topo:
            raise ParseError(f"{what}: line {lineno}: switch {name} listed twice")
        topo[name] = sw
    if not topo:
        raise ParseError(f"{what}: no switch")
    finish(topo, what)
    out = Topology(switches=topo, source="file", dragonfly=dragonfly, routing=routing)
    _check_globals(out, what)
    return out


def _check_globals(topo: Topology, what: str) -> None:
    """A global link joins switches of two different groups."""
    for s in topo.switches.values():
        for other in s.globals:
            if other not in topo.switches:
                raise ParseError(f"{what}: switch {s.name}: global link to {other}, which is "
                                 "not a switch")
            if topo.group_of(s.name) == topo.group_of(other):
                raise ParseError(f"{what}: global link {s.name}<->{other} joins one group "
                                 f"({topo.group_of(s.name)}): a link inside a group is local")


def parse_any_topology(text: str) -> Topology:
    """`scontrol show topology` / `topology.conf` lines (they say `SwitchName=` or
    `BlockName=`), else our own `SWITCH: NODES parent=SWITCH` file."""
    if re.search(r"(?im)^\s*(switchname|blockname|aggregatedblock|blocksizes)=", str(text)):
        return parse_scontrol_topology(text)
    return parse_topology_file(text)


def describe(topo: Topology) -> str:
    """One line: what the topology is (for messages and `--topology` echoes)."""
    leaves = sorted(topo.leaves(), key=natural)
    nodes = len(topo.switch_of())
    if topo.shape == "blocks":
        return f"blocks: {len(leaves)} blocks, {nodes} nodes"
    groups = sorted({topo.group_of(x) for x in leaves}, key=natural)
    extra = f", routing {topo.routing}" if topo.routing else ""
    return (f"{topo.shape}: {len(leaves)} leaf switches in {len(groups)} groups, {nodes} "
            f"nodes{extra}")


__all__ = ["describe", "parse_any_topology", "parse_scontrol_topology", "parse_topology_file"]

"""Fabric topology as data: which switch each node hangs from, and how the switches join.

Three sources, one result (`Topology`):

* Slurm's tree plugin: `scontrol show topology` (22.05) prints one line per switch,
  `SwitchName=sw1 Level=0 LinkSpeed=1 Nodes=node01,node02` (a leaf) or
  `SwitchName=top Level=1 LinkSpeed=1 Nodes=node[01-04] Switches=sw1,sw2` (an inner switch,
  listing every node below it); `topology.conf` lines (`SwitchName=s1 Nodes=node[01-02]`)
  have the same keys and parse the same way.
* our own small file for sites without either, one switch a line:
  `sw1: node[01-02] parent=top` (`#` comments; an inner switch lists no nodes).
* HPE Slingshot names as the Slingshot acceptance notes use them (the host file per switch
  that `lldptool` and a grep build): a switch is `x1000c1r5b0` (cabinet 1000, chassis 1,
  switch slot 5, its controller b0), a node `x1000c1s0b0n0`; a dragonfly group is a cabinet
  unless a site maps cabinets to groups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import require_text
from .errors import ParseError
from .sinfo import expand_hostlist

_KEY = re.compile(r"(\w+)=(\S*)")


@dataclass
class Switch:
    name: str
    level: int | None = None  # Slurm's level: 0 for a leaf switch
    nodes: list[str] = field(default_factory=list)  # nodes attached directly
    children: list[str] = field(default_factory=list)  # switches below it
    parent: str | None = None
    link_speed: int | None = None


@dataclass
class Topology:
    switches: dict[str, Switch]
    source: str  # "scontrol" | "file" | "xname"

    def switch_of(self) -> dict[str, str]:
        """node -> the leaf switch it hangs from."""
        return {n: s.name for s in self.switches.values() for n in s.nodes}

    def leaves(self) -> list[str]:
        return [s.name for s in self.switches.values() if s.nodes]

    def path(self, switch: str) -> list[str]:
        """The switch and its ancestors, up to the root."""
        out, seen = [], set()
        cur: str | None = switch
        while cur is not None and cur not in seen:
            out.append(cur)
            seen.add(cur)
            cur = self.switches[cur].parent if cur in self.switches else None
        return out

    def route(self, a: str, b: str) -> list[tuple[str, str]]:
        """The switch-to-switch links (child, parent) a run from node a to node b crosses:
        none when both hang from one switch."""
        where = self.switch_of()
        pa, pb = self.path(where[a]), self.path(where[b])
        common = next((s for s in pa if s in pb), None)
        up = pa[: pa.index(common)] if common else pa
        down = pb[: pb.index(common)] if common else pb
        return [(s, self.switches[s].parent or "") for s in up + down]


def _link(topo: dict[str, Switch]) -> None:
    """Parents from children lists and children from parents; a cycle or a node under two
    switches is refused."""
    for s in list(topo.values()):
        for c in s.children:
            if c not in topo:
                topo[c] = Switch(name=c)
            if topo[c].parent not in (None, s.name):
                raise ParseError(f"topology: switch {c} has two parents "
                                 f"({topo[c].parent}, {s.name})")
            topo[c].parent = s.name
    for s in list(topo.values()):
        if s.parent is not None:
            if s.parent not in topo:
                topo[s.parent] = Switch(name=s.parent)
            if s.name not in topo[s.parent].children:
                topo[s.parent].children.append(s.name)
    owner: dict[str, str] = {}
    for s in topo.values():
        for n in s.nodes:
            if n in owner:
                raise ParseError(f"topology: node {n} is under two switches ({owner[n]}, "
                                 f"{s.name})")
            owner[n] = s.name
    for s in topo.values():
        seen, cur = set(), s.name
        while cur is not None:
            if cur in seen:
                raise ParseError(f"topology: switches form a cycle through {cur}")
            seen.add(cur)
            cur = topo[cur].parent


def parse_scontrol_topology(text: str) -> Topology:
    """`scontrol show topology` (tree plugin) or the lines of a `topology.conf`."""
    text = require_text(text, "scontrol show topology")
    topo: dict[str, Switch] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        keys = dict(_KEY.findall(line))
        if "SwitchName" not in keys:
            if "topology" in line.lower() and "not" in line.lower():
                raise ParseError(f"scontrol show topology: no tree topology ({line})")
            raise ParseError(f"scontrol show topology: line {lineno} names no switch: {line}")
        name = keys["SwitchName"]
        if name in topo:
            raise ParseError(f"scontrol show topology: switch {name} listed twice")
        try:
            level = int(keys["Level"]) if "Level" in keys else None
            speed = int(keys["LinkSpeed"]) if "LinkSpeed" in keys else None
        except ValueError:
            raise ParseError(f"scontrol show topology: line {lineno}: bad number: {line}") \
                from None
        children = expand_hostlist(keys["Switches"]) if keys.get("Switches") else []
        # scontrol lists under an inner switch every node below it (`SwitchName=top Level=1
        # LinkSpeed=1 Nodes=node[01-04] Switches=sw1,sw2`): only a leaf's are its own
        nodes = expand_hostlist(keys["Nodes"]) if keys.get("Nodes") and not children else []
        topo[name] = Switch(name=name, level=level, nodes=nodes, children=children,
                            link_speed=speed)
    if not topo:
        raise ParseError("scontrol show topology: no switch")
    _link(topo)
    return Topology(switches=topo, source="scontrol")


_OWN = re.compile(r"^(?P<name>[\w.-]+)\s*:\s*(?P<rest>.*)$")


def parse_topology_file(text: str) -> Topology:
    """Our own format: `SWITCH: [NODES] [parent=SWITCH]`, one switch a line."""
    text = require_text(text, "topology file")
    topo: dict[str, Switch] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _OWN.match(line)
        if not m:
            raise ParseError(f"topology file: line {lineno}: expected 'SWITCH: NODES "
                             f"[parent=SWITCH]', got {line!r}")
        name, parent, nodes = m.group("name"), None, []
        for tok in m.group("rest").split():
            if tok.startswith("parent="):
                parent = tok.split("=", 1)[1] or None
            elif "=" in tok:
                raise ParseError(f"topology file: line {lineno}: unknown key in {tok!r}")
            else:
                nodes += expand_hostlist(tok)
        if name in topo:
            raise ParseError(f"topology file: line {lineno}: switch {name} listed twice")
        topo[name] = Switch(name=name, nodes=nodes, parent=parent)
    if not topo:
        raise ParseError("topology file: no switch")
    _link(topo)
    return Topology(switches=topo, source="file")


_XNAME = re.compile(
    r"^x(?P<cab>\d+)c(?P<chassis>\d+)"
    r"(?:r(?P<switch>\d+)(?:b(?P<sbmc>\d+))?(?:j(?P<port>\d+)p(?P<pport>\d+))?"
    r"|s(?P<slot>\d+)(?:b(?P<bmc>\d+)(?:n(?P<node>\d+))?)?)$")


@dataclass(frozen=True)
class Xname:
    """An HPE Cray EX component name: a switch (`x1000c1r5b0`) or a node (`x1000c1s0b0n0`)."""

    text: str
    cabinet: int
    chassis: int
    switch: int | None = None  # r<N>: the switch slot in the chassis
    slot: int | None = None  # s<N>: the compute blade slot
    bmc: int | None = None
    node: int | None = None

    @property
    def kind(self) -> str:
        return "switch" if self.switch is not None else ("node" if self.node is not None
                                                        else "blade")

    @property
    def switch_name(self) -> str | None:
        """The switch as the acceptance notes write it (`x1000c1r5b0`)."""
        if self.switch is None:
            return None
        return f"x{self.cabinet}c{self.chassis}r{self.switch}b0"

    def group(self, cabinets_per_group: int = 1, first_cabinet: int | None = None) -> int:
        """The dragonfly group: its cabinet, or cabinets counted `cabinets_per_group` at a
        time from `first_cabinet`."""
        if cabinets_per_group <= 1:
            return self.cabinet
        base = self.cabinet if first_cabinet is None else first_cabinet
        return (self.cabinet - base) // cabinets_per_group


def parse_xname(text: str) -> Xname:
    t = str(text).strip()
    m = _XNAME.match(t)
    if not m:
        raise ParseError(f"xname: {t!r} is not a switch (x1000c1r5b0) or node "
                         "(x1000c1s0b0n0) name")

    def num(key):
        v = m.group(key)
        return None if v is None else int(v)

    return Xname(text=t, cabinet=int(m.group("cab")), chassis=int(m.group("chassis")),
                 switch=num("switch"), slot=num("slot"), bmc=num("bmc"), node=num("node"))


def topology_from_switch_hosts(hosts: dict[str, list[str]],
                               cabinets_per_group: int = 1) -> Topology:
    """The notes' host file per switch (`x1000c1r5b0-nids.txt`: switch xname -> nodes) as a
    topology: leaf switches under a group switch (`group1000`), groups under `global`."""
    topo: dict[str, Switch] = {}
    for sw, nodes in hosts.items():
        x = parse_xname(sw)
        if x.kind != "switch":
            raise ParseError(f"xname: {sw} is not a switch")
        g = f"group{x.group(cabinets_per_group)}"
        topo.setdefault(g, Switch(name=g, level=1, parent="global"))
        name = x.switch_name or sw
        topo[name] = Switch(name=name, level=0, nodes=list(nodes), parent=g)
    if not topo:
        raise ParseError("xname: no switch")
    topo["global"] = Switch(name="global", level=2)
    _link(topo)
    return Topology(switches=topo, source="xname")


__all__ = ["Switch", "Topology", "Xname", "parse_scontrol_topology", "parse_topology_file",
           "parse_xname", "topology_from_switch_hosts"]

"""HPE Slingshot names as the Slingshot acceptance notes use them (the host file per switch
that `lldptool` and a grep build): a switch is `x1000c1r5b0` (cabinet 1000, chassis 1, switch
slot 5, its controller b0), a node `x1000c1s0b0n0`; a dragonfly group is a cabinet unless a
site maps cabinets to groups."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ParseError
from .topology_model import Switch, Topology, finish

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
    dragonfly: leaf switches in groups (`group1000`), the groups under `global`."""
    topo: dict[str, Switch] = {"global": Switch(name="global", level=2)}
    for sw, nodes in hosts.items():
        x = parse_xname(sw)
        if x.kind != "switch":
            raise ParseError(f"xname: {sw} is not a switch")
        g = f"group{x.group(cabinets_per_group)}"
        topo.setdefault(g, Switch(name=g, level=1, parents=["global"]))
        name = x.switch_name or sw
        topo[name] = Switch(name=name, level=0, nodes=list(nodes), parents=[g])
    if len(topo) == 1:
        raise ParseError("xname: no switch")
    finish(topo, "xname")
    return Topology(switches=topo, source="xname", dragonfly=True)


__all__ = ["Xname", "parse_xname", "topology_from_switch_hosts"]

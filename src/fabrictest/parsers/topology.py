"""Fabric topology as data: which switch each node hangs from, how the switches join, and
what a run between two nodes crosses. The forms read, one result (`Topology`):

* Slurm's tree (`scontrol show topology`, `topology.conf`), fat trees included (a switch
  listed under several parents; `LinkSpeed` the relative rate of a switch's links), and
  Slurm's block topology (`BlockName=`, `BlockSizes=`, 23.11 and later): topology_text.py;
* our own small file (`sw1: node[01-02] parent=top`, with `routing=dmodk` and a dragonfly's
  `global=` links): topology_text.py;
* HPE Slingshot xnames (the Slingshot acceptance notes' host file per switch): xname.py.

The model (shapes tree, fat-tree, dragonfly, blocks; the links a run crosses) is
topology_model.py; this module gathers the names callers use.
"""

from __future__ import annotations

from .topology_model import ROUTINGS, Hop, Switch, Topology, natural
from .topology_text import (
    describe,
    parse_any_topology,
    parse_scontrol_topology,
    parse_topology_file,
)
from .xname import Xname, parse_xname, topology_from_switch_hosts

__all__ = ["ROUTINGS", "Hop", "Switch", "Topology", "Xname", "describe", "natural",
           "parse_any_topology", "parse_scontrol_topology", "parse_topology_file",
           "parse_xname", "topology_from_switch_hosts"]

"""Faults on a node's link while a test runs: flaps (the link down and up) and random loss.

* ``flap``: the switch's end of the node's link down, then up, ``times`` times (the bridge's
  end of its veth pair; on a routed fabric, its leaf switch's port, the link MPI uses): the
  node's NIC (``eth0``, or ``hsn0`` on a routed fabric) loses its carrier each time, so its
  ``carrier_changes`` grows by 2 per flap, as a real NIC's does when its cable or switch port
  bounces;
* ``loss``: a share of the frames the node sends (tx), receives (rx) or both dropped at random
  on the bridge, with an nftables ``bridge`` table (``numgen random``): the node's TCP
  retransmits what it sent and lost, which ``/proc/net/snmp`` counts (``RetransSegs``). This
  kernel has no ``sch_netem`` (tc's loss), and netem on the node's ``eth0`` would replace its
  ``tbf`` rate; the bridge table leaves the shaping alone.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable

from .plan import Node
from .shaping import BOTH, PlanError, directions
from .shell import VClusterError, run

TABLE = "fabrictest_vcluster"  # one nftables bridge table for the whole cluster
CHAIN = "forward"
#: how long the link stays down in a flap (s): shorter than TCP's first retransmission timeout
#: (200 ms minimum) plus its backoff, so traffic resumes by itself
FLAP_DOWN_S = 0.3
LOSS_SCALE = 10000  # numgen's modulus: loss in steps of 0.01 %


def parse_loss(text: str) -> float:
    """'1', '1%', '0.5 %' -> percent in (0, 100); PlanError otherwise."""
    raw = str(text).strip().rstrip("%").strip()
    try:
        value = float(raw)
    except ValueError:
        raise PlanError(f"bad loss {text!r}: use a percentage, e.g. 1 or 0.5%") from None
    if not 0 < value < 100:
        raise PlanError(f"loss {text!r} must be above 0 and below 100 %")
    if round(value * LOSS_SCALE / 100) < 1:
        raise PlanError(f"loss {text!r} is below the smallest step, 0.01 %")
    return value


def check_flap(times: int, interval_s: float) -> None:
    if times < 1:
        raise PlanError(f"--times {times}: flap at least once")
    if not FLAP_DOWN_S < interval_s <= 600:
        raise PlanError(f"--interval {interval_s}: between {FLAP_DOWN_S} and 600 seconds")


def flap(node: Node, times: int, interval_s: float, log=None,
         set_link: Callable[[bool], None] | None = None) -> int:
    """The node's link down for :data:`FLAP_DOWN_S` and up again, ``times`` times, one flap
    every ``interval_s`` seconds; returns the flaps done (the link is up at the end).
    ``set_link(up)`` turns the link's switch end (default: the bridge's end of its veth)."""
    check_flap(times, interval_s)

    def bridge_end(is_up: bool) -> None:
        run(["ip", "link", "set", node.veth, "up" if is_up else "down"])

    turn = set_link or bridge_end
    done = 0
    try:
        for i in range(times):
            if i:
                time.sleep(interval_s - FLAP_DOWN_S)
            turn(False)
            time.sleep(FLAP_DOWN_S)
            turn(True)
            done += 1
            if log:
                log(f"{node.name}: flap {done} of {times}")
    finally:
        try:
            turn(True)
        except VClusterError:
            pass  # the flap's own error is the one to see
    return done


def _nft(*args: str, check: bool = True):
    return run(["nft", *args], check=check)


def _ensure_table() -> None:
    _nft("add", "table", "bridge", TABLE)
    _nft("add", "chain", "bridge", TABLE, CHAIN,
         "{ type filter hook forward priority 0; policy accept; }")


def _comment(node: Node, direction: str) -> str:
    return f"{node.name} {direction}"


def clear_loss(node: Node) -> None:
    """Remove the node's loss rules (nothing when there is none or no table)."""
    if shutil.which("nft") is None:
        return
    proc = _nft("-j", "-a", "list", "chain", "bridge", TABLE, CHAIN, check=False)
    if proc.returncode != 0:
        return
    for item in json.loads(proc.stdout).get("nftables", []):
        rule = item.get("rule")
        if rule and str(rule.get("comment", "")).split(" ")[0] == node.name:
            _nft("delete", "rule", "bridge", TABLE, CHAIN, "handle", str(rule["handle"]))


def set_loss(node: Node, percent: float, direction: str = BOTH) -> None:
    """Drop ``percent`` % of the node's frames in ``direction`` (replacing its earlier loss)."""
    ends = directions(direction)
    if shutil.which("nft") is None:
        raise VClusterError("nft not found: loss needs nftables (scripts/install.sh installs it)")
    _ensure_table()
    clear_loss(node)
    threshold = round(percent * LOSS_SCALE / 100)
    for one in ends:
        match = "iifname" if one == "tx" else "oifname"  # tx: from the node into the bridge
        _nft("add", "rule", "bridge", TABLE, CHAIN, match, node.veth, "numgen", "random",
             "mod", str(LOSS_SCALE), "<", str(threshold), "counter", "drop",
             "comment", f'"{_comment(node, one)}"')


def drop_table() -> None:
    """Remove every loss rule of the cluster (``vcluster down``); nothing without nft."""
    if shutil.which("nft"):
        _nft("delete", "table", "bridge", TABLE, check=False)

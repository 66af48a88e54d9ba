"""The pure checks of a fabric NIC's identity and reach (the rest of the Slingshot acceptance
notes' pre-flight list): its MAC, its fabric address, its name both ways, its LLDP neighbour
against the cabling, the management network, and its loopback line rate.

Records in, one :class:`~fabrictest.parsers.health.CheckResult` per check out, each saying what
it found and what it expected (``found X, expected Y``). Nothing here reads the node
(:mod:`fabrictest.health.stage1_gather` does); a value the node could not give fails the check
that needs it.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from fabrictest.parsers import physical
from fabrictest.parsers.health import CheckResult
from fabrictest.parsers.inventory import Inventory
from fabrictest.parsers.ip_addr import Interface
from fabrictest.parsers.lldp import LldpNeighbor, normalise_mac

#: the MAC rules a site can declare (docs/health.md)
MAC_RULES = ("slingshot-ama", "inventory")
#: Slingshot's switch ports' MACs begin 02:fe, the nodes' AMAs 02:00:00:0 (20 bits of group,
#: switch and port follow: the Slingshot host software's AMA pages)
AMA_SWITCH_PREFIX = "02:fe"
AMA_NODE_PREFIX = 0x0200000
AMA_LOW_BITS = 20


def _r(node: str, nic: str, check: str, ok: bool, detail: str) -> CheckResult:
    return CheckResult(node, nic, "-", check, ok, detail)


# ----------------------------------------------------------------------------------- MAC
def ama_from_port(port_mac: str) -> str | None:
    """The node's AMA for the switch port ``port_mac`` (``02:fe:00:00:07:ea`` ->
    ``02:00:00:00:07:ea``: the second octet becomes 00); None when the port's MAC is not a
    Slingshot one."""
    mac = normalise_mac(port_mac)
    if mac is None or not mac.startswith(AMA_SWITCH_PREFIX + ":"):
        return None
    ama = "02:00" + mac[len(AMA_SWITCH_PREFIX):]
    return ama if is_ama(ama) else None


def is_ama(mac: str | None) -> bool:
    """``02:00:00:0X:XX:XX``: Slingshot's algorithmic form (group, switch and port in the low
    20 bits)."""
    mac = normalise_mac(mac)
    return mac is not None and int(mac.replace(":", ""), 16) >> AMA_LOW_BITS == AMA_NODE_PREFIX


def ama_of(group: int, switch: int, port: int) -> str:
    """The AMA of port ``port`` (6 bits) of switch ``switch`` (5 bits) in group ``group`` (9
    bits), as the Slingshot host software's AMA page lays them out."""
    if not (0 <= group < 512 and 0 <= switch < 32 and 0 <= port < 64):
        raise ValueError(f"AMA fields out of range: group {group}, switch {switch}, port {port}")
    value = (AMA_NODE_PREFIX << AMA_LOW_BITS) | group << 11 | switch << 6 | port
    return ":".join(f"{value >> s & 0xFF:02x}" for s in range(40, -1, -8))


def check_mac(node: str, nic: str, found: str | None, rule: str,
              neighbors: list[LldpNeighbor] | None = None, lldp_problem: str | None = None,
              inventory_mac: str | None = None, inventory_where: str = "") -> CheckResult:
    """``rule``: ``slingshot-ama`` (the AMA of the switch port the NIC's LLDP neighbour
    reports) or ``inventory`` (the MAC the inventory lists)."""
    shown = normalise_mac(found) or (found if found else "no MAC")
    if rule == "inventory":
        if inventory_mac is None:
            return _r(node, nic, "mac", False,
                      f"found {shown}, expected the inventory's MAC: none listed"
                      f"{' (' + inventory_where + ')' if inventory_where else ''}")
        ok = normalise_mac(found) == normalise_mac(inventory_mac)
        return _r(node, nic, "mac", ok, f"found {shown}, expected {inventory_mac} "
                  f"(inventory{' ' + inventory_where if inventory_where else ''})")
    if rule != "slingshot-ama":
        raise ValueError(f"unknown MAC rule {rule!r} (one of {', '.join(MAC_RULES)})")
    if neighbors is None:
        return _r(node, nic, "mac", False,
                  f"found {shown}, expected the Slingshot AMA of its switch port: "
                  f"no LLDP ({lldp_problem or 'not read'})")
    ports = {n.port_mac() for n in neighbors}
    if len(ports) != 1 or None in ports:
        what = ("no LLDP neighbour" if not neighbors else
                "a neighbour without a port MAC" if None in ports else
                f"{len(ports)} neighbours ({', '.join(sorted(p for p in ports if p))})")
        return _r(node, nic, "mac", False,
                  f"found {shown}, expected the Slingshot AMA of its switch port: {what}")
    port_mac = ports.pop()
    expected = ama_from_port(port_mac)
    if expected is None:
        return _r(node, nic, "mac", False,
                  f"found {shown}, expected a Slingshot AMA: the switch port's MAC {port_mac} "
                  f"is not a Slingshot switch port's ({AMA_SWITCH_PREFIX}:...)")
    ok = normalise_mac(found) == expected
    where = neighbors[0].describe()
    return _r(node, nic, "mac", ok, f"found {shown}, expected {expected} "
              f"(Slingshot AMA of {where}, {port_mac})")


# ------------------------------------------------------------------------------- address
def check_ip(node: str, nic: str, iface: Interface | None, problem: str | None = None,
             expected_ip: str | None = None, subnet: str | None = None
             ) -> tuple[CheckResult, str | None]:
    """An address on the NIC: the inventory's (``expected_ip``), else one in the fabric's
    ``subnet``, else any global one. Returns the check and the fabric address found (for the
    name checks), None when there is none."""
    if iface is None:
        return _r(node, nic, "ip", False, f"no interface {nic}: {problem or 'not found'}"), None
    found = iface.global_addresses()
    shown = ", ".join(a.cidr for a in found) or "no address"
    if expected_ip is not None:
        hit = next((a.address for a in found
                    if ipaddress.ip_address(a.address) == ipaddress.ip_address(expected_ip)),
                   None)
        return _r(node, nic, "ip", hit is not None,
                  f"found {shown}, expected {expected_ip} (inventory)"), hit
    if subnet is not None:
        net = ipaddress.ip_network(subnet, strict=False)
        hit = next((a.address for a in found if ipaddress.ip_address(a.address) in net), None)
        return _r(node, nic, "ip", hit is not None,
                  f"found {shown}, expected an address in {net}"), hit
    hit = found[0].address if found else None
    return _r(node, nic, "ip", hit is not None, f"found {shown}, expected a global address"), hit


def _same_name(found: str, want: str) -> bool:
    """``node01`` and ``node01.cluster`` are one name (a short name against an FQDN)."""
    f, w = found.lower().rstrip("."), want.lower().rstrip(".")
    return (f == w or ("." not in w and f.split(".")[0] == w)
            or ("." not in f and w.split(".")[0] == f))


def check_names(node: str, nic: str, hostname: str, address: str | None,
                forward: list[str] | None, forward_problem: str | None,
                reverse: list[str] | None, reverse_problem: str | None,
                own: tuple[str, ...] = ()) -> list[CheckResult]:
    """The NIC's fabric name resolves to its address (``name_forward``), and to no address
    that is not the NIC's (``own``: its other addresses; a peer reached at a stray address
    reaches another host), and the address back to the name (``name_reverse``), the way the
    node resolves (hosts file or DNS)."""
    if address is None:
        return [_r(node, nic, "name_forward", False,
                   f"{hostname}: expected {nic}'s fabric address, and {nic} has none"),
                _r(node, nic, "name_reverse", False,
                   f"expected {hostname}: {nic} has no fabric address to look up")]
    out = []
    if forward is None:
        out.append(_r(node, nic, "name_forward", False,
                      f"{hostname} -> {forward_problem or 'no answer'}, expected {address}"))
    else:
        mine = {ipaddress.ip_address(a) for a in (address, *own) if _is_address(a)}
        got = [ipaddress.ip_address(a) if _is_address(a) else None for a in forward]
        stray = [a for a, ip in zip(forward, got, strict=True) if ip not in mine]
        found = ipaddress.ip_address(address) in got
        why = f" (also {', '.join(stray)}: not {nic}'s)" if found and stray else ""
        ok = found and not stray
        out.append(_r(node, nic, "name_forward", ok,
                      f"{hostname} -> {', '.join(forward) or 'nothing'}, expected "
                      f"{address}{why}"))
    if reverse is None:
        out.append(_r(node, nic, "name_reverse", False,
                      f"{address} -> {reverse_problem or 'no answer'}, expected {hostname}"))
    else:
        ok = any(_same_name(n, hostname) for n in reverse)
        out.append(_r(node, nic, "name_reverse", ok,
                      f"{address} -> {', '.join(reverse) or 'nothing'}, expected {hostname}"))
    return out


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------- LLDP
@dataclass(frozen=True)
class ExpectedNeighbor:
    switch: str
    port: str | None  # None: the topology names the switch only
    source: str  # "inventory line 3", "topology"


def expected_neighbor(node: str, nic: str, inventory: Inventory | None,
                      switch_of: dict[str, str] | None) -> ExpectedNeighbor | None:
    """Where the NIC must be cabled: the inventory's line for it, else the topology's switch
    of the node (no port); None when neither says."""
    if inventory is not None:
        entry = inventory.get(node, nic)
        if entry is not None:
            return ExpectedNeighbor(entry.switch, entry.port, f"inventory line {entry.line}")
    if switch_of and node in switch_of:
        return ExpectedNeighbor(switch_of[node], None, "topology")
    return None


def _same_switch(sysname: str | None, switch: str) -> bool:
    return bool(sysname) and _same_name(sysname, switch)


def _same_port(n: LldpNeighbor, port: str) -> bool:
    return any(name.lower() == port.lower() for name in n.port_names())


def check_lldp(node: str, nic: str, expected: ExpectedNeighbor | None,
               neighbors: list[LldpNeighbor] | None, problem: str | None = None) -> CheckResult:
    """The NIC's LLDP neighbour is the switch (and port) the cabling says."""
    if expected is None:
        return _r(node, nic, "lldp", False,
                  f"expected: nothing (no inventory line and no topology switch for {node} "
                  f"{nic}); found {_found(neighbors, problem)}")
    want = expected.switch + (f" port {expected.port}" if expected.port else "")
    want += f" ({expected.source})"
    if not neighbors:
        return _r(node, nic, "lldp", False, f"found {_found(neighbors, problem)}, expected {want}")
    distinct = list(dict.fromkeys(neighbors))
    same = {(n.sysname, tuple(n.port_names())) for n in distinct}
    if len(same) > 1:
        return _r(node, nic, "lldp", False, f"found {len(distinct)} neighbours ("
                  f"{'; '.join(n.describe() for n in distinct)}), expected {want}")
    n = distinct[0]
    ok = _same_switch(n.sysname, expected.switch) and (
        expected.port is None or _same_port(n, expected.port))
    return _r(node, nic, "lldp", ok, f"found {n.describe()}, expected {want}")


def _found(neighbors: list[LldpNeighbor] | None, problem: str | None) -> str:
    if neighbors is None:
        return f"no LLDP answer ({problem or 'not read'})"
    if not neighbors:
        return "no LLDP neighbour"
    return "; ".join(n.describe() for n in neighbors)


# ---------------------------------------------------------------------- management, rate
def check_mgmt(node: str, target: str, ok: bool, detail: str) -> CheckResult:
    return CheckResult(node, "-", "-", f"mgmt:{target}", ok, detail)


def check_loopback(node: str, nic: str, method: str, measured_gbps: float | None,
                   port_rate_gbps: float | None, fraction: float,
                   problem: str | None = None, through_nic: bool = True) -> CheckResult:
    """A same-node transfer through the NIC at ``fraction`` of its port's rate at least, and,
    ``through_nic`` (the RDMA loopback), at most the port's rate x ``physical.MARGIN`` (more
    never crossed the NIC: the transfer went through memory, or the figure is not this
    port's). TCP over the NIC's address is the kernel's loopback, which never reaches the wire
    and has no such ceiling."""
    if port_rate_gbps is None or not math.isfinite(port_rate_gbps) or port_rate_gbps <= 0:
        return _r(node, nic, "loopback", False,
                  f"expected {fraction:g} x the port's rate: the port's rate is unknown "
                  f"({problem or 'not reported'}; --port-rate GBPS says it)")
    want = fraction * port_rate_gbps
    expected = f"expected >= {want:.4g} Gb/s ({fraction:g} x {port_rate_gbps:g} Gb/s; {method})"
    if measured_gbps is None or not math.isfinite(measured_gbps) or measured_gbps < 0:
        return _r(node, nic, "loopback", False,
                  f"found no rate ({problem or 'no result'}), {expected}")
    ceiling = port_rate_gbps * physical.MARGIN
    if through_nic and measured_gbps > ceiling:
        return _r(node, nic, "loopback", False,
                  f"found {measured_gbps:.4g} Gb/s, above the port's {port_rate_gbps:g} Gb/s x "
                  f"{physical.MARGIN:g} margin = {ceiling:.4g} Gb/s: impossible through the NIC")
    return _r(node, nic, "loopback", measured_gbps >= want,
              f"found {measured_gbps:.4g} Gb/s, {expected}")


__all__ = ["AMA_SWITCH_PREFIX", "MAC_RULES", "ExpectedNeighbor", "ama_from_port", "ama_of",
           "check_ip", "check_lldp", "check_loopback", "check_mac", "check_mgmt", "check_names",
           "expected_neighbor", "is_ama"]

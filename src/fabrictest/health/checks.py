"""The pure NIC pre-flight checks: parsed records in, one :class:`CheckResult` per check out.

What a healthy port, netdev and ARP cache look like (:class:`HealthExpectations`), and the
checks that compare them, passed or not, in a fixed order. Nothing here reads the system:
:mod:`fabrictest.health.gather` does, :mod:`fabrictest.health.cli` puts the two together.
A value the source did not show fails the check that needs it: it cannot prove health.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fabrictest.parsers.health import CheckResult
from fabrictest.parsers.ibv_devinfo import PortInfo, infer_mofed_gid_kinds, normalise_link_layer

GC_KEYS = ("gc_thresh1", "gc_thresh2", "gc_thresh3")


@dataclass
class HealthExpectations:
    """What a healthy port looks like; None means "not checked" (the value is still shown).

    ``require_rocev2_gid`` None means: required on Ethernet (RoCE) ports, not on InfiniBand.
    ``min_gc_thresh`` is (gc_thresh1, gc_thresh2, gc_thresh3) minima, see
    :func:`gc_thresh_requirements` and :meth:`for_cluster`.
    """

    link_layer: str | None = None
    min_mtu: int | None = None
    min_rate_gbps: float | None = None
    require_rocev2_gid: bool | None = None
    netdev_mtu: int | None = None
    min_gc_thresh: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        self.link_layer = normalise_link_layer(self.link_layer)

    @classmethod
    def for_cluster(cls, nodes: int, nics_per_node: int = 1, **kwargs) -> HealthExpectations:
        return cls(min_gc_thresh=gc_thresh_requirements(nodes, nics_per_node), **kwargs)


def gc_thresh_requirements(nodes: int, nics_per_node: int = 1) -> tuple[int, int, int]:
    """ARP cache minima for ``nodes`` nodes with ``nics_per_node`` NICs each.

    HPE's CSM "ARP cache tuning" guide (Slingshot systems): ``gc_thresh1 = nodes x NICs^2``,
    ``gc_thresh2 = 1.5 x gc_thresh1``, ``gc_thresh3 = 2 x gc_thresh2``. Linux defaults
    (128/512/1024) pass for small clusters.
    """
    if nodes < 1 or nics_per_node < 1:
        raise ValueError("nodes and nics_per_node must be >= 1")
    t1 = nodes * nics_per_node**2
    t2 = math.ceil(1.5 * t1)
    return t1, t2, 2 * t2


def _result(node: str, port: PortInfo, check: str, ok: bool, detail: str) -> CheckResult:
    return CheckResult(node, port.device or "?", str(port.port), check, ok, detail)


def _at_least(value, shown: str, minimum, minimum_shown: str) -> tuple[bool, str]:
    """A figure against its expected minimum: missing fails only when a minimum is set."""
    if value is None:
        return minimum is None, "not reported"
    if minimum is None:
        return True, f"{shown} (no minimum set)"
    ok = value >= minimum
    return ok, f"{shown} {'>=' if ok else '<'} {minimum_shown}"


def evaluate_port(port: PortInfo, expect: HealthExpectations, node: str = "-") -> list[CheckResult]:
    """Every port check, passed or not, in a fixed order."""
    out = [
        _result(
            node, port, "port_state", port.state == "PORT_ACTIVE", str(port.state or "not reported")
        ),
    ]
    if port.phys_state is None:
        out.append(
            _result(node, port, "phys_state", False, "not reported (use ibv_devinfo -v or sysfs)")
        )
    else:
        out.append(_result(node, port, "phys_state", port.phys_state == "LINK_UP", port.phys_state))
    layer = port.link_layer or "not reported"
    if expect.link_layer is None:
        out.append(_result(node, port, "link_layer", port.link_layer is not None, layer))
    else:
        ok = port.link_layer == expect.link_layer
        out.append(_result(node, port, "link_layer", ok, f"{layer} (expected {expect.link_layer})"))
    mtu_ok, mtu_detail = _at_least(
        port.active_mtu, str(port.active_mtu), expect.min_mtu, str(expect.min_mtu)
    )
    out.append(_result(node, port, "active_mtu", mtu_ok, mtu_detail))
    rate = f"{port.rate_gbps:g} Gb/s" if port.rate_gbps is not None else ""
    if port.active_width and port.active_speed_gbps:
        rate += f" ({port.active_width}X {port.active_speed_gbps:g})"
    min_rate = expect.min_rate_gbps
    rate_ok, rate_detail = _at_least(
        port.rate_gbps, rate, min_rate, f"{min_rate:g} Gb/s" if min_rate is not None else ""
    )
    out.append(_result(node, port, "rate", rate_ok, rate_detail))
    require = expect.require_rocev2_gid
    if require is None:
        require = port.link_layer == "Ethernet"
    if require:
        out.append(_rocev2_check(node, port))
    return out


def _rocev2_check(node: str, port: PortInfo) -> CheckResult:
    v2 = port.rocev2_gids()
    if v2:
        return _result(node, port, "rocev2_gid", True, f"index {v2[0].index} {v2[0].gid}")
    if not port.gids:
        return _result(
            node, port, "rocev2_gid", False, "no GID in this output (use ibv_devinfo -v or sysfs)"
        )
    if all(g.kind is None for g in port.gids):
        inferred = [g for g in infer_mofed_gid_kinds(port) if g.kind == "RoCE v2"]
        if inferred:
            g = inferred[0]
            return _result(
                node,
                port,
                "rocev2_gid",
                True,
                f"index {g.index} {g.gid} (type inferred: MOFED v1/v2 GID pairs)",
            )
        return _result(
            node, port, "rocev2_gid", False, f"{len(port.gids)} GIDs, types not reported"
        )
    return _result(node, port, "rocev2_gid", False, f"{len(port.gids)} GIDs, none RoCE v2")


def evaluate_netdev(
    name: str | None,
    operstate: str | None,
    mtu: int | None,
    expect: HealthExpectations,
    node: str = "-",
    device: str = "-",
    port: str = "-",
) -> list[CheckResult]:
    if name is None:
        return [
            CheckResult(node, device, port, "netdev_state", False, "no netdev found for this port")
        ]
    state = (operstate or "unknown").upper()
    out = [CheckResult(node, device, port, "netdev_state", state == "UP", f"{name} {state}")]
    if mtu is None:
        ok, text = expect.netdev_mtu is None, f"{name} mtu not reported"
    elif expect.netdev_mtu is None:
        ok, text = True, f"{name} mtu {mtu} (no expectation set)"
    else:
        ok = mtu == expect.netdev_mtu
        text = f"{name} mtu {mtu} {'==' if ok else '!='} {expect.netdev_mtu}"
    out.append(CheckResult(node, device, port, "netdev_mtu", ok, text))
    return out


def evaluate_arp_thresholds(
    values: Mapping[str, int | str | None],
    nodes: int | None,
    nics_per_node: int = 1,
    node: str = "-",
    minima: tuple[int, int, int] | None = None,
) -> list[CheckResult]:
    """``values``: gc_thresh1..3 (keys may be the full sysctl names) -> value."""
    norm: dict[str, int | None] = {}
    for key, value in values.items():
        short = key.rsplit(".", 1)[-1]
        try:
            norm[short] = int(value) if value is not None else None
        except (TypeError, ValueError):
            norm[short] = None
    if minima is None and nodes is not None:
        minima = gc_thresh_requirements(nodes, nics_per_node)
    out = []
    for i, key in enumerate(GC_KEYS):
        value = norm.get(key)
        if value is None:
            out.append(CheckResult(node, "-", "-", key, False, "not readable"))
        elif minima is None:
            out.append(
                CheckResult(
                    node, "-", "-", key, True, f"{value} (cluster size unknown: use --nodes)"
                )
            )
        else:
            ok = value >= minima[i]
            out.append(
                CheckResult(
                    node,
                    "-",
                    "-",
                    key,
                    ok,
                    f"{value} {'>=' if ok else '<'} {minima[i]} (nodes={nodes}, nics={nics_per_node})"
                    if nodes is not None
                    else f"{value} {'>=' if ok else '<'} {minima[i]}",
                )
            )
    got = [norm.get(k) for k in GC_KEYS]
    if all(v is not None for v in got):
        ordered = got[0] <= got[1] <= got[2]
        out.append(
            CheckResult(
                node, "-", "-", "gc_thresh_order", ordered, " <= ".join(str(v) for v in got)
            )
        )
    return out


def unreachable_pairs(
    ping_matrix: Mapping, nodes: Iterable[str] | None = None
) -> list[tuple[str, str]]:
    """Ordered (source, target) pairs that did not reach each other, sorted.

    ``ping_matrix`` is ``{(a, b): bool}`` or ``{a: {b: bool}}`` (True: a reached b). With
    ``nodes``, every ordered pair of distinct nodes must be present and True: a pair never
    tried counts as unreachable. Self-pairs are ignored.
    """
    flat: dict[tuple[str, str], bool] = {}
    for key, value in ping_matrix.items():
        if isinstance(key, tuple):
            flat[(str(key[0]), str(key[1]))] = bool(value)
        else:
            for target, ok in value.items():
                flat[(str(key), str(target))] = bool(ok)
    bad = {pair for pair, ok in flat.items() if not ok and pair[0] != pair[1]}
    if nodes is not None:
        names = list(dict.fromkeys(str(n) for n in nodes))
        for a in names:
            for b in names:
                if a != b and not flat.get((a, b), False):
                    bad.add((a, b))
    return sorted(bad)

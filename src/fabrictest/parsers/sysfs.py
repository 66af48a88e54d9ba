"""RDMA port attributes as sysfs writes them (``/sys/class/infiniband/<dev>/ports/<n>/...``).

Pure: these functions turn the texts of sysfs files into typed records; reading the files is
:mod:`fabrictest.sysinfo`'s job (the one place that reads ``/sys/class/infiniband`` and
``/sys/class/net``). A missing or unreadable file is passed as None and leaves its field None
(the kernel answers EINVAL for an empty GID slot's type).

=========================  ===========================================================
``state``                  ``4: ACTIVE`` -> ``PORT_ACTIVE``
``phys_state``             ``5: LinkUp`` -> ``LINK_UP``
``link_layer``             ``InfiniBand`` | ``Ethernet``
``rate``                   ``100 Gb/sec (4X EDR)`` -> rate 100, width 4, lane 25
``lid``, ``sm_lid``        ``0x16`` -> 22
``gids/<i>``               the GID; all-zero slots are skipped
``gid_attrs/types/<i>``    ``RoCE v2`` | ``IB/RoCE v1``
``gid_attrs/ndevs/<i>``    the netdev of a RoCE GID
=========================  ===========================================================

The netdev of a port is the one its GIDs name, otherwise the only entry of
``<dev>/device/net/`` (IPoIB). sysfs has no active MTU for a port: for RoCE it is derived
from the netdev's MTU as the kernel does (``iboe_get_mtu``: the largest IB MTU not above the
netdev MTU minus 96 bytes of RoCE headers); for InfiniBand it stays None.
"""

from __future__ import annotations

import re

from .ibv_devinfo import (
    GidEntry,
    PortInfo,
    gid_kind,
    normalise_link_layer,
    normalise_phys_state,
    normalise_state,
)

_IB_MTUS = (4096, 2048, 1024, 512, 256)
_ROCE_HEADERS = 40 + 8 + 12 + 4 + 28 + 4  # GRH + UDP + BTH + XRC ext + AtomicETH + ICRC


def roce_active_mtu(netdev_mtu: int) -> int | None:
    """The RoCE active MTU the kernel derives from a netdev MTU (1500 -> 1024, 9000 -> 4096)."""
    room = netdev_mtu - _ROCE_HEADERS
    for mtu in _IB_MTUS:
        if room >= mtu:
            return mtu
    return None


def parse_rate(text: str | None) -> tuple[float | None, int | None, float | None]:
    """``100 Gb/sec (4X EDR)`` -> (100.0, 4, 25.0)."""
    if not text:
        return None, None, None
    m = re.match(r"\s*([\d.]+)\s*Gb/sec(?:\s*\((\d+)X[^)]*\))?", text)
    if m is None:
        return None, None, None
    rate = float(m.group(1))
    width = int(m.group(2)) if m.group(2) else None
    return rate, width, (rate / width if width else None)


def parse_int(text: str | None) -> int | None:
    """``0x16`` -> 22, ``1500`` -> 1500; None for a missing or malformed file."""
    if text is None:
        return None
    try:
        return int(text.strip(), 0)
    except ValueError:
        return None


def parse_port(device: str, port: int, files: dict[str, str | None]) -> PortInfo:
    """A port from the texts of its files (keys: state, phys_state, link_layer, rate, lid,
    sm_lid); GIDs, netdev and MTU are added by :func:`add_gids` and :func:`add_netdev`."""
    rate, width, lane = parse_rate(files.get("rate"))
    return PortInfo(
        port=port,
        device=device,
        state=normalise_state(files.get("state")),
        phys_state=normalise_phys_state(files.get("phys_state")),
        link_layer=normalise_link_layer(files.get("link_layer")),
        rate_gbps=rate,
        active_width=width,
        active_speed_gbps=lane,
        lid=parse_int(files.get("lid")),
        sm_lid=parse_int(files.get("sm_lid")),
    )


def parse_gid(
    index: int, gid: str | None, gid_type: str | None, ndev: str | None, link_layer: str | None
) -> GidEntry | None:
    """One GID slot (``gids/<i>``, ``gid_attrs/types/<i>``, ``gid_attrs/ndevs/<i>``); None
    for an empty (all-zero) or missing slot."""
    if not gid or set(gid.replace(":", "")) <= {"0"}:
        return None
    return GidEntry(index, gid, gid_kind(gid_type, link_layer), ndev or None)


def add_gids(info: PortInfo, gids: list[GidEntry], device_netdevs: list[str]) -> None:
    """Attach GIDs and the port's netdev: the one its GIDs name, else the only one under
    ``<dev>/device/net/`` (IPoIB)."""
    info.gids = list(gids)
    named = [g.netdev for g in gids if g.netdev]
    if named:
        info.netdev = named[0]
    elif len(device_netdevs) == 1:
        info.netdev = device_netdevs[0]


def add_netdev_mtu(info: PortInfo, netdev_mtu: int | None) -> None:
    """RoCE ports: the active MTU the kernel derives from the netdev's MTU."""
    if info.link_layer == "Ethernet" and netdev_mtu is not None:
        info.active_mtu = roce_active_mtu(netdev_mtu)

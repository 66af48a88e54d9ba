"""RDMA ports read from sysfs (``/sys/class/infiniband/<dev>/ports/<n>/...``).

Files read (a missing or unreadable file leaves its field None; the kernel answers EINVAL
for an empty GID slot's type):

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
from pathlib import Path

from .ibv_devinfo import (
    GidEntry,
    HcaInfo,
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


def infiniband_dir(root: Path | str = "/sys") -> Path:
    """``root`` may be the sysfs mount (``/sys``) or ``.../class/infiniband`` itself."""
    root = Path(root)
    candidate = root / "class" / "infiniband"
    return candidate if candidate.is_dir() or not root.name == "infiniband" else root


def _net_dir(root: Path) -> Path:
    root = Path(root)
    if root.name == "infiniband":
        return root.parent / "net"
    return root / "class" / "net"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _parse_rate(text: str | None) -> tuple[float | None, int | None, float | None]:
    """``100 Gb/sec (4X EDR)`` -> (100.0, 4, 25.0)."""
    if not text:
        return None, None, None
    m = re.match(r"\s*([\d.]+)\s*Gb/sec(?:\s*\((\d+)X[^)]*\))?", text)
    if m is None:
        return None, None, None
    rate = float(m.group(1))
    width = int(m.group(2)) if m.group(2) else None
    return rate, width, (rate / width if width else None)


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def list_ports(root: Path | str = "/sys") -> list[tuple[str, int]]:
    """Every (device, port) under ``class/infiniband``; empty when there is none."""
    base = infiniband_dir(root)
    out: list[tuple[str, int]] = []
    if not base.is_dir():
        return out
    for dev in sorted(p.name for p in base.iterdir()):
        ports = base / dev / "ports"
        if not ports.is_dir():
            continue
        for port in sorted(ports.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else 0):
            if port.name.isdigit():
                out.append((dev, int(port.name)))
    return out


def read_port_from_sysfs(root: Path | str, device: str, port: int) -> PortInfo:
    """One port's state, link, rate, GIDs (with types) and netdev from a sysfs tree."""
    base = infiniband_dir(root)
    pdir = base / device / "ports" / str(port)
    if not pdir.is_dir():
        raise FileNotFoundError(f"{pdir}: no such RDMA port")
    link_layer = normalise_link_layer(_read(pdir / "link_layer"))
    rate, width, lane = _parse_rate(_read(pdir / "rate"))
    info = PortInfo(
        port=port,
        device=device,
        state=normalise_state(_read(pdir / "state")),
        phys_state=normalise_phys_state(_read(pdir / "phys_state")),
        link_layer=link_layer,
        rate_gbps=rate,
        active_width=width,
        active_speed_gbps=lane,
        lid=_int(_read(pdir / "lid")),
        sm_lid=_int(_read(pdir / "sm_lid")),
    )
    gids_dir = pdir / "gids"
    netdevs: list[str] = []
    if gids_dir.is_dir():
        for entry in sorted(
            gids_dir.iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else -1
        ):
            if not entry.name.isdigit():
                continue
            gid = _read(entry)
            if not gid or set(gid.replace(":", "")) <= {"0"}:
                continue
            kind = gid_kind(_read(pdir / "gid_attrs" / "types" / entry.name), link_layer)
            ndev = _read(pdir / "gid_attrs" / "ndevs" / entry.name) or None
            if ndev:
                netdevs.append(ndev)
            info.gids.append(GidEntry(int(entry.name), gid, kind, ndev))
    if netdevs:
        info.netdev = netdevs[0]
    else:
        net = base / device / "device" / "net"
        names = sorted(p.name for p in net.iterdir()) if net.is_dir() else []
        if len(names) == 1:
            info.netdev = names[0]
    if link_layer == "Ethernet" and info.netdev:
        mtu = _int(_read(_net_dir(Path(root)) / info.netdev / "mtu"))
        if mtu is not None:
            info.active_mtu = roce_active_mtu(mtu)
    return info


def read_hcas_from_sysfs(root: Path | str = "/sys") -> list[HcaInfo]:
    """Every RDMA device and port under ``root`` (empty list when there is none)."""
    base = infiniband_dir(root)
    hcas: dict[str, HcaInfo] = {}
    for dev, port in list_ports(root):
        hca = hcas.get(dev)
        if hca is None:
            hca = HcaInfo(
                name=dev,
                fw_ver=_read(base / dev / "fw_ver"),
                node_guid=_read(base / dev / "node_guid"),
                board_id=_read(base / dev / "board_id"),
            )
            hcas[dev] = hca
        hca.ports.append(read_port_from_sysfs(root, dev, port))
    return list(hcas.values())

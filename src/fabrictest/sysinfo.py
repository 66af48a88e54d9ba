"""The one place that reads the host's RDMA and network facts from sysfs.

``/sys/class/infiniband`` (RDMA devices, ports, GID tables) and ``/sys/class/net`` (netdev
state and MTU) are read here and nowhere else; turning the file texts into records is
:mod:`fabrictest.parsers.sysfs`'s (pure) job. ``root`` is the sysfs mount (``/sys``) or, for
the RDMA functions, ``.../class/infiniband`` itself, so that tests pass a fake tree.
"""

from __future__ import annotations

from pathlib import Path

from .parsers.ibv_devinfo import GidEntry, HcaInfo, PortInfo
from .parsers.sysfs import add_gids, add_netdev_mtu, parse_gid, parse_int, parse_port

SYS = Path("/sys")
_PORT_FILES = ("state", "phys_state", "link_layer", "rate", "lid", "sm_lid")


def infiniband_dir(root: Path | str = SYS) -> Path:
    """``root`` may be the sysfs mount (``/sys``) or ``.../class/infiniband`` itself."""
    root = Path(root)
    candidate = root / "class" / "infiniband"
    return candidate if candidate.is_dir() or not root.name == "infiniband" else root


def net_dir(root: Path | str = SYS) -> Path:
    root = Path(root)
    if root.name == "infiniband":
        return root.parent / "net"
    return root / "class" / "net"


def read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _by_index(names):
    return sorted((p for p in names if p.name.isdigit()), key=lambda p: int(p.name))


def list_ports(root: Path | str = SYS) -> list[tuple[str, int]]:
    """Every (device, port) under ``class/infiniband``; empty when there is none."""
    base = infiniband_dir(root)
    out: list[tuple[str, int]] = []
    if not base.is_dir():
        return out
    for dev in sorted(p.name for p in base.iterdir()):
        ports = base / dev / "ports"
        if ports.is_dir():
            out += [(dev, int(p.name)) for p in _by_index(ports.iterdir())]
    return out


def read_gids(root: Path | str, device: str, port: int, link_layer: str | None = None) -> list[GidEntry]:
    """A port's non-empty GID slots, with types and netdevs; empty when the port has none."""
    pdir = infiniband_dir(root) / device / "ports" / str(port)
    gids_dir = pdir / "gids"
    if not gids_dir.is_dir():
        return []
    if link_layer is None:
        from .parsers.ibv_devinfo import normalise_link_layer

        link_layer = normalise_link_layer(read_text(pdir / "link_layer"))
    out = []
    for entry in _by_index(gids_dir.iterdir()):
        g = parse_gid(
            int(entry.name),
            read_text(entry),
            read_text(pdir / "gid_attrs" / "types" / entry.name),
            read_text(pdir / "gid_attrs" / "ndevs" / entry.name),
            link_layer,
        )
        if g is not None:
            out.append(g)
    return out


def read_port_from_sysfs(root: Path | str, device: str, port: int) -> PortInfo:
    """One port's state, link, rate, GIDs (with types) and netdev from a sysfs tree."""
    base = infiniband_dir(root)
    pdir = base / device / "ports" / str(port)
    if not pdir.is_dir():
        raise FileNotFoundError(f"{pdir}: no such RDMA port")
    info = parse_port(device, port, {name: read_text(pdir / name) for name in _PORT_FILES})
    net = base / device / "device" / "net"
    device_netdevs = sorted(p.name for p in net.iterdir()) if net.is_dir() else []
    add_gids(info, read_gids(root, device, port, info.link_layer), device_netdevs)
    if info.netdev:
        add_netdev_mtu(info, parse_int(read_text(net_dir(root) / info.netdev / "mtu")))
    return info


def read_hcas_from_sysfs(root: Path | str = SYS) -> list[HcaInfo]:
    """Every RDMA device and port under ``root`` (empty list when there is none)."""
    base = infiniband_dir(root)
    hcas: dict[str, HcaInfo] = {}
    for dev, port in list_ports(root):
        hca = hcas.get(dev)
        if hca is None:
            hca = HcaInfo(
                name=dev,
                fw_ver=read_text(base / dev / "fw_ver"),
                node_guid=read_text(base / dev / "node_guid"),
                board_id=read_text(base / dev / "board_id"),
            )
            hcas[dev] = hca
        hca.ports.append(read_port_from_sysfs(root, dev, port))
    return list(hcas.values())


def read_netdevs(root: Path | str = SYS) -> dict[str, tuple[str | None, int | None]]:
    """netdev -> (operstate, mtu) from ``class/net``."""
    out: dict[str, tuple[str | None, int | None]] = {}
    net = net_dir(root)
    if net.is_dir():
        for d in sorted(net.iterdir()):
            mtu = read_text(d / "mtu")
            out[d.name] = (read_text(d / "operstate"), int(mtu) if mtu and mtu.isdigit() else None)
    return out


def read_netdev_speed(root: Path | str, name: str) -> int | None:
    """The netdev's link speed in Mb/s (``class/net/NAME/speed``); None when it has none (a
    link down reads -1 or fails)."""
    value = read_text(net_dir(root) / name / "speed")
    try:
        speed = int(value) if value is not None else None
    except ValueError:
        return None
    return speed if speed and speed > 0 else None

"""The GID model of the rdma method: which GID a queue pair uses.

Entries are the suite's one GidEntry (`fabrictest.parsers.ibv_devinfo`: index, gid, kind
"RoCE v2" / "RoCE v1" / None, netdev), read from sysfs by `fabrictest.sysinfo` or, where sysfs
has no such device, asked of the provider (pyverbs' query_gid / query_gid_type).
"""

from __future__ import annotations

import ipaddress

from fabrictest.parsers.ibv_devinfo import GidEntry, gid_kind
from fabrictest.sysinfo import SYS, read_gids
from fabrictest.txrx.errors import Unavailable

from .verbs import E


def canonical_gid(text: str) -> str:
    """Eight 4-digit groups, as pyverbs' GID() and sysfs write them."""
    return ipaddress.IPv6Address(text.strip()).exploded


def _addr(e: GidEntry) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(e.gid.strip())


def is_zero(e: GidEntry) -> bool:
    return _addr(e) == ipaddress.IPv6Address("::")


def is_roce_v2(e: GidEntry) -> bool:
    return e.kind == "RoCE v2"


def is_ipv4_mapped(e: GidEntry) -> bool:
    return _addr(e).ipv4_mapped is not None


def is_link_local(e: GidEntry) -> bool:
    return _addr(e).is_link_local


def kind_of_type(value, link_layer: str = "ethernet") -> str | None:
    """A GID type as pyverbs gives it (an int) or sysfs writes it (text) -> GidEntry.kind."""
    if not isinstance(value, str):
        value = {E("IBV_GID_TYPE_ROCE_V1"): "RoCE v1",
                 E("IBV_GID_TYPE_ROCE_V2"): "RoCE v2"}.get(int(value), "IB")  # fmt: skip
    return gid_kind(value, "InfiniBand" if link_layer == "infiniband" else "Ethernet")


def select_gid(
    entries: list[GidEntry], override: int | None = None, link_layer: str = "ethernet",
    where: str = "the port",
) -> GidEntry:  # fmt: skip
    """The GID to use: `override` if given, else a RoCE v2 GID (IPv4-mapped first, then global
    IPv6, then link-local); on InfiniBand, index 0. Raises Unavailable with the reason."""
    valid = [e for e in entries if not is_zero(e)]
    if override is not None:
        for e in valid:
            if e.index == override:
                return e
        raise Unavailable(f"--gid-index {override} is empty or missing on {where}")
    if link_layer == "infiniband":
        for e in valid:
            if e.index == 0:
                return e
        if valid:
            return min(valid, key=lambda e: e.index)
        raise Unavailable(f"no GID on {where}")
    v2 = [e for e in valid if is_roce_v2(e)]
    if not v2:
        raise Unavailable(
            f"no RoCE v2 GID on {where} (is an IP address configured on its netdev?); "
            "pass --gid-index to use another"
        )
    return min(v2, key=lambda e: (not is_ipv4_mapped(e), is_link_local(e), e.index))


def port_gids(ctx, device: str, port: int, pattr, link_layer: str, root=SYS):
    """The port's GID table: sysfs where the kernel has the device, else the provider's."""
    entries = read_gids(root, device, port)
    if entries:
        return entries
    out = []
    for i in range(int(getattr(pattr, "gid_tbl_len", 0) or 0)):
        try:
            gid = ctx.query_gid(port, i).gid
            kind = kind_of_type(ctx.query_gid_type(port, i), link_layer)
        except Exception:
            continue
        out.append(GidEntry(i, canonical_gid(gid), kind))
    return out

"""Simulated device-bound objects: device list, Context (ports, GID table), PD, MR.

One device, `simverbs0`, with one active RoCE port (Ethernet link layer, active MTU 4096)
whose GID table is the one a ConnectX port with an IPv4 address shows: link-local RoCE v1
and v2 at 0 and 1, the host's IPv4-mapped address as RoCE v1 and v2 at 2 and 3, empty slots
after. Memory regions are shared-memory segments keyed by their rkey (= lkey), so that a
remote queue pair's writes can land in them; a registry maps keys to this process's regions.
"""

from __future__ import annotations

import hashlib
import ipaddress
import platform
import socket

from pyverbs.addr import GID
from pyverbs.pyverbs_error import PyverbsRDMAError, PyverbsUserError

from . import config, shm
from .enums import (
    GID_TYPE_ROCE_V1,
    GID_TYPE_ROCE_V2,
    LINK_LAYER_ETHERNET,
    LOCAL_WRITE,
    MTU_4096,
    PORT_ACTIVE,
    REMOTE_WRITE,
)

DEVICE_NAME = "simverbs0"
GID_TABLE_LEN = 8
EINVAL, ENOMEM = 22, 12
LOCAL_MRS: dict = {}  # key -> MR of this process


class Device:
    """An entry of get_device_list()."""

    def __init__(self, name: bytes):
        self.name = name


def get_device_list() -> list[Device]:
    return [Device(DEVICE_NAME.encode())]


def host_ipv4() -> str:
    try:
        addr = socket.gethostbyname(socket.gethostname())
    except OSError:
        addr = "127.0.0.1"
    return addr


def gid_table(hostname: str | None = None, ipv4: str | None = None) -> list[tuple[str, int]]:
    """(GID, gid type) per slot; empty slots are ("0000:...", -1)."""
    hostname = hostname or socket.gethostname()
    iid = hashlib.sha256(hostname.encode()).digest()[:8]
    link_local = ipaddress.IPv6Address(b"\xfe\x80" + b"\0" * 6 + iid).exploded
    mapped = ipaddress.IPv6Address(f"::ffff:{ipv4 or host_ipv4()}").exploded
    zero = ipaddress.IPv6Address("::").exploded
    table = [(link_local, GID_TYPE_ROCE_V1), (link_local, GID_TYPE_ROCE_V2),
             (mapped, GID_TYPE_ROCE_V1), (mapped, GID_TYPE_ROCE_V2)]  # fmt: skip
    return table + [(zero, -1)] * (GID_TABLE_LEN - len(table))


class PortAttr:
    """The attributes of pyverbs' PortAttr that a port query fills in here."""

    def __init__(self):
        self.state = PORT_ACTIVE
        self.phys_state = 5  # LinkUp
        self.link_layer = LINK_LAYER_ETHERNET
        self.active_mtu = MTU_4096
        self.max_mtu = MTU_4096
        self.lid = 0
        self.sm_lid = 0
        self.gid_tbl_len = GID_TABLE_LEN
        self.max_msg_sz = 1 << 31
        self.active_width = 2  # 4X
        self.active_speed = 32  # 25 Gb/s per lane: a 100 Gb/s port


class DeviceAttr:
    """The attributes of pyverbs' DeviceAttr that a device query fills in here."""

    def __init__(self):
        self.max_qp_wr = 32768
        self.max_cqe = 4194303
        self.max_sge = 30
        self.max_qp = 262144
        self.max_cq = 16777216
        self.max_mr = 16777216
        self.max_pd = 16777216
        self.phys_port_cnt = 1
        self.vendor_id = 0
        self.fw_version = "simulated"


class Context:
    """An opened simulated device (`Context(name='simverbs0')`)."""

    def __init__(self, **kwargs):
        name = kwargs.get("name")
        if not name:
            raise PyverbsUserError("Device name must be provided")
        if name != DEVICE_NAME:
            raise PyverbsRDMAError(f"Failed to find device {name}")
        if platform.machine() not in ("x86_64", "AMD64"):
            raise PyverbsUserError(
                f"the simulated verbs provider relies on x86-64 memory ordering; this host is "
                f"{platform.machine()}"
            )
        self.name = name
        self._directory = config.directory()
        self._wire = config.wire()
        self._faults = config.faults()
        self._gids = gid_table()
        shm.sweep_stale(self._directory)

    def query_port(self, port_num):
        if port_num != 1:
            raise PyverbsRDMAError(f"Failed to query port {port_num}", EINVAL)
        return PortAttr()

    def query_device(self):
        return DeviceAttr()

    def _slot(self, port_num, index):
        if port_num != 1 or not 0 <= index < GID_TABLE_LEN:
            raise PyverbsRDMAError("Failed to query gid", EINVAL)
        return self._gids[index]

    def query_gid(self, port_num, index):
        return GID(self._slot(port_num, index)[0])

    def query_gid_type(self, port_num, index):
        kind = self._slot(port_num, index)[1]
        if kind < 0:
            raise PyverbsRDMAError("Failed to query gid type", EINVAL)
        return kind

    def _gid_list(self) -> list[str]:
        return sorted({g for g, t in self._gids if t >= 0})

    def close(self):
        pass


class PD:
    def __init__(self, creator, **kwargs):
        if not isinstance(creator, Context):
            raise PyverbsUserError(f"Cannot create PD from {type(creator)}")
        self._ctx = creator

    def close(self):
        pass


class MR:
    """A registered buffer in shared memory: `buf` is its address in this process."""

    def __init__(self, creator, length=None, access=None, address=None, implicit=False, **kwargs):
        if not isinstance(creator, PD):
            raise PyverbsUserError(f"Cannot create MR from {type(creator)}")
        if address is not None or implicit or kwargs:
            raise PyverbsUserError("the simulated provider registers only buffers it allocates")
        access = int(access or 0)
        if length is None or length <= 0 or (access & REMOTE_WRITE and not access & LOCAL_WRITE):
            raise PyverbsRDMAError("Failed to register a MR", EINVAL)  # as ibv_reg_mr does
        self._pd = creator
        self._access = access
        self.length = int(length)
        key, self._seg = shm.create(creator._ctx._directory, "mr", self.length, 0x100, 0xFFFFFFFF)
        self._seg.header[shm.FIRST_FREE_WORD] = self.length
        self.lkey = self.rkey = key
        self.buf = self._seg.address
        self._data = self._seg.data[: self.length]
        LOCAL_MRS[key] = self

    def write(self, data, length, offset=0):
        self._data[offset : offset + length] = memoryview(data)[:length]

    def read(self, length, offset):
        return self._data[offset : offset + length].tobytes()

    def close(self):
        if self._seg is not None:
            LOCAL_MRS.pop(self.lkey, None)
            self._data = None
            self._seg.close()
            self._seg = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def check_local(pd, sges) -> tuple[int, int, int] | None:
    """(lkey, offset, length) of a send's one scatter-gather entry, or None when the lkey is
    not a region of this PD or the bytes fall outside it (a local protection error)."""
    addr, length, lkey = sges[0]
    mr = LOCAL_MRS.get(lkey)
    if mr is None or mr._pd is not pd:
        return None
    off = addr - mr.buf
    if off < 0 or off + length > mr.length:
        return None
    return lkey, off, length

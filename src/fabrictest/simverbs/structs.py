"""Read pyverbs' own work requests the way a verbs provider does: as C structs.

pyverbs' SendWR and RecvWR wrap `struct ibv_send_wr` / `struct ibv_recv_wr`; `ibv_post_send`
hands the provider a pointer to the first one, and the provider follows `next` and reads each
`sg_list`. The simulated provider does the same with ctypes, so it sees exactly what a NIC
driver would see (a chain pyverbs did not link, an immediate in the wrong byte order, a wrong
remote address), not what Python attributes claim. Where the struct sits inside the Python
object is found once, by building a request with known values and looking for them. Pointers
are followed through one memoryview over the process's address space (x86-64 user space is
below 2**47), twice as fast as a ctypes copy per struct.

    struct ibv_send_wr { u64 wr_id; ibv_send_wr *next; ibv_sge *sg_list; int num_sge;
                         int opcode; u32 send_flags; u32 imm_data;
                         union { struct { u64 remote_addr; u32 rkey; } rdma; ... } wr; ... }
    struct ibv_recv_wr { u64 wr_id; ibv_recv_wr *next; ibv_sge *sg_list; int num_sge; }
    struct ibv_sge     { u64 addr; u32 length; u32 lkey; }
"""

from __future__ import annotations

import ctypes
import struct

SEND = struct.Struct("<QQQiiIIQI")  # up to wr.rdma.rkey: 52 bytes
RECV = struct.Struct("<QQQi")
SGE = struct.Struct("<QII")
_MAGIC = 0x5EED_F00D_CAFE_D00D
MEMORY = memoryview((ctypes.c_ubyte * (1 << 47)).from_address(0)).cast("B")


class LayoutError(RuntimeError):
    """pyverbs' objects do not hold the verbs structs where this provider looks for them."""


def _find(obj, expect) -> int:
    size = type(obj).__basicsize__
    raw = ctypes.string_at(id(obj), size)
    needle = _MAGIC.to_bytes(8, "little")
    at = raw.find(needle)
    while at >= 0:
        if at % 8 == 0 and expect(at):
            return at
        at = raw.find(needle, at + 1)
    raise LayoutError(f"{type(obj).__name__}: its verbs struct was not found in the object")


def _layout():
    from pyverbs.wr import SGE as PySGE
    from pyverbs.wr import RecvWR, SendWR

    sge = PySGE(0x1000, 24, 0x55)
    tail = SendWR(wr_id=2, opcode=1, num_sge=1, sg=[sge])
    wr = SendWR(wr_id=_MAGIC, opcode=1, num_sge=1, sg=[sge], imm_data=0x01020304, send_flags=2)
    wr.set_wr_rdma(0x77, 0x1234_5678)
    wr.next_wr = tail

    def send_ok(at):
        f = SEND.unpack(ctypes.string_at(id(wr) + at, SEND.size))
        return (f[3], f[4], f[5], f[6], f[7], f[8]) == (1, 1, 2, 0x01020304, 0x1234_5678, 0x77)

    send_at = _find(wr, send_ok)
    first = SEND.unpack(ctypes.string_at(id(wr) + send_at, SEND.size))
    if first[1] != id(tail) + send_at or SGE.unpack(ctypes.string_at(first[2], SGE.size)) != (
        0x1000, 24, 0x55,
    ):  # fmt: skip
        raise LayoutError("SendWR: next or sg_list do not point where pyverbs set them")
    rwr = RecvWR(wr_id=_MAGIC, num_sge=1, sg=[sge])

    def recv_ok(at):
        return RECV.unpack(ctypes.string_at(id(rwr) + at, RECV.size))[3] == 1

    recv_at = _find(rwr, recv_ok)
    return send_at, recv_at


_offsets: tuple[int, int] | None = None


def offsets() -> tuple[int, int]:
    """(offset of ibv_send_wr in a SendWR, offset of ibv_recv_wr in a RecvWR)."""
    global _offsets
    if _offsets is None:
        _offsets = _layout()
    return _offsets


def send_chain(wr, limit: int) -> list[tuple]:
    """The chain starting at SendWR `wr`, at most `limit` + 1 requests, each as
    (wr_id, opcode, send_flags, imm_data, sges, remote_addr, rkey); sges as (addr, len, lkey)."""
    ptr = id(wr) + offsets()[0]
    out = []
    unpack, sge, mem = SEND.unpack_from, SGE.unpack_from, MEMORY
    while ptr and len(out) <= limit:
        wr_id, nxt, sg, nsge, opcode, flags, imm, raddr, rkey = unpack(mem, ptr)
        if nsge == 1 and sg:
            sges = (sge(mem, sg),)
        else:
            sges = tuple(sge(mem, sg + 16 * i) for i in range(nsge)) if sg else ()
        out.append((wr_id, opcode, flags, imm, sges, raddr, rkey))
        ptr = nxt
    return out


def recv_chain(wr, limit: int) -> list[tuple]:
    """The chain starting at RecvWR `wr` (at most `limit` + 1), each as (wr_id, sges)."""
    ptr = id(wr) + offsets()[1]
    out = []
    while ptr and len(out) <= limit:
        wr_id, nxt, sg, nsge = RECV.unpack_from(MEMORY, ptr)
        sges = tuple(SGE.unpack_from(MEMORY, sg + 16 * i) for i in range(nsge)) if sg else ()
        out.append((wr_id, sges))
        ptr = nxt
    return out

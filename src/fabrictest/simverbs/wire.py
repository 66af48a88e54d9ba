"""The simulated wire: one inbound ring of descriptors per queue pair, in shared memory.

A queue pair owns the ring packets for it arrive on (segment kind "qp", keyed by its QP
number). Its one connected sender appends descriptors and publishes `head`; the receiving QP
processes them when its completion queue is polled (its "NIC" runs then), lands the payload
in the addressed memory region, writes an RC status back into the descriptor and publishes
`tail`. The sender completes its work requests in order up to `tail`, so a send completion
means the write was handled by the receiver (an ack for RC; for UC the moment the packet
left a link that can hold `RING` of them).

Descriptor: 8 words: psn, opcode | flags, immediate (as posted: network order), length,
source region key, source offset, remote address, rkey | status << 32.
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import time

import numpy as np

from . import shm

RING = 1024  # descriptors a link holds (in flight between two queue pairs)
WORDS = 8
H_CAP, H_HEAD, H_TAIL, H_SRC, H_NGID, H_GIDS = 3, 4, 5, 6, 7, 8
MAX_GIDS = 4
F_DROPPED, F_CORRUPT = 1 << 8, 1 << 9
OPCODE_MASK = 0xFF
D_RKEY_STATUS = 7


def gid_words(gid: str) -> tuple[int, int]:
    b = ipaddress.IPv6Address(gid).packed
    return int.from_bytes(b[:8], "big"), int.from_bytes(b[8:], "big")


class Inbound:
    """The ring a queue pair receives on (created with the QP)."""

    def __init__(self, directory: str, gids: list[str]):
        self.qpn, self.seg = shm.create(directory, "qp", RING * WORDS * 8, 0x10, 0xFFFFFF)
        h = self.seg.header
        h[H_CAP] = RING
        for i, gid in enumerate(gids[:MAX_GIDS]):
            h[H_GIDS + 2 * i], h[H_GIDS + 2 * i + 1] = gid_words(gid)
        h[H_NGID] = min(len(gids), MAX_GIDS)
        self.ring = self.seg.data.view(np.uint64).reshape(RING, WORDS)
        self.tail = 0

    def source(self) -> int:
        return int(self.seg.header[H_SRC])

    def pending(self) -> int:
        return int(self.seg.header[H_HEAD]) - self.tail

    def rows(self, n: int) -> list[list[int]]:
        """The next `n` descriptors (not consumed)."""
        a = self.tail % RING
        b = a + n
        if b <= RING:
            return self.ring[a:b].tolist()
        return self.ring[a:].tolist() + self.ring[: b - RING].tolist()

    def set_status(self, index: int, rkey: int, status: int) -> None:
        self.ring[index % RING, D_RKEY_STATUS] = (status << 32) | rkey

    def consume(self, n: int) -> None:
        self.tail += n
        self.seg.header[H_TAIL] = self.tail

    def reset(self) -> None:
        """Back to RESET: forget what arrived (the sender's ring indices go on)."""
        self.tail = int(self.seg.header[H_HEAD])
        self.seg.header[H_TAIL] = self.tail

    def close(self) -> None:
        self.seg.close()


class Link:
    """A sender's end: the remote QP's ring, attached at the first transmit after RTS."""

    def __init__(self, directory: str, src_qpn: int, dest_qpn: int, dgid: str | None):
        self.seg = shm.attach(directory, "qp", dest_qpn)
        self.reason = None
        self.head = 0
        self.last_tail = 0
        self.stuck_since = None
        if self.seg is None:
            self.reason = f"no queue pair {dest_qpn:#x} on the fabric"
            return
        h = self.seg.header
        gids = [(int(h[H_GIDS + 2 * i]), int(h[H_GIDS + 2 * i + 1])) for i in range(int(h[H_NGID]))]
        if dgid is not None and gid_words(dgid) not in gids:
            self.reason = f"queue pair {dest_qpn:#x} is not behind GID {dgid}"
            return
        with open(self.seg.path, "rb") as f:  # claim the ring: one sender per connected QP
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                if int(h[H_SRC]) == 0:
                    h[H_SRC] = src_qpn
                    self.head = int(h[H_HEAD])
                elif int(h[H_SRC]) != src_qpn:
                    self.reason = f"queue pair {dest_qpn:#x} is connected to another queue pair"
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
        if self.reason is None:
            self.ring = self.seg.data.view(np.uint64).reshape(RING, WORDS)
            self.last_tail = int(h[H_TAIL])

    @property
    def up(self) -> bool:
        return self.reason is None

    def tail(self) -> int:
        return int(self.seg.header[H_TAIL])

    def room(self) -> int:
        return RING - (self.head - self.tail())

    def write(self, rows: list[tuple]) -> None:
        """Append descriptors and publish them (after they are written)."""
        n = len(rows)
        a = self.head % RING
        block = np.array(rows, dtype=np.uint64)
        if a + n <= RING:
            self.ring[a : a + n] = block
        else:
            k = RING - a
            self.ring[a:] = block[:k]
            self.ring[: n - k] = block[k:]
        self.head += n
        self.seg.header[H_HEAD] = self.head

    def status(self, index: int) -> int:
        return int(self.ring[index % RING, D_RKEY_STATUS]) >> 32

    def peer_dead(self, now: float) -> bool:
        """True once the receiving process has gone (checked after 1 s without progress)."""
        tail = self.tail()
        if tail != self.last_tail:
            self.last_tail, self.stuck_since = tail, None
            return False
        if self.stuck_since is None:
            self.stuck_since = now
            return False
        if now - self.stuck_since < 1.0:
            return False
        self.stuck_since = now
        return not shm.alive(int(self.seg.header[shm.H_PID]))


REMOTE_MRS: dict[int, shm.Segment | None] = {}


def source_bytes(directory: str, key: int, offset: int, length: int):
    """The bytes a remote sender's region holds (for landing), or None if it is gone."""
    seg = REMOTE_MRS.get(key)
    if seg is None:
        from .device import LOCAL_MRS

        if key in LOCAL_MRS:  # both ends in this process (unit tests)
            return LOCAL_MRS[key]._data[offset : offset + length]
        seg = shm.attach(directory, "mr", key)
        if seg is None:
            return None
        REMOTE_MRS[key] = seg
    if offset + length > seg.size:
        return None
    return seg.data[offset : offset + length]


def now() -> float:
    return time.monotonic()


def pid() -> int:
    return os.getpid()

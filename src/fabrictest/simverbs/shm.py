"""Shared-memory segments: files in one directory, mapped by every process that uses them.

A segment is a header page of 64-bit words followed by its data. Memory regions and queue
pairs' inbound rings are segments, named by their key (an MR's rkey, a QP's number); keys are
drawn at random and claimed with O_EXCL, so processes on one host (or on vcluster nodes, which
share /dev/shm) never reuse one another's. Word 1 of the header holds the owner's pid: a
segment whose owner died is removed by the next process that opens the simulated device.

Ordering: a writer fills a descriptor, then publishes it by storing an index (8-byte aligned
stores of 64-bit words); the reader reads the index, then the descriptor. x86-64 keeps stores
in order and loads in order (TSO), which is all this needs; the provider refuses other
architectures instead of adding fences.
"""

from __future__ import annotations

import atexit
import ctypes
import mmap
import os
import random

import numpy as np

PAGE = 4096
PREFIX = "fabrictest-simverbs"
MAGIC = 0x5349_4D56_4552_4253  # "SIMVERBS"
H_MAGIC, H_PID, H_PIDNS = 0, 1, 2  # header words common to every segment
FIRST_FREE_WORD = 3
_OWNED: set[str] = set()  # paths this process created: removed at exit


@atexit.register
def _remove_owned() -> None:
    for path in list(_OWNED):
        try:
            os.unlink(path)
        except OSError:
            pass
    _OWNED.clear()


def pid_namespace() -> int:
    """Inode of this process's pid namespace: pids are only compared within one."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


class Segment:
    """A mapped segment: `header` (uint64 words), `data` (uint8), `address` of the data."""

    def __init__(self, path: str, fd: int, size: int):
        self.path = path
        self.map = mmap.mmap(fd, PAGE + size)
        os.close(fd)
        self.header = np.frombuffer(self.map, dtype=np.uint64, count=PAGE // 8)
        self.data = np.frombuffer(self.map, dtype=np.uint8, count=size, offset=PAGE)
        self.address = self.data.ctypes.data
        self.size = size
        self.owned = False

    def close(self) -> None:
        if self.owned:
            self.header[H_MAGIC] = 0
            try:
                os.unlink(self.path)
            except OSError:
                pass
            _OWNED.discard(self.path)
            self.owned = False
        self.header = self.data = None
        try:
            self.map.close()
        except (BufferError, ValueError):
            pass  # a view of the data is still alive: the mapping goes with the process


def path_of(directory: str, kind: str, key: int) -> str:
    return os.path.join(directory, f"{PREFIX}-{kind}-{key:08x}")


def create(directory: str, kind: str, size: int, low: int, high: int) -> tuple[int, Segment]:
    """A new segment of `size` data bytes under a fresh key in [low, high]."""
    size = max(PAGE, -(-size // PAGE) * PAGE)
    for _ in range(1000):
        key = random.randint(low, high)
        path = path_of(directory, kind, key)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        except FileExistsError:
            continue
        try:
            os.ftruncate(fd, PAGE + size)
        except OSError:
            os.close(fd)
            os.unlink(path)
            raise
        seg = Segment(path, fd, size)
        seg.owned = True
        _OWNED.add(path)
        seg.header[H_PID] = os.getpid()
        seg.header[H_PIDNS] = pid_namespace()
        seg.header[H_MAGIC] = MAGIC
        return key, seg
    raise OSError(f"no free {kind} key in {directory} after 1000 tries")


def attach(directory: str, kind: str, key: int) -> Segment | None:
    """Another process's segment, or None when it does not exist (or is being removed)."""
    path = path_of(directory, kind, key)
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    size = os.fstat(fd).st_size - PAGE
    if size <= 0:
        os.close(fd)
        return None
    seg = Segment(path, fd, size)
    if int(seg.header[H_MAGIC]) != MAGIC:
        seg.close()
        return None
    return seg


def alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not yet written: being created
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(directory: str) -> int:
    """Remove segments whose owner process is gone (a rank that was killed); returns how many."""
    removed = 0
    mine = pid_namespace()
    try:
        names = [n for n in os.listdir(directory) if n.startswith(PREFIX + "-")]
    except OSError:
        return 0
    for name in names:
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as f:
                head = f.read(24)
        except OSError:
            continue
        if len(head) < 24:
            continue
        pid = int.from_bytes(head[8:16], "little")
        if int.from_bytes(head[16:24], "little") == mine and not alive(pid):
            try:
                os.unlink(path)
                removed += 1
            except OSError:
                pass
    return removed


def address_of(array: np.ndarray) -> int:
    return int(array.ctypes.data)


def read_bytes(address: int, n: int) -> bytes:
    return ctypes.string_at(address, n)

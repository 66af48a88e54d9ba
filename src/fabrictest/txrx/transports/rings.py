"""Rings of persistent requests for the mpi method, compiled or through mpi4py, one interface.

A ring holds one persistent request per slot (`Send_init`/`Recv_init`, created once) and is
started and completed in blocks: `start(first, n)`, `test(first, n)`, `wait(first, n,
seconds)` (spin until the block completed or `seconds` passed), `cancel(first, n, seconds)`,
`free()`; `wait_any([(ring, first, n), ...], seconds)` waits for the first of several blocks
(a receiver's streams). `scan` reads a block's sequence numbers in place and `corrupt` checks
its payloads (`--test ones|increment`).

The compiled implementation (`fabrictest.txrx._loop`, C, built with the MPI compiler wrapper)
spins inside MPI_Testall in C, where the MPI library makes progress and does its copies; the
mpi4py one spins in Python. Which one runs: the compiled one when it imports and was built
against the MPI library mpi4py runs on (linked to it, and compiled with an mpi.h of the same
handle ABI) (`FABRICTEST_TXRX_LOOP=python` asks for the mpi4py one,
for comparison and tests), always the mpi4py one with `--buffer cuda` (headers in device
memory are read through CuPy). docs/txrx.md says why (measured in bench/bench_txrx.py).
"""

from __future__ import annotations

import os
import time

import numpy as np

ENV = "FABRICTEST_TXRX_LOOP"
SPINS_PER_CLOCK = 64  # turns of a Python spin between two looks at the clock
CHECK_MODES = {"ones": 1, "increment": 2}


def choose(MPI, buffer: str) -> tuple[str, str]:
    """('compiled' or 'python', why) for this rank; a bad FABRICTEST_TXRX_LOOP is ValueError."""
    asked = os.environ.get(ENV, "").strip()
    if asked not in ("", "compiled", "python"):
        raise ValueError(f"{ENV}={asked!r}: use compiled, python or leave it unset")
    if asked == "python":
        return "python", f"{ENV}=python"
    if buffer != "host":
        return "python", "--buffer cuda: headers and payloads are in device memory"
    try:
        from fabrictest.txrx import _loop
    except ImportError as err:
        return "python", f"the compiled loop fabrictest.txrx._loop is not built ({err})"
    built, running = _loop.library_version().strip(), MPI.Get_library_version().strip()
    if built.splitlines()[:1] != running.splitlines()[:1]:
        return "python", (f"the compiled loop was built against {built.splitlines()[0]!r} but "
                          f"mpi4py runs {running.splitlines()[0]!r}")
    header = _loop.header_mpi() if hasattr(_loop, "header_mpi") else "unknown"
    if header_abi(header) != library_abi(running):
        return "python", (f"the compiled loop was compiled with the mpi.h of {header} but is "
                          f"linked to {running.splitlines()[0]!r} (rebuild it with that MPI's "
                          "mpicc: MPICC=... pip install -e .)")
    return "compiled", "fabrictest.txrx._loop"


def header_abi(header: str) -> str | None:
    """The handle ABI of the mpi.h the compiled loop was built with (None: not known)."""
    family = header.split(" ", 1)[0]
    return {"Open": "openmpi", "MPICH": "mpich"}.get(family)


def library_abi(version: str) -> str:
    """The handle ABI of a running MPI library, from MPI_Get_library_version(): Open MPI's
    (handles are pointers) or the MPICH family's (integers: MPICH, Cray MPICH, Intel MPI)."""
    return "openmpi" if version.lstrip().startswith("Open MPI") else "mpich"


def address(array) -> int:
    """The address of a numpy (or CuPy) array's first element."""
    data = getattr(array, "data", None)
    ptr = getattr(data, "ptr", None)  # CuPy
    return int(ptr) if ptr is not None else int(array.ctypes.data)


class PyRing:
    """The mpi4py implementation (`views`: one buffer per slot)."""

    def __init__(self, comm, views, peer: int, tag: int, send: bool):
        from mpi4py import MPI

        make = comm.Send_init if send else comm.Recv_init
        self.reqs = [make(v, peer, tag) for v in views]
        self._startall, self._testall = MPI.Prequest.Startall, MPI.Request.Testall
        self._blocks: dict[tuple[int, int], list] = {}

    def block(self, first: int, n: int) -> list:
        key = (first, n)
        got = self._blocks.get(key)
        if got is None:
            got = self._blocks[key] = self.reqs[first : first + n]
        return got

    def start(self, first: int, n: int) -> None:
        if n:
            self._startall(self.block(first, n))

    def test(self, first: int, n: int) -> bool:
        return not n or self._testall(self.block(first, n))

    def wait(self, first: int, n: int, seconds: float) -> bool:
        block, testall = self.block(first, n), self._testall
        if not n or testall(block):
            return True
        until = time.monotonic() + seconds
        spins = 0
        while not testall(block):
            spins += 1
            if spins % SPINS_PER_CLOCK == 0 and time.monotonic() > until:
                return False
        return True

    def cancel(self, first: int, n: int, seconds: float) -> bool:
        for r in self.reqs[first : first + n]:
            r.Cancel()
        return self.wait(first, n, seconds)

    def free(self) -> None:
        for r in self.reqs:
            try:
                r.Free()
            except Exception:
                pass
        self.reqs, self._blocks = [], {}


def py_wait_any(blocks: list, seconds: float) -> int:
    """The mpi4py implementation of `wait_any`."""
    if not blocks:
        return -1
    until = time.monotonic() + seconds
    spins = 0
    while True:
        for i, (ring, first, n) in enumerate(blocks):
            if n and ring.test(first, n):
                return i
        spins += 1
        if spins % SPINS_PER_CLOCK == 0 and time.monotonic() > until:
            return -1


class Rings:
    """Make rings and wait on them with the chosen implementation."""

    def __init__(self, kind: str):
        self.kind = kind
        if kind == "compiled":
            from fabrictest.txrx import _loop

            self._loop = _loop
            self.wait_any = _loop.wait_any
        else:
            self._loop = None
            self.wait_any = py_wait_any

    def ring(self, comm, array, peer: int, tag: int, send: bool):
        """A ring over `array` (slots, msg_size): one persistent request per row."""
        if self._loop is None:
            return PyRing(comm, list(array), peer, tag, send)
        slots, size = array.shape
        return self._loop.Ring(comm.py2f(), address(array), slots, size, peer, tag, send)

    def scan(self, rows, after: int, limit: int):
        """(first, last, gaps) of the sequence numbers of a block's `rows` (n, words) when they
        rise strictly within (after, limit), else None: the accounting's array path (always,
        with the mpi4py implementation) sorts them out."""
        if self._loop is None:
            return None
        return self._loop.scan(address(rows), rows.strides[0], rows.shape[0], after, limit)

    def corrupt(self, rows, test: str, host, xp=np) -> int:
        """Messages of a block's `rows` whose payload is not what `--test` wrote (`host`: the
        buffer's copy-to-host, for the headers)."""
        from fabrictest.txrx import ring

        if self._loop is not None:
            n, words = rows.shape
            return self._loop.corrupt(address(rows), words * 8, n, CHECK_MODES[test])
        return ring.count_corrupt(rows, host(rows[:, 0]), test, xp)

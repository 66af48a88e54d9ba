"""The mpi method's two loops, compiled (fabrictest.txrx._loop) and mpi4py: the same counts on
the same faults, the compiled scan and checks against the array code they replace, waits that
return after their time, and the choice between the loops (issue 34)."""

from __future__ import annotations

import json
import os
import re
import sys

import numpy as np
import pytest

from fabrictest.txrx import (
    _loop,  # built by setup.py: its absence is a failure, not a skip
    ring,
)
from fabrictest.txrx.stats import GapCounter
from fabrictest.txrx.transports import rings

TOOL = [sys.executable, "-m", "fabrictest.txrx"]


def ring_of(seqs, words=4) -> np.ndarray:
    rows = np.zeros((len(seqs), words), dtype=np.uint64)
    rows[:, 0] = np.asarray(seqs, dtype=np.uint64)
    return rows


@pytest.mark.parametrize("seqs, after, expect", [
    ([5, 6, 7, 8], 4, (5, 8, 0)),
    ([5, 7, 8, 12], -1, (5, 12, 2)),  # two runs missing inside: 6, then 9-11
    ([5, 6, 6, 7], -1, None),  # a repeat
    ([5, 7, 6, 8], -1, None),  # reordered
    ([5, 6, 7], 5, None),  # not above what came before
    ([5, 6, 100], -1, None),  # at the limit (100)
    ([2**63 + 1, 2**63 + 2], -1, None),  # a corrupt header beyond int64
])
def test_compiled_scan_takes_only_what_the_array_path_would_take_whole(seqs, after, expect):
    rows = ring_of(seqs)
    got = rings.Rings("compiled").scan(rows, after, 100)
    assert got == expect
    if expect is not None:  # the same counts as the array path
        a, b = GapCounter(100), GapCounter(100)
        a.last = b.last = after
        a.add_run(*expect[:2], len(seqs), expect[2])
        b.add(rows[:, 0])
        assert a.finish(100) == b.finish(100)


def test_compiled_scan_reads_a_strided_header_column_of_a_ring():
    ring_words = np.zeros((64, 8192), dtype=np.uint64)  # 64 KiB messages
    ring_words[:, 0] = np.arange(1000, 1064, dtype=np.uint64)
    assert rings.Rings("compiled").scan(ring_words[32:64], 999, 2000) == (1032, 1063, 0)


@pytest.mark.parametrize("test", ["ones", "increment"])
def test_compiled_and_array_checks_count_the_same_corrupt_messages(test):
    rows = np.zeros((16, 512), dtype=np.uint64)  # 4 KiB messages
    seqs = np.arange(300, 316)
    if test == "ones":
        ring.fill_ones(rows)
    ring.fill_messages(rows, seqs, test)
    compiled, python = rings.Rings("compiled"), rings.Rings("python")
    assert compiled.corrupt(rows, test, lambda x: x) == python.corrupt(rows, test, lambda x: x) == 0
    for i, word in ((3, 1), (7, 511), (7, 200), (12, 44)):  # first, last, a middle word
        rows[i].view(np.uint8)[word * 8 + 5] ^= 0x10
    assert compiled.corrupt(rows, test, lambda x: x) == python.corrupt(rows, test, lambda x: x) == 3


def test_the_loop_is_chosen_and_a_bad_choice_refused(monkeypatch):
    class Mpi:
        @staticmethod
        def Get_library_version():
            return _loop.library_version()

    monkeypatch.delenv(rings.ENV, raising=False)
    assert rings.choose(Mpi, "host") == ("compiled", "fabrictest.txrx._loop")
    assert rings.choose(Mpi, "cuda")[0] == "python"
    monkeypatch.setenv(rings.ENV, "python")
    assert rings.choose(Mpi, "host") == ("python", f"{rings.ENV}=python")
    monkeypatch.setenv(rings.ENV, "fast")
    with pytest.raises(ValueError, match="FABRICTEST_TXRX_LOOP='fast'"):
        rings.choose(Mpi, "host")
    monkeypatch.delenv(rings.ENV)
    Mpi.Get_library_version = staticmethod(lambda: "MPICH Version: 4.0\n")
    kind, why = rings.choose(Mpi, "host")
    assert kind == "python" and "built against" in why and "MPICH" in why



def test_a_loop_compiled_with_another_mpis_header_is_not_used(monkeypatch):
    """MPICH's mpi.h linked to Open MPI's libmpi (setuptools' -L/usr/lib/... ahead of MPICH's
    wrapper path) passed the library check and crashed in MPI_Send_init: the header counts."""
    import types

    class Mpi:
        @staticmethod
        def Get_library_version():
            return "Open MPI v4.1.4, package: Debian OpenMPI\n"

    fake = types.SimpleNamespace(library_version=Mpi.Get_library_version,
                                 header_mpi=lambda: "MPICH 5.0.2")
    monkeypatch.delenv(rings.ENV, raising=False)
    monkeypatch.setitem(sys.modules, "fabrictest.txrx._loop", fake)
    monkeypatch.setattr(sys.modules["fabrictest.txrx"], "_loop", fake)
    kind, why = rings.choose(Mpi, "host")
    assert kind == "python" and "mpi.h of MPICH 5.0.2" in why and "Open MPI v4.1.4" in why
    fake.header_mpi = lambda: "Open MPI 4.1"
    assert rings.choose(Mpi, "host")[0] == "compiled"
    fake.header_mpi = lambda: "unknown"
    assert rings.choose(Mpi, "host")[0] == "python"
    # the MPICH family shares one handle ABI: Cray MPICH, Intel MPI run an MPICH-built loop
    fake.header_mpi = lambda: "MPICH 3.4a2"
    for lib in ("MPICH Version:      5.0.2\n", "MPI VERSION    : CRAY MPICH version 8.1.28\n",
                "Intel(R) MPI Library 2021.6 for Linux* OS\n"):
        fake.library_version = lambda lib=lib: lib
        Mpi.Get_library_version = staticmethod(fake.library_version)
        assert rings.choose(Mpi, "host")[0] == "compiled", lib


def test_the_built_loop_names_the_header_it_was_compiled_with():
    assert rings.header_abi(_loop.header_mpi()) == rings.library_abi(_loop.library_version())

WAITS = r"""
import time, numpy as np
from mpi4py import MPI
from fabrictest.txrx.transports.rings import Rings
comm = MPI.COMM_SELF
for kind in ("compiled", "python"):
    r = Rings(kind)
    src, dst = np.arange(4 * 64, dtype=np.uint8).reshape(4, 64), np.zeros((4, 64), np.uint8)
    rx, tx = r.ring(comm, dst, 0, 7, False), r.ring(comm, src, 0, 7, True)
    rx.start(0, 4)
    t = time.monotonic()
    late = (rx.wait(0, 4, 0.05), r.wait_any([(rx, 0, 4)], 0.05))
    took = time.monotonic() - t
    tx.start(0, 2)
    done = (tx.wait(0, 2, 5.0), rx.wait(0, 2, 5.0), r.wait_any([(rx, 2, 2), (rx, 0, 2)], 5.0))
    same = bool((dst[:2] == src[:2]).all())
    cancelled = rx.cancel(2, 2, 5.0)
    rx.free(); tx.free()
    print(kind, late, 0.09 < took < 2, done, same, cancelled)
"""


@pytest.mark.mpi
def test_waits_return_after_their_time_and_blocks_complete_in_both_loops(mpirun):
    p = mpirun(1, [sys.executable, "-c", WAITS], timeout=60, check=True)
    assert p.stdout.splitlines() == [
        f"{kind} (False, -1) True (True, True, 1) True True" for kind in ("compiled", "python")
    ], p.stdout + p.stderr


COUNTS = re.compile(r"^INFO:__main__:Rank 0 receiver from transmitter (\d), message "
                    r"(missed|received|corrupt) is (\d+)$", re.M)


@pytest.mark.mpi
@pytest.mark.parametrize("loop", ["compiled", "python"])
def test_both_loops_count_loss_and_corruption_alike(mpirun, tmp_path, loop):
    # transmitter 1 (rank 2) flips a byte of every 100th message; both skip 5 % of their numbers
    js = tmp_path / "r.json"
    args = ["--method", "mpi", "--nrx", "1", "--nlink", "2", "--msg-size", "4096",
            "--num-blks", "4", "--num-cmsgs", "16", "--nmsg", "2000", "--test", "increment",
            "--inject-loss", "0.05", "--seed", "3", "--fault", "corrupt:2:100", "--json", str(js)]
    p = mpirun(3, [*TOOL, *args], timeout=90, env={**os.environ, rings.ENV: loop})
    assert p.returncode == 3, p.stderr
    got = {(int(k), what): int(v) for k, what, v in COUNTS.findall(p.stdout)}
    skipped = ring.skipped_seqs(2000, 0.05, 3, 1)
    spoiled = sum(1 for s in range(0, 2000, 100) if s not in set(skipped.tolist()))
    assert got == {(0, "missed"): 100, (0, "received"): 1900, (0, "corrupt"): 0,
                   (1, "missed"): 100, (1, "received"): 1900, (1, "corrupt"): spoiled}, p.stdout
    doc = json.loads(js.read_text())
    assert [r["loop"] for r in doc["ranks"]] == [loop] * 3
    assert "ran the mpi4py loop" not in p.stderr  # asked for: no warning

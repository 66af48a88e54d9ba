"""Collective benchmarks (OSU's ``osu_allreduce``, ``osu_alltoall``, ``osu_bcast`` ...; IMB's
Allreduce, Alltoall, Bcast, Allgather): OSU's size series, and the least time a collective's
figure can be. Pure; :mod:`osu` and :mod:`imb` read with it.

OSU's sizes. A collective doubles its message size from its datatype's size, never from less:
``# Datatype: MPI_CHAR.`` (7.x's default) from 1 B, ``MPI_INT``/``MPI_FLOAT`` (7.5's
``osu_allreduce``, ``-T mpi_float``) from 4 B; where the output names no datatype (5.x) the
reductions use ``MPI_FLOAT`` (4 B, so 5.x's ``osu_allreduce`` starts at 4) and the others bytes.
The largest by default (no ``-m``) is 1 MiB. ``osu_barrier`` moves no payload: it prints one
figure under ``# Avg Latency(us)`` and no size. (IMB's series: :func:`imb.expected_sizes`.)

What a figure can be. A collective between nodes moves bytes over their links, and a link
carries at most its line rate: the time of an operation of ``size`` bytes (OSU's size, IMB's
``#bytes``: per rank, per block for all-to-all and allgather) is at least ``LINK_SHARE[op] x
size`` bytes through one node's link. The shares are the least any algorithm needs with two
nodes of one rank each (more nodes or ranks only add): a broadcast leaves the root whole (1),
an allgather or all-to-all brings every node the others' blocks (1), an allreduce or
reduce-scatter needs half of each vector across (1/2). A figure below that bound (divided by
the margin of :mod:`physical`) is a run's no more than a bandwidth above the line rate is: a
latency x 10^-3 at 1 MiB, a figure of another unit.
"""

from __future__ import annotations

import re

from . import physical
from ._util import human_bytes

#: the largest message size OSU's collectives run without ``-m``: 1 MiB
DEFAULT_MAX_SIZE = 1 << 20
#: the blocking collectives the suite runs, and the others OSU has (non-blocking: ``i``)
COLLECTIVES = ("allreduce", "alltoall", "allgather", "bcast", "reduce_scatter", "barrier",
               "reduce", "gather", "scatter", "allgatherv", "alltoallv", "alltoallw",
               "gatherv", "scatterv", "reduce_scatter_block")
#: the reductions: MPI_FLOAT where the output names no datatype (5.x)
REDUCTIONS = ("allreduce", "reduce", "reduce_scatter", "reduce_scatter_block")
#: collectives that print one figure and no size
SIZELESS = ("barrier", "ibarrier")
#: bytes of each datatype OSU names in ``# Datatype: ...``
ELEMENT_BYTES = {"MPI_CHAR": 1, "MPI_SIGNED_CHAR": 1, "MPI_UNSIGNED_CHAR": 1, "MPI_BYTE": 1,
                 "MPI_SHORT": 2, "MPI_INT": 4, "MPI_FLOAT": 4, "MPI_DOUBLE": 8, "MPI_LONG": 8}
#: bytes through one node's link per byte of size, at the least (see the module docstring)
LINK_SHARE = {"bcast": 1.0, "allgather": 1.0, "alltoall": 1.0, "allreduce": 0.5,
              "reduce_scatter": 0.5}


def blocking(benchmark: str) -> str:
    """``iallreduce`` -> ``allreduce``; a name that is no non-blocking collective stays."""
    short = benchmark.removeprefix("osu_")
    return short[1:] if short.startswith("i") and short[1:] in COLLECTIVES else short


def is_collective(benchmark: str) -> bool:
    return blocking(benchmark) in COLLECTIVES


def element_size(benchmark: str, datatype: str | None) -> int:
    """The bytes of one element: the printed datatype's, else (5.x) 4 for a reduction's
    MPI_FLOAT and 1 for the others; a datatype not in :data:`ELEMENT_BYTES` counts as 1 (its
    sizes are then checked from the first printed)."""
    if datatype:
        return ELEMENT_BYTES.get(re.sub(r"[.\s]+$", "", datatype).upper(), 1)
    return 4 if blocking(benchmark) in REDUCTIONS else 1


def first_size(benchmark: str, datatype: str | None, requested: int) -> int:
    """The first size a collective prints when asked to start at ``requested``: no less than
    one element (``-m 1:`` of an ``MPI_INT`` allreduce starts at 4 B)."""
    return max(requested, element_size(benchmark, datatype))


def faster_than_links(benchmark: str, rows: list[tuple[int, float]], line_rate_gbps: float,
                      label: str, what: str = "line rate") -> list[str]:
    """One line per latency (us) of ``rows`` (size, us) below the least time its bytes take
    through a link of ``line_rate_gbps`` (x the margin of :mod:`physical`); empty for the
    collectives without a share (barrier, the ``v`` and ``w`` variants) and where all fit."""
    share = LINK_SHARE.get(blocking(benchmark))
    if share is None or line_rate_gbps <= 0:
        return []
    problems = []
    for size, us in rows:
        least = share * size * 8 / (line_rate_gbps * physical.MARGIN * 1e3)  # us
        if size and us < least:
            problems.append(f"{label} at {human_bytes(size)}: {us:g} us is less than "
                            f"{share:g} x {human_bytes(size)} takes at {line_rate_gbps:g} Gb/s "
                            f"{what} x {physical.MARGIN:g} margin ({least:.4g} us): impossible")
    return problems

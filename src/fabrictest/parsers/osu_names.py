"""How OSU names its benchmarks, columns and units in its titles and headers (5.x and 7.x):
``# OSU MPI_Get Bandwidth Test`` is ``get_bw``, ``# OSU MPI-CUDA Bi-Directional Bandwidth Test``
``bibw`` on CUDA, ``Avg Latency(us)`` a latency in us. Pure; :mod:`osu` reads with it."""

from __future__ import annotations

import re

_ACCELERATORS = {"CUDA", "ROCM", "OPENACC", "HIP", "SYCL"}
_ONE_SIDED = {
    "get": "get",
    "put": "put",
    "accumulate": "acc",
    "get_accumulate": "get_acc",
    "fetch_and_op": "fop",
    "compare_and_swap": "cas",
}
_NAMES = {
    "latency": "latency",
    "bandwidth": "bw",
    "bi-directional bandwidth": "bibw",
    "bidirectional bandwidth": "bibw",
    "multiple bandwidth / message rate": "mbw_mr",
    "multi latency": "multi_lat",
    "multi-threaded latency": "latency_mt",
    "multi-process latency": "latency_mp",
    "latency multi-process": "latency_mp",
}


def benchmark_name(api: str | None, name: str) -> tuple[str, str | None]:
    accelerator = None
    op = None
    if api and api.startswith("MPI") and len(api) > 3:
        suffix = api[4:]
        if api[3] == "-" and suffix.upper() in _ACCELERATORS:
            accelerator = suffix.upper()
        elif api[3] == "_":
            op = suffix.lower()
    key = re.sub(r"\s+", " ", name.strip().lower())
    if op is not None:
        short = _ONE_SIDED.get(op, op)
        base = _NAMES.get(key, re.sub(r"[^a-z0-9]+", "_", key).strip("_"))
        return f"{short}_{base}", accelerator
    if key in _NAMES:
        return _NAMES[key], accelerator
    collective = collective_name(key)
    if collective:
        return collective, accelerator
    return re.sub(r"[^a-z0-9]+", "_", key).strip("_") or "unknown", accelerator


def collective_name(key: str) -> str | None:
    """The program's name without ``osu_`` for a collective's title (lower case, without the
    API and version): ``allreduce latency`` -> ``allreduce``, ``all-to-all personalized
    exchange latency`` -> ``alltoall`` (5.x, 7.4 and 7.5 all print it so), ``broadcast
    latency`` -> ``bcast``, ``non-blocking all-to-allv personalized exchange latency`` ->
    ``ialltoallv``, ``neighborhood allgather latency`` -> ``neighbor_allgather``; None for a
    title that is no collective's."""
    m = re.fullmatch(r"(non-blocking\s+)?(neighborhood\s+)?(.+?)(?:\s+personalized exchange)?"
                     r"\s+latency", key)
    if m is None:
        return None
    op = m.group(3)
    op = "bcast" if op == "broadcast" else re.sub(r"^all-to-all", "alltoall", op)
    if not re.fullmatch(r"[a-z_]+", op):
        return None
    return ("i" if m.group(1) else "") + ("neighbor_" if m.group(2) else "") + op


def column_key(label: str) -> str:
    low = label.lower()
    m = re.match(r"p(\d+(?:\.\d+)?)\s*tail", low)
    if m:
        return "p" + m.group(1).replace(".", "_")
    for pattern, key in (
        (r"^min\b.*lat", "min_latency"),
        (r"^max\b.*lat", "max_latency"),
        (r"messages/s", "messages_per_s"),
        (r"^iterations", "iterations"),
        (r"^validation", "validation"),
        (r"^overall", "overall"),
        (r"^compute", "compute"),
        (r"^pure comm", "pure_comm"),
        (r"^overlap", "overlap"),
    ):
        if re.search(pattern, low):
            return key
    return re.sub(r"[^a-z0-9]+", "_", low).strip("_") or "col"


def unit_of(label: str) -> str:
    """The unit a column header names: ``Bandwidth (MB/s)`` -> ``MB/s``, ``Avg Latency(us)``
    -> ``us``; ``MB/s`` and ``Messages/s`` (``osu_mbw_mr``) stand alone."""
    m = re.search(r"\(([^)]*)\)", label)
    if m:
        return m.group(1).strip()
    low = label.strip().lower()
    if low == "mb/s":
        return "MB/s"
    if low == "messages/s":
        return "messages/s"
    return label.strip()


def expected_unit(benchmark: str) -> str:
    """The unit of ``benchmark``'s first column: ``MB/s`` for the bandwidth tests
    (``osu_bw``, ``osu_bibw``, ``osu_get_bw``, ``osu_mbw_mr``...), ``us`` for the others."""
    short = benchmark.removeprefix("osu_")
    return "MB/s" if short == "mbw_mr" or short.endswith(("bw", "bibw")) else "us"

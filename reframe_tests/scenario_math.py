"""The scenarios' arithmetic, pure (no ReFrame): where the ranks of a tx/rx scenario go, the
all-to-many growth check and the GPU-aware fraction. Unit-tested in tests/reframe/test_pure.py on
the users' own figures."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class TxRxLayout:
    """Where the ranks of one tx/rx scenario go: ``nodes`` nodes with ``ppn`` ranks each, ranks
    numbered round-robin over the nodes (``--rank-by node``), ``nrx`` receivers and ``nlink``
    transmitters (transmitter t -> receiver t % nrx)."""

    nodes: int
    ppn: int
    nrx: int
    nlink: int

    @property
    def num_tasks(self) -> int:
        return self.nodes * self.ppn

    def receiver_node(self, receiver_rank: int) -> int:
        """Node index of a receiver rank under round-robin ranking."""
        return receiver_rank % self.nodes


def txrx_layout(scenario: str, span: str, available_nodes: int) -> TxRxLayout:
    """The layouts of the SEREN tx/rx notes. ``span='one'``: one node, pair or triple;
    ``'many'``: as many as ``available_nodes`` allows. Raises ValueError (the skip reason) when
    it does not fit."""
    n = available_nodes
    if scenario == "same-node":
        # one tx and one rx on each node: -map-by ppr:2:node --rank-by node
        k = 1 if span == "one" else n
        need = 1 if span == "one" else 2
        if n < need:
            raise ValueError(f"{scenario}/{span} needs >= {need} nodes, partition has {n}")
        return TxRxLayout(nodes=k, ppn=2, nrx=k, nlink=k)
    if scenario == "paired":
        # rx on one node, its tx on another: ppr:1:node
        k = 1 if span == "one" else n // 2
        if n < 2 or (span == "many" and k < 2):
            need = 2 if span == "one" else 4
            raise ValueError(f"{scenario}/{span} needs >= {need} nodes, partition has {n}")
        return TxRxLayout(nodes=2 * k, ppn=1, nrx=k, nlink=k)
    if scenario == "many-to-one":
        # two tx processes into one rx process on the same node (the SEREN tx/rx notes: mpirun -c 3)
        k = 1 if span == "one" else n
        need = 1 if span == "one" else 2
        if n < need:
            raise ValueError(f"{scenario}/{span} needs >= {need} nodes, partition has {n}")
        return TxRxLayout(nodes=k, ppn=3, nrx=k, nlink=2 * k)
    if scenario == "pairs-of-three":
        # one rx node fed by two tx nodes: ppr:1:node
        k = 1 if span == "one" else n // 3
        if n < 3 or (span == "many" and k < 2):
            need = 3 if span == "one" else 6
            raise ValueError(f"{scenario}/{span} needs >= {need} nodes, partition has {n}")
        return TxRxLayout(nodes=3 * k, ppn=1, nrx=k, nlink=2 * k)
    raise ValueError(f"unknown tx/rx scenario {scenario!r}")


def iteration_growth(times: Mapping[int, float], floor_s: float = 0.0) -> float:
    """How much the time per iteration grows from the fewest to the most iterations.

    ``times`` maps iterations -> total time (s). Returns (t(n_max)/n_max) / (t(n_min)/n_min);
    both per-iteration times are first raised to ``floor_s`` (a noise floor, per iteration), so
    that a growth between two values below the floor counts as 1.
    """
    if len(times) < 2:
        raise ValueError("need timings for at least two iteration counts")
    n_min, n_max = min(times), max(times)
    lo = max(times[n_min] / n_min, floor_s)
    hi = max(times[n_max] / n_max, floor_s)
    if lo <= 0:
        return math.inf if hi > 0 else 1.0
    return hi / lo


def degrades(times: Mapping[int, float], max_growth: float, floor_s: float = 0.0) -> bool:
    """True when the time per iteration grows by more than ``max_growth`` (the all-to-many
    (Cori) notes' symptom)."""
    return iteration_growth(times, floor_s) > max_growth


def device_fraction(d2d: float, h2h: float) -> float:
    """Device-to-device bandwidth as a fraction of host-to-host."""
    if h2h <= 0:
        raise ValueError(f"host-to-host bandwidth must be positive, got {h2h}")
    return d2d / h2h


def gpu_aware_ok(d2d: float, h2h: float, min_fraction: float) -> bool:
    """The derived GPU-aware check: D-D bandwidth >= ``min_fraction`` x H-H bandwidth.
    The Crusher GPU notes' figures (10.9 vs 19.5 GB/s per rank, 0.56) fail it at the default
    0.8."""
    return device_fraction(d2d, h2h) >= min_fraction

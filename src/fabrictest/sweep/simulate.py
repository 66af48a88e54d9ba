"""The simulated runner: the same scheduler and verdict on made-up runs (tests, benchmark).

A run from a to b gives min(send capacity of a, receive capacity of b, and the factor of any
slow uplink it crosses, with a topology) x exp(N(0, sigma^2)),
independently per run; a run whose sender cannot send or whose receiver cannot receive
(`down`) times out. Vectorised: a round of 50,000 pairs takes milliseconds.

sigma is the spread of one run's log: about 0.28 is the 2-3x spread of unshaped traffic on a
small shared machine (or a fabric under production load), 0.03-0.05 a shaped, quiet link.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np

from .runners import Runner
from .runs import OK, TIMEOUT, Round, RoundRuns


class SimulatedRunner(Runner):
    name = "simulated"

    def __init__(
        self,
        nodes: Sequence[str],
        *,
        base: float = 1.0,
        sigma: float = 0.28,
        slow: Mapping[str, float | tuple[float, float]] | None = None,
        down: Mapping[str, tuple[bool, bool]] | Sequence[str] = (),
        seed: int | None = None,
        unit: str = "Gbps",
        pair_seconds: float = 0.0,
        topology=None,
        slow_uplinks: Mapping[str, float] | None = None,
        max_concurrent: int = 1 << 30,
        run_seconds: float | None = None,
    ):
        """`slow`: node -> factor (both directions) or (send factor, receive factor);
        `down`: node names (both directions) or node -> (send down, receive down);
        `max_concurrent`: the waves a cluster would run the rounds in (the cost model's,
        cost.py: a simulated round runs at once)."""
        self.max_concurrent = max(1, int(max_concurrent))
        #: a run's seconds on the cluster the plan predicts for (`--pair-seconds`; charged
        #: in the plan, never slept): else `pair_seconds`, what a simulated run sleeps
        self.run_seconds = run_seconds
        index = {n: i for i, n in enumerate(nodes)}
        self.tx = np.full(len(nodes), float(base))
        self.rx = np.full(len(nodes), float(base))
        for n, f in (slow or {}).items():
            ft, fr = (f, f) if isinstance(f, (int, float)) else f
            self.tx[index[n]] *= ft
            self.rx[index[n]] *= fr
        self.tx_down = np.zeros(len(nodes), dtype=bool)
        self.rx_down = np.zeros(len(nodes), dtype=bool)
        items = down.items() if isinstance(down, Mapping) else ((n, (True, True)) for n in down)
        for n, (dt, dr) in items:
            self.tx_down[index[n]] |= dt
            self.rx_down[index[n]] |= dr
        self.sigma = float(sigma)
        self.rng = np.random.default_rng(seed)
        self.unit = unit
        self.pair_seconds = float(pair_seconds)
        self.nodes = list(nodes)
        # per slow link: which runs cross it (a function of src, dst), and its factor
        self.uplinks: list = []
        if slow_uplinks:
            self.add_slow_uplinks(topology, slow_uplinks)

    def add_slow_uplinks(self, topology, factors: Mapping[str, float]) -> None:
        """Runs crossing each switch's uplink (to its parent), or each link or bundle named
        as the sweep names it (`s0<->s4`), at most at its factor."""
        from .link_runs import crossing

        for name, f in factors.items():
            self.uplinks.append((crossing(topology, self.nodes, name), float(f)))

    def run_round(self, rnd: Round) -> RoundRuns:
        if self.pair_seconds > 0 and len(rnd):
            time.sleep(2 * self.pair_seconds)  # both directions, one after the other
        s2, d2 = rnd.second()
        src = np.concatenate([rnd.a, s2]).astype(np.int64)
        dst = np.concatenate([rnd.b, d2]).astype(np.int64)
        cap = np.minimum(self.tx[src], self.rx[dst])
        for crosses, f in self.uplinks:  # a run crossing a slow link runs at most at its rate
            cap = np.where(crosses(src, dst), np.minimum(cap, f), cap)
        value = cap * np.exp(
            self.rng.normal(0.0, self.sigma, size=src.size))
        down = self.tx_down[src] | self.rx_down[dst]
        status = np.where(down, TIMEOUT, OK).astype(np.int8)
        value[down] = np.nan
        seconds = np.full(src.size, self.pair_seconds)
        details = {int(i): "simulated link down" for i in np.flatnonzero(down)}
        return RoundRuns(src, dst, status, value, seconds, details)

    def pair_duration(self) -> float | None:
        return self.pair_seconds if self.run_seconds is None else self.run_seconds

    def describe(self) -> str:
        return f"simulation (sigma {self.sigma:g})"

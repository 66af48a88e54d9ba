"""The sweep's decision parameters, in one place (estimate.py and level.py read them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VerdictParams:
    min_drop: float = 0.25  # a side is named only when at least this fraction below the level
    fdr: float = 0.01  # false discovery rate over all node-directions and all looks
    z_clear: float = 1.5  # margin (standard errors) to clear a side against the design drop
    #: a direction `clear_gap` below the cut (0.70x at the default 0.75x) clears by chance less
    #: often than `clear_alpha` over all looks, where the round budget resolves the cut:
    #: z_clear alone let a true 0.70x with 2 runs at sigma 0.1 clear 1 time in 125 (issue
    #: 41); the 0.75-0.85x band gets more runs instead
    clear_gap: float = 0.05
    clear_alpha: float = 1e-4
    z_power: float = 1.3  # the design drop is resolved with this many standard errors to spare
    z_explain: float = 3.0  # a partner explains a low run when this far below on its own
    z_shown: float = 3.0  # ... unless one of its runs is this far above the cut
    min_runs: int = 2  # clean runs before a side is named slow
    sigma_floor: float = 0.03  # never trust a spread below 3%
    sigma_small: float = 0.1  # spread assumed when fewer than `min_clean` runs are clean
    min_clean: int = 8
    z_out: float = 3.0  # a side this many standard errors below is left out of the level
    max_left_out: float = 0.25  # at most this share of the node-directions left out of it

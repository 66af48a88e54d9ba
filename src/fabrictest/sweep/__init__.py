"""Node-pair sweeps that isolate slow or unreachable nodes in a few rounds.

    nodes.resolve(...)       -> the node set (hostlist expression, partition, allocation)
    schedule.screening_rounds, confirmation_round -> disjoint pairs per round
    runners.SlurmRunner / LocalRunner / SimulatedRunner -> figures per pair
    verdict.estimate_level, screening_candidates, decide -> suspects with evidence
    core.run_sweep           -> all of it; output.render -> the text report
"""

from .core import SweepResult, run_sweep
from .runners import LocalRunner, OsuBw, SimulatedRunner, SlurmRunner, Txrx
from .schedule import Round, confirmation_round, screening_rounds
from .verdict import PairResult, Verdict, VerdictParams

__all__ = [
    "LocalRunner",
    "OsuBw",
    "PairResult",
    "Round",
    "SimulatedRunner",
    "SlurmRunner",
    "SweepResult",
    "Txrx",
    "Verdict",
    "VerdictParams",
    "confirmation_round",
    "run_sweep",
    "screening_rounds",
]

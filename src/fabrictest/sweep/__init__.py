"""Node-pair sweeps that name slow or unreachable nodes, by direction, in a few rounds.

    nodes.resolve(...)       -> the node set (hostlist expression, partition, allocation)
    schedule.screening_rounds, extra_round -> disjoint pairs per round
    runners.SlurmRunner / LocalRunner, simulate.SimulatedRunner -> runs, both directions
    estimate.estimate_level, weigh -> a state per node-direction (the statistics)
    verdict.decide           -> suspects with their evidence, failed runs, undecided
    core.run_sweep           -> all of it, adaptive rounds; output.render -> the text report
"""

from .core import SweepResult, run_sweep
from .estimate import VerdictParams
from .measure import OsuBw, Txrx
from .runners import LocalRunner, SlurmRunner
from .runs import Round
from .schedule import extra_round, screening_rounds
from .simulate import SimulatedRunner
from .verdict import Verdict

__all__ = [
    "LocalRunner",
    "OsuBw",
    "Round",
    "SimulatedRunner",
    "SlurmRunner",
    "SweepResult",
    "Txrx",
    "Verdict",
    "VerdictParams",
    "extra_round",
    "run_sweep",
    "screening_rounds",
]

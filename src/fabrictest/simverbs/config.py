"""Settings of the simulated verbs provider, from the environment.

FABRICTEST_VERBS=sim                 selects the provider (read by the rdma transport's shim)
FABRICTEST_VERBS_SIM_DIR=DIR         where the shared-memory segments live (default /dev/shm);
                                     every rank of a job must see the same directory
FABRICTEST_VERBS_SIM_WIRE=copy       payloads are copied into the remote memory region (default)
FABRICTEST_VERBS_SIM_WIRE=nocopy     descriptors only, payloads are not moved: a benchmark of
                                     the posting and polling loops, not a data path
FABRICTEST_VERBS_SIM_FAULTS=SPEC     comma-separated faults, each `NAME=VALUE[@RANK]` (RANK: the
                                     MPI world rank whose queue pairs send; all ranks if absent):
    drop=F      each RDMA write sent is lost on the wire with probability F (UC: the receiver
                never sees it; RC: it is retransmitted, and after retry_cnt+1 losses in a row
                the sender gets a retry-exceeded completion error)
    corrupt=F   each write that lands has its last payload byte flipped with probability F
    stall=N     the sending queue pair stops transmitting after N writes (work requests stay
                queued, no completion comes)
    kill=N      the process is killed (SIGKILL) once its queue pairs have sent N writes
    seed=S      seed of drop/corrupt (with the rank and the queue pair number)
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ENV_SELECT = "FABRICTEST_VERBS"
ENV_DIR = "FABRICTEST_VERBS_SIM_DIR"
ENV_WIRE = "FABRICTEST_VERBS_SIM_WIRE"
ENV_FAULTS = "FABRICTEST_VERBS_SIM_FAULTS"
WIRES = ("copy", "nocopy")
RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")


class SimConfigError(ValueError):
    """A setting of the simulated provider that cannot work (one line for the user)."""


@dataclass(frozen=True)
class Faults:
    drop: float = 0.0
    corrupt: float = 0.0
    stall: int | None = None
    kill: int | None = None
    seed: int = 0

    @property
    def random(self) -> bool:
        return self.drop > 0 or self.corrupt > 0

    def describe(self) -> str:
        parts = [f"{k}={v:g}" for k, v in (("drop", self.drop), ("corrupt", self.corrupt)) if v]
        parts += [f"{k}={v}" for k, v in (("stall", self.stall), ("kill", self.kill)) if v is not None]
        return ",".join(parts) or "none"


def world_rank() -> int:
    for name in RANK_VARS:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def parse_faults(text: str | None, rank: int) -> Faults:
    """The faults of `rank` from a FABRICTEST_VERBS_SIM_FAULTS spec."""
    values: dict = {}
    for item in (text or "").replace(" ", "").split(","):
        if not item:
            continue
        name, eq, value = item.partition("=")
        value, at, who = value.partition("@")
        if not eq or name not in ("drop", "corrupt", "stall", "kill", "seed"):
            raise SimConfigError(
                f"{ENV_FAULTS}: {item!r} is not NAME=VALUE[@RANK] with NAME one of drop, corrupt,"
                " stall, kill, seed"
            )
        try:
            if at and int(who) != rank:
                continue
            number = float(value) if name in ("drop", "corrupt") else int(value)
        except ValueError:
            raise SimConfigError(f"{ENV_FAULTS}: {item!r} has a value that is not a number") from None
        if name in ("drop", "corrupt") and not 0.0 <= number <= 1.0:
            raise SimConfigError(f"{ENV_FAULTS}: {name} must be a probability in [0, 1], got {value}")
        if name in ("stall", "kill", "seed") and number < 0:
            raise SimConfigError(f"{ENV_FAULTS}: {name} must be 0 or more, got {value}")
        values[name] = number
    return Faults(**values)


def faults() -> Faults:
    return parse_faults(os.environ.get(ENV_FAULTS), world_rank())


def wire() -> str:
    value = os.environ.get(ENV_WIRE, "copy").strip() or "copy"
    if value not in WIRES:
        raise SimConfigError(f"{ENV_WIRE}={value}: expected one of {', '.join(WIRES)}")
    return value


def directory() -> str:
    path = os.environ.get(ENV_DIR) or ("/dev/shm" if os.path.isdir("/dev/shm") else "/tmp")
    if not os.path.isdir(path) or not os.access(path, os.W_OK):
        raise SimConfigError(f"{ENV_DIR}={path}: not a writable directory")
    return path

"""Running one round of pair measurements: on Slurm, with mpirun, or simulated.

Every pair of a round starts at once (up to `max_concurrent`) and has its own time limit:
a pair that does not finish is killed (its whole process group) and recorded as `timeout`,
so a dead link shows up as evidence, never as a hung sweep.
"""

from __future__ import annotations

import math
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .. import mpirun as mpilaunch
from .schedule import Pair, Round
from .verdict import FAILED, OK, TIMEOUT, PairResult

# --------------------------------------------------------------------------------------
# What is measured on a pair


class MeasurementError(RuntimeError):
    """The measurement ran but its output has no figure."""


def _console_script(name: str) -> str:
    """Absolute path of one of our console scripts (next to the interpreter), else the name."""
    cand = Path(sys.executable).parent / name
    if cand.exists():
        return str(cand)
    return shutil.which(name) or name


@dataclass
class Txrx:
    """`txrx` with one receiver (rank 0, first node) and one transmitter (rank 1)."""

    method: str = "mpi"
    msg_size: int = 65536
    nmsg: int = 500
    num_blks: int = 10
    num_cmsgs: int = 100
    timeout: float | None = None
    extra: Sequence[str] = ()
    exe: str = field(default_factory=lambda: _console_script("txrx"))
    unit: str = "Gbps"

    @property
    def name(self) -> str:
        return f"txrx-{self.method}"

    def argv(self) -> list[str]:
        argv = [
            self.exe, "--nrx", "1", "--nlink", "1", "--method", self.method,
            "--msg-size", str(self.msg_size), "--num-blks", str(self.num_blks),
            "--num-cmsgs", str(self.num_cmsgs), "--nmsg", str(self.nmsg),
        ]  # fmt: skip
        if self.timeout:
            argv += ["--timeout", f"{self.timeout:g}"]
        return argv + list(self.extra)

    def parse(self, text: str) -> float:
        from ..parsers.txrx import parse_txrx

        try:
            report = parse_txrx(text)
        except ValueError as err:
            raise MeasurementError(str(err)) from err
        rate = report.min_gbps()
        if rate is None:
            why = "; ".join(report.errors) or "no receiver data rate line"
            raise MeasurementError(why)
        return rate


@dataclass
class OsuBw:
    """`osu_bw` at one message size (MB/s), the figure of its last row."""

    exe: str = "osu_bw"
    size: int = 1 << 20
    extra: Sequence[str] = ()
    unit: str = "MB/s"
    timeout: float | None = None

    @property
    def name(self) -> str:
        return "osu_bw"

    def argv(self) -> list[str]:
        return [self.exe, "-m", f"{self.size}:{self.size}", *self.extra]

    def parse(self, text: str) -> float:
        from ..parsers.osu import parse_osu

        try:
            result = parse_osu(text)
        except ValueError as err:
            raise MeasurementError(str(err)) from err
        if not result.rows:
            raise MeasurementError("osu_bw printed no rows")
        return result.rows[-1].value


# --------------------------------------------------------------------------------------
# Runners


class Runner:
    """Measures every pair of a round; subclasses say how a pair is launched."""

    unit = "Gbps"
    name = "runner"

    def run_round(self, rnd: Round) -> list[PairResult]:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:
        return self.name


def _kill_group(proc: subprocess.Popen, grace: float = 5.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def run_with_timeout(
    argv: Sequence[str], timeout: float, env: dict[str, str] | None = None
) -> tuple[str, int | None, str, float]:
    """(status, returncode, output, seconds): status 'ok' (exit 0), 'failed' or 'timeout'."""
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,
        )
    except OSError as err:
        return FAILED, None, f"cannot start {argv[0]}: {err}", time.monotonic() - t0
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, _ = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out = ""
        return TIMEOUT, None, out or "", time.monotonic() - t0
    status = OK if proc.returncode == 0 else FAILED
    return status, proc.returncode, out, time.monotonic() - t0


def _tail(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text[-n:]


class CommandRunner(Runner):
    """Launches one command per pair, all pairs of a round concurrently."""

    def __init__(
        self,
        measurement,
        pair_timeout: float = 120.0,
        max_concurrent: int = 256,
        env: dict[str, str] | None = None,
        log: Callable[[str], None] | None = None,
    ):
        self.measurement = measurement
        self.unit = measurement.unit
        self.pair_timeout = pair_timeout
        self.max_concurrent = max(1, max_concurrent)
        self.env = env
        self.log = log or (lambda _msg: None)

    def command(self, pair: Pair) -> list[str]:  # pragma: no cover - interface
        raise NotImplementedError

    def measure(self, rnd: Round, pair: Pair) -> PairResult:
        a, b = pair
        argv = self.command(pair)
        status, rc, out, secs = run_with_timeout(argv, self.pair_timeout, self.env)
        res = PairResult(round=rnd.index, kind=rnd.kind, a=a, b=b, status=status, seconds=secs)
        if status == TIMEOUT:
            res.detail = f"no result within {self.pair_timeout:g} s; {_tail(out)}".strip("; ")
        elif status == FAILED:
            res.detail = f"exit {rc}: {_tail(out)}"
        else:
            try:
                res.value = self.measurement.parse(out)
            except MeasurementError as err:
                res.status = FAILED
                res.detail = f"no figure: {err}; {_tail(out)}"
        self.log(
            f"round {rnd.index} ({rnd.kind}) {a},{b}: {res.status}"
            + (f" {res.value:g} {self.unit}" if res.ok else f" ({res.detail[:120]})")
        )
        return res

    def run_round(self, rnd: Round) -> list[PairResult]:
        if not rnd.pairs:
            return []
        workers = min(self.max_concurrent, len(rnd.pairs))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda p: self.measure(rnd, p), rnd.pairs))


class LocalRunner(CommandRunner):
    """`mpirun -np 2 --host a,b ...` per pair (one rank per node).

    `host_map` maps node names to launch hosts; `all_local=True` runs every pair on this
    host (a smoke test of the whole chain on one machine).
    """

    name = "mpirun"

    def __init__(
        self,
        measurement,
        *,
        all_local: bool = False,
        host_map: dict[str, str] | None = None,
        mpirun_args: Sequence[str] = (),
        **kw,
    ):
        super().__init__(measurement, env=mpilaunch.environment(), **kw)
        self.all_local = all_local
        self.host_map = host_map or {}
        self.mpirun_args = list(mpirun_args)

    def command(self, pair: Pair) -> list[str]:
        argv = self.measurement.argv()
        if self.all_local:
            return mpilaunch.command(2, argv, extra=self.mpirun_args)
        hosts = [self.host_map.get(n, n) for n in pair]
        kind = mpilaunch.flavour()
        extra = ["--map-by", "node"] if kind == "openmpi" else ["-ppn", "1"]
        return mpilaunch.command(2, argv, hosts=hosts, extra=[*extra, *self.mpirun_args])

    def describe(self) -> str:
        where = "this host" if self.all_local else "mpirun --host a,b"
        return f"{self.measurement.name} via {where}"


class SlurmRunner(CommandRunner):
    """Concurrent job steps inside one allocation, each pinned to its two nodes.

    `--exact` takes only the CPUs the step needs; `--overlap` lets a step start even while a
    killed step of an earlier round still holds its node's CPUs or memory (a dead link can
    leave one behind), so a round never waits on the previous one.
    """

    name = "slurm"

    def __init__(self, measurement, *, srun: str = "srun", srun_args: Sequence[str] = (), **kw):
        super().__init__(measurement, **kw)
        self.srun = srun
        env_args = shlex.split(os.environ.get("FABRIC_SWEEP_SRUN_ARGS", ""))
        self.srun_args = [*env_args, *srun_args]

    def command(self, pair: Pair) -> list[str]:
        a, b = pair
        minutes = max(1, math.ceil(self.pair_timeout / 60.0) + 1)
        return [
            self.srun, "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
            f"--nodelist={a},{b}", "--exact", "--overlap", f"--time={minutes}",
            "--kill-on-bad-exit=1",
            f"--job-name=sweep-{a}-{b}", *self.srun_args, *self.measurement.argv(),
        ]  # fmt: skip

    def describe(self) -> str:
        return f"{self.measurement.name} via srun steps"


class SimulatedRunner(Runner):
    """Pair figure = min(capacity of a, capacity of b) x log-normal noise; `down` nodes fail.

    `sigma` is the log-normal spread of one measurement: about 0.28 gives the 2-3x spread of
    unshaped traffic on a small shared machine, 0.03-0.05 the steadiness of a shaped link.
    """

    name = "simulated"

    def __init__(
        self,
        nodes: Sequence[str],
        *,
        base: float = 1.0,
        sigma: float = 0.28,
        slow: dict[str, float] | None = None,
        down: Sequence[str] = (),
        seed: int | None = None,
        unit: str = "Gbps",
    ):
        self.cap = {n: base for n in nodes}
        for n, f in (slow or {}).items():
            self.cap[n] = base * f
        self.down = set(down)
        self.sigma = sigma
        self.rng = random.Random(seed)
        self.unit = unit

    def run_round(self, rnd: Round) -> list[PairResult]:
        out = []
        for a, b in rnd.pairs:
            if a in self.down or b in self.down:
                out.append(
                    PairResult(rnd.index, rnd.kind, a, b, TIMEOUT, detail="simulated link down")
                )
                continue
            v = min(self.cap[a], self.cap[b]) * math.exp(self.rng.gauss(0.0, self.sigma))
            out.append(PairResult(rnd.index, rnd.kind, a, b, OK, value=v))
        return out

    def describe(self) -> str:
        return f"simulation (sigma {self.sigma:g})"

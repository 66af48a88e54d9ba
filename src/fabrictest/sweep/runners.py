"""Running one round of pair measurements on Slurm or with mpirun; both directions per pair.

Every lane of a round starts at once (up to `max_concurrent`); a lane is a pair measured
a -> b, then b -> a (or, in an extra round, a node's one doubtful direction twice, with two
partners), each run with its own time limit: a run that does not finish is killed (its whole
process group) and recorded as `timeout`, so a dead link shows up as evidence, never as a hung
sweep. Ctrl-C kills the runs in flight, marks them `interrupted` (no evidence either way) and
hands the completed runs of the round to the caller (`RoundInterrupted`).
"""

from __future__ import annotations

import math
import os
import re
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from .. import mpirun as mpilaunch
from .measure import MeasurementError
from .runs import FAILED, INTERRUPTED, OK, TIMEOUT, Round, RoundRuns

RANK_LINE = re.compile(r"^fabric-sweep-rank (\d+) (\S+)\s*$", re.M)


class RoundInterrupted(Exception):
    """Ctrl-C during a round: `runs` holds what completed (the rest is `interrupted`)."""

    def __init__(self, runs: RoundRuns):
        super().__init__("interrupted")
        self.runs = runs


class Runner:
    """Measures every pair of a round, both directions; subclasses say how."""

    unit = "Gbps"
    name = "runner"
    max_concurrent = 1 << 30

    def run_round(self, rnd: Round) -> RoundRuns:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:
        return self.name

    def pair_duration(self) -> float | None:
        """Expected seconds of one run, when known before measuring."""
        return None

    def run_limit(self) -> float | None:
        """The most seconds one run may take."""
        return None


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


def _tail(text: str, n: int = 300) -> str:
    return " ".join(text.split())[-n:]


class CommandRunner(Runner):
    """Launches one command per run, all pairs of a round concurrently."""

    def __init__(
        self,
        measurement,
        pair_timeout: float = 120.0,
        max_concurrent: int = 256,
        env: dict[str, str] | None = None,
        log: Callable[[str], None] | None = None,
        pair_seconds: float | None = None,
    ):
        self.measurement = measurement
        self.unit = measurement.unit
        self.pair_timeout = pair_timeout
        self.max_concurrent = max(1, max_concurrent)
        self.env = env
        self.log = log or (lambda _msg: None)
        self.pair_seconds = pair_seconds
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()
        self._stop = threading.Event()
        self.steps = 0  # commands launched: Slurm job steps under srun

    def command(self, src: str, dst: str) -> tuple[list[str], dict[str, str] | None]:
        """argv (and environment, None: the runner's) of one run from src to dst."""
        raise NotImplementedError  # pragma: no cover - interface

    def pair_duration(self) -> float | None:
        return self.pair_seconds

    def run_limit(self) -> float | None:
        return self.pair_timeout

    # -- one run ------------------------------------------------------------------------
    def _execute(self, argv, env, timeout: float | None = None
                 ) -> tuple[int, int | None, str, float]:
        t0 = time.monotonic()
        if self._stop.is_set():
            return INTERRUPTED, None, "", 0.0
        try:
            proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    text=True, env=env, start_new_session=True)
        except OSError as err:
            return FAILED, None, f"cannot start {argv[0]}: {err}", time.monotonic() - t0
        with self._lock:
            self._procs.add(proc)
            self.steps += 1
            # Ctrl-C between the check above and here killed the runs it saw, not this one
            stopped = self._stop.is_set()
        if stopped:
            _kill_group(proc, grace=0.5)
        try:
            out, _ = proc.communicate(timeout=timeout or self.pair_timeout)
            status = OK if proc.returncode == 0 else FAILED
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            try:
                out, _ = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                out = ""
            status = TIMEOUT
        finally:
            with self._lock:
                self._procs.discard(proc)
        if self._stop.is_set() and status != OK:
            status = INTERRUPTED
        return status, proc.returncode, out or "", time.monotonic() - t0

    def measure(self, rnd: Round, src: str, dst: str) -> tuple[int, float | None, float, str]:
        argv, env = self.command(src, dst)
        status, rc, out, secs = self._execute(argv, env if env is not None else self.env)
        value, detail = None, ""
        if status == TIMEOUT:
            detail = f"no result within {self.pair_timeout:g} s; {_tail(out)}".strip("; ")
        elif status == FAILED:
            detail = f"exit {rc}: {_tail(out)}"
        elif status == INTERRUPTED:
            detail = "interrupted"
        else:
            placed = self._placement(out, src, dst)
            try:
                if placed:
                    raise MeasurementError(placed)
                value = self.measurement.parse(RANK_LINE.sub("", out))
            except MeasurementError as err:
                status, detail = FAILED, f"no figure: {err}; {_tail(out)}"
        self.log(f"round {rnd.index} ({rnd.kind}) {src}->{dst}: "
                 + (f"{value:g} {self.unit}" if status == OK else detail[:120]))
        return status, value, secs, detail

    def _placement(self, out: str, src: str, dst: str) -> str:
        """'' when the ranks ran where asked (or did not say), else what went wrong: a run
        attributed to the wrong direction would blame the wrong side of a node."""
        where = {int(r): node for r, node in RANK_LINE.findall(out)}
        if not where:
            return ""
        sender = self.measurement.sender_rank
        want = {sender: src, 1 - sender: dst}
        if where != want:
            return f"ranks ran on {where}, expected {want}"
        return ""

    # -- one round ------------------------------------------------------------------------
    def run_round(self, rnd: Round) -> RoundRuns:
        lanes = rnd.lanes()
        index = {n: i for i, n in enumerate(rnd.names)}
        rows: list = [None] * (2 * len(lanes))

        def both(i: int) -> None:
            for j, (s, d) in enumerate(lanes[i]):
                st, v, secs, det = self.measure(rnd, s, d)
                rows[2 * i + j] = (index[s], index[d], st, v, secs, det)

        if not lanes:
            return RoundRuns.from_lists([])
        self._stop.clear()
        pool = ThreadPoolExecutor(max_workers=min(self.max_concurrent, len(lanes)))
        try:
            futures = [pool.submit(both, i) for i in range(len(lanes))]
            for f in futures:
                f.result()
        except KeyboardInterrupt:
            self._stop.set()
            with self._lock:
                procs = list(self._procs)
            for p in procs:
                _kill_group(p, grace=2.0)
            pool.shutdown(wait=True, cancel_futures=True)
            raise RoundInterrupted(self._collect(rows, lanes, index)) from None
        finally:
            pool.shutdown(wait=True)
        return RoundRuns.from_lists(rows)

    @staticmethod
    def _collect(rows, lanes, index) -> RoundRuns:
        out = []
        for i, row in enumerate(rows):
            if row is None:
                s, d = lanes[i // 2][i % 2]
                row = (index[s], index[d], INTERRUPTED, None, 0.0, "interrupted")
            out.append(row)
        return RoundRuns.from_lists(out)


class LocalRunner(CommandRunner):
    """`mpirun -np 2 --host RECEIVER,SENDER ...` per run (one rank per node, in that order).

    `host_map` maps node names to launch hosts; `all_local=True` runs every pair on this
    host (a smoke test of the whole chain on one machine).
    """

    name = "mpirun"

    def __init__(self, measurement, *, all_local: bool = False,
                 host_map: dict[str, str] | None = None, mpirun_args: Sequence[str] = (), **kw):
        super().__init__(measurement, env=mpilaunch.environment(), **kw)
        self.all_local = all_local
        self.host_map = host_map or {}
        self.mpirun_args = list(mpirun_args)

    def command(self, src: str, dst: str):
        argv = self.measurement.argv()
        if self.all_local:
            return mpilaunch.command(2, argv, extra=self.mpirun_args), None
        by_rank = [src, dst] if self.measurement.sender_rank == 0 else [dst, src]
        hosts = [self.host_map.get(n, n) for n in by_rank]
        kind = mpilaunch.flavour()
        extra = ["--map-by", "node"] if kind == "openmpi" else ["-ppn", "1"]
        return mpilaunch.command(2, argv, hosts=hosts, extra=[*extra, *self.mpirun_args]), None

    def describe(self) -> str:
        where = "this host" if self.all_local else "mpirun --host a,b"
        return f"{self.measurement.name} via {where}, both directions"


class SlurmRunner(CommandRunner):
    """Concurrent job steps inside one allocation, each pinned to its two nodes.

    Slurm orders a step's nodes itself, so the ranks are placed with
    `--distribution=arbitrary` and a SLURM_HOSTFILE naming the node of each rank; every rank
    prints where it ran, and a run whose ranks landed elsewhere is not counted. `--exact`
    takes only the CPUs the step needs; `--overlap` lets a step start while a killed step of an
    earlier round still holds its node's CPUs, so a round never waits on the previous one.
    """

    name = "slurm"

    def __init__(self, measurement, *, srun: str = "srun", srun_args: Sequence[str] = (), **kw):
        super().__init__(measurement, **kw)
        self.srun = srun
        env_args = shlex.split(os.environ.get("FABRIC_SWEEP_SRUN_ARGS", ""))
        self.srun_args = [*env_args, *srun_args]
        self._dir = tempfile.TemporaryDirectory(prefix="fabric-sweep-")

    def hostfile(self, by_rank: Sequence[str]) -> str:
        path = os.path.join(self._dir.name, "-".join(by_rank))
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(by_rank) + "\n")
        return path

    def command(self, src: str, dst: str):
        by_rank = [src, dst] if self.measurement.sender_rank == 0 else [dst, src]
        minutes = max(1, math.ceil(self.pair_timeout / 60.0) + 1)
        tell = 'echo "fabric-sweep-rank $SLURM_PROCID $SLURMD_NODENAME"; exec "$@"'
        argv = [
            self.srun, "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
            f"--nodelist={','.join(by_rank)}", "--distribution=arbitrary", "--exact",
            "--overlap", f"--time={minutes}", "--kill-on-bad-exit=1",
            f"--job-name=sweep-{src}-{dst}", *self.srun_args,
            "bash", "-c", tell, "bash", *self.measurement.argv(),
        ]  # fmt: skip
        env = dict(os.environ if self.env is None else self.env)
        env["SLURM_HOSTFILE"] = self.hostfile(by_rank)
        return argv, env

    def describe(self) -> str:
        return f"{self.measurement.name} via srun steps, both directions"

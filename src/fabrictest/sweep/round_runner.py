"""A round as one job step per direction: every pair of the round measures at once inside one
MPI job (`python -m fabrictest.txrx.pairs`), where the per-run runners launch a step per run.

A round's lanes give two steps: the first run of every lane, then the second (`b -> a`, or in
an extra round a node's one doubtful direction with its second partner). The lanes share no
node, so in one step every node holds one rank: rank i receives on the receiver of run i, rank
P+i transmits on its sender (placed by SLURM_HOSTFILE with `--distribution=arbitrary`, or by
mpirun's host list in that order). Each pair runs in a communicator of its own with its own
limit (txrx.pairs): a pair whose output is missing, cut short or placed on the wrong nodes is a
failed run of that pair, the other pairs' figures stand. Steps per sweep: 2 per round, where
Slurm's MaxStepCount (40,000 a job by default) is reached by the per-run mode at 10,000 nodes.

`duplex="full"` measures both directions of a pair in ONE step: a lane whose second run is
its first reversed (`a -> b`, `b -> a`) runs both at once, each node holding a receiver and a
transmitter rank (txrx.pairs' pairs 0..L-1 the lanes' first runs, L.. their reverse runs); a
lane whose second run has another partner (an extra round's doubtful direction) keeps its
second run for a second step (a node would receive two streams at once otherwise). A round of
reverse lanes is then one step. Only where the link is full duplex and the host can drive
both directions at once: a half-duplex or shared host link, or a host short of cores for two
streams, reads as slow in both directions (docs/sweep.md).
"""

from __future__ import annotations

import math
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from .. import mpirun as mpilaunch
from .measure import MeasurementError, Txrx
from .runners import (
    FAILED,
    INTERRUPTED,
    OK,
    RANK_LINE,
    TIMEOUT,
    CommandRunner,
    RoundInterrupted,
    _kill_group,
    _tail,
)
from .runs import Round, RoundRuns

PAIR_LINE = re.compile(r"^fabric-sweep-pair (\d+) ([rt]): ?(.*)$", re.M)
STEP_GRACE = 30.0  # seconds a step may run past the pairs' limit: launch of a large job, exit
NO_RESULT = "no result within"  # txrx.pairs' line for a rank its watchdog ended
DUPLEX = ("half", "full")  # a pair's two directions in two steps, or at once in one
#: an MPI that did not start on any rank, said in one line in place of its error stack's tail:
#: MPICH launched by srun with a PMI it does not speak (the pip wheel has PMI-1/PMI-2, no PMIx:
#: MPI_Init aborts, exit 16), or with none (`--mpi=none`: every rank a world of 1, docs/sweep.md)
START_FAILURES = (
    (re.compile(r"Runtime environment uses unsupported PMI version (\w+)"),
     "MPI_Init failed on every rank: this MPI has no {0} (srun's --mpi=); give srun a PMI it "
     "speaks, --srun-arg=--mpi=pmi2 for MPICH's pip wheel"),
    (re.compile(r"--pairs \d+ needs (\d+) ranks, got 1\b"),
     "every rank started as a world of 1, not {0}: the MPI found no PMI from srun (--mpi=none, "
     "or one it does not speak); give srun one it speaks, --srun-arg=--mpi=pmi2 for MPICH"),
)


def start_failure(out: str) -> str | None:
    """One line for a step whose MPI did not start (START_FAILURES), or None."""
    for pattern, line in START_FAILURES:
        m = pattern.search(out)
        if m:
            return line.format(*m.groups())
    return None


class RoundStepRunner(CommandRunner):
    """Both directions of a round in two job steps (srun or mpirun), every pair at once."""

    name = "round"
    max_concurrent = 1 << 30  # every pair of the round at once: no waves

    def __init__(self, measurement: Txrx, *, launcher: str = "mpirun", all_local: bool = False,
                 host_map: dict[str, str] | None = None, mpirun_args: Sequence[str] = (),
                 srun: str = "srun", srun_args: Sequence[str] = (), fault_pair: int | None = None,
                 python: str | None = None, duplex: str = "half", **kw):
        kw.pop("max_concurrent", None)
        if launcher == "mpirun":
            kw.setdefault("env", mpilaunch.environment())
        super().__init__(measurement, **kw)
        self.max_concurrent = 1 << 30
        self.launcher = launcher
        self.all_local = all_local
        self.host_map = host_map or {}
        self.mpirun_args = list(mpirun_args)
        self.srun = srun
        self.srun_args = [*shlex.split(os.environ.get("FABRIC_SWEEP_SRUN_ARGS", "")),
                          *srun_args]
        self.step_grace = STEP_GRACE
        self.fault_pair = fault_pair  # tests: txrx's --fault in this pair of every step only
        self._fault_now = fault_pair  # its index in the step being launched (a re-run moves it)
        self.python = python or sys.executable  # the interpreter of txrx.pairs on the nodes
        if duplex not in DUPLEX:
            raise ValueError(f"duplex {duplex!r}: one of {', '.join(DUPLEX)}")
        self.duplex = duplex
        self._dir = tempfile.TemporaryDirectory(prefix="fabric-sweep-")

    def describe(self) -> str:
        how = "srun" if self.launcher == "slurm" else (
            "mpirun on this host" if self.all_local else "mpirun")
        if self.duplex == "full":
            return (f"{self.measurement.name} via one job step per round ({how}, every pair "
                    "at once, both directions at once: full duplex)")
        return (f"{self.measurement.name} via one job step per round and direction ({how}, "
                "every pair at once), both directions")

    # -- one step ---------------------------------------------------------------------------
    def pairs_argv(self, pairs: int) -> list[str]:
        argv = [self.python, "-m", "fabrictest.txrx.pairs", "--pairs", str(pairs),
                "--limit", f"{self.pair_timeout:g}"]
        if self._fault_now is not None:
            argv += ["--fault-pair", str(self._fault_now)]
        return argv + self.measurement.argv()[1:]

    def command_for(self, rnd: Round, half: int, by_rank: list[str]):
        """argv and environment of the step whose rank i runs on by_rank[i]."""
        inner = self.pairs_argv(len(by_rank) // 2)
        n = len(by_rank)
        nodes = len(set(by_rank))  # n, or fewer in full duplex (2 ranks a node)
        if self.launcher == "slurm":
            minutes = max(1, math.ceil((self.pair_timeout + self.step_grace) / 60.0) + 1)
            tell = 'echo "fabric-sweep-rank $SLURM_PROCID $SLURMD_NODENAME"; exec "$@"'
            argv = [
                self.srun, f"--nodes={nodes}", f"--ntasks={n}",
                f"--ntasks-per-node={-(-n // nodes)}",
                f"--nodelist={','.join(by_rank)}", "--distribution=arbitrary", "--exact",
                "--overlap", f"--time={minutes}", "--kill-on-bad-exit=0",
                f"--job-name=sweep-r{rnd.index}-{half + 1}", *self.srun_args,
                "bash", "-c", tell, "bash", *inner,
            ]  # fmt: skip
            env = dict(os.environ if self.env is None else self.env)
            env["SLURM_HOSTFILE"] = self.hostfile(rnd, half, by_rank)
            return argv, env
        kind = mpilaunch.flavour()
        # a rank that dies ends its own pair: the MPI's launcher must not end the job for it
        keep = ["--enable-recovery"] if kind == "openmpi" else (
            ["-disable-auto-cleanup"] if kind == "mpich" else [])
        if self.all_local:
            return mpilaunch.command(n, inner, extra=[*keep, *self.mpirun_args]), None
        if nodes < n:
            raise ValueError("duplex full with mpirun across hosts: ranks are placed in "
                             "host-list order, one a host (cli.py refuses it)")
        hosts = [self.host_map.get(x, x) for x in by_rank]
        place = ["--map-by", "node"] if kind == "openmpi" else ["-ppn", "1"]
        return mpilaunch.command(n, inner, hosts=hosts,
                                 extra=[*place, *keep, *self.mpirun_args]), None

    def hostfile(self, rnd: Round, half: int, by_rank: Sequence[str]) -> str:
        path = os.path.join(self._dir.name, f"round{rnd.index}-{half + 1}")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(by_rank) + "\n")
        return path

    def _step(self, rnd: Round, half: int, runs: list[tuple[str, str]], retry: bool = True,
              fault: int | None = -1):
        """(status, figure, seconds, detail) of every run of one step, in order."""
        p = len(runs)
        self._fault_now = self.fault_pair if fault == -1 else fault
        by_rank = [d for _, d in runs] + [s for s, _ in runs]
        argv, env = self.command_for(rnd, half, by_rank)
        status, rc, out, secs = self._execute(argv, env if env is not None else self.env,
                                              timeout=self.pair_timeout + self.step_grace)
        where = {int(r): node for r, node in RANK_LINE.findall(out)}
        texts: dict[int, dict[str, list[str]]] = {}
        for pair, role, line in PAIR_LINE.findall(out):
            texts.setdefault(int(pair), {"r": [], "t": []})[role].append(line)
        rows = [self._one(rnd, i, p, src, dst, status, rc, out, secs, where, texts.get(i))
                for i, (src, dst) in enumerate(runs)]
        # Slurm aborts a whole step when one node cannot start its rank (its link down): the
        # pairs whose both ranks started and said nothing are run again once, without it.
        # MPICH's Hydra ends every rank once one is killed by a signal (txrx.pairs): a step
        # that failed with some pairs' output and none from others runs those again once
        unstarted = [i for i in range(p) if where and (i not in where or p + i not in where)]
        again = [i for i in range(p) if i not in texts and i not in unstarted]
        torn = status == FAILED and bool(texts) and not unstarted
        if retry and (unstarted or torn) and again and status != INTERRUPTED:
            moved = again.index(self._fault_now) if self._fault_now in again else None
            for i, row in zip(again, self._step(rnd, half, [runs[i] for i in again], False,
                                                moved), strict=True):
                rows[i] = row
        for i in unstarted:
            if i not in texts and rows[i][0] == FAILED:
                who = [n for n, k in ((runs[i][1], i), (runs[i][0], p + i)) if k not in where]
                rows[i] = (FAILED, None, rows[i][2], f"{' and '.join(who)} did not start its "
                           f"rank (step exit {rc}): {_tail(out)}")
        return rows

    def _one(self, rnd, i, p, src, dst, status, rc, out, secs, where, text):
        value, detail, st = None, "", OK
        ran = (where.get(i), where.get(p + i))
        if None not in ran and ran != (dst, src):
            st, detail = FAILED, (f"ranks ran on {where.get(p + i)}->{where.get(i)}, "
                                  f"expected {src}->{dst}")
        elif status == INTERRUPTED and text is None:
            st, detail = INTERRUPTED, "interrupted"
        elif text is None or not text["r"] or not text["t"]:
            lost = "no output" if text is None else (
                "no receiver output" if not text["r"] else "no transmitter output")
            said = "".join(text["r"] + text["t"]) if text else ""
            # ended at the pairs' limit with no word from the pair, or its watchdog's: a hang;
            # a partner's ERROR line (its peer died, a deadline) is a failed run
            hung = (status == TIMEOUT or secs >= self.pair_timeout) and (
                not said.strip() or NO_RESULT in said)
            if hung:
                st, detail = TIMEOUT, (f"no result within {self.pair_timeout:g} s ({lost}; "
                                       f"the step ended at its limit); {_tail(said or out)}")
            else:
                st, detail = FAILED, (f"{lost} from its pair (step exit {rc}): "
                                      f"{(not said and start_failure(out)) or _tail(said or out)}")
        else:
            joined = "".join(f"{x}\n" for x in text["r"] + text["t"])
            try:
                value = self.measurement.parse(joined)
            except MeasurementError as err:
                hung = NO_RESULT in joined
                st = TIMEOUT if hung else FAILED
                detail = (f"no result within {self.pair_timeout:g} s; {_tail(joined)}" if hung
                          else f"no figure: {err}; {_tail(joined)}")
        self.log(f"round {rnd.index} ({rnd.kind}) {src}->{dst}: "
                 + (f"{value:g} {self.unit}" if st == OK else detail[:120]))
        return st, value, secs, detail

    # -- one round --------------------------------------------------------------------------
    def run_round(self, rnd: Round) -> RoundRuns:
        lanes = rnd.lanes()
        if not lanes:
            return RoundRuns.from_lists([])
        index = {n: i for i, n in enumerate(rnd.names)}
        rows: list = []
        self._stop.clear()
        # the step waits in a worker thread: Ctrl-C reaches this one, which ends the job
        pool = ThreadPoolExecutor(max_workers=1)
        try:
            for half, runs in enumerate(self.steps_of(lanes)):
                got = pool.submit(self._step, rnd, half, runs).result()
                for (s, d), (st, v, secs, det) in zip(runs, got, strict=True):
                    rows.append((index[s], index[d], st, v, secs, det))
        except KeyboardInterrupt:
            self._stop.set()
            with self._lock:
                procs = list(self._procs)
            for proc in procs:
                _kill_group(proc, grace=2.0)
            pool.shutdown(wait=True, cancel_futures=True)
            flat = [run for runs in self.steps_of(lanes) for run in runs]
            rows += [(index[s], index[d], INTERRUPTED, None, 0.0, "interrupted")
                     for s, d in flat[len(rows):]]
            raise RoundInterrupted(RoundRuns.from_lists(self._lane_order(rows, lanes))
                                   ) from None
        finally:
            pool.shutdown(wait=True)
        return RoundRuns.from_lists(self._lane_order(rows, lanes))

    def steps_of(self, lanes: list) -> list[list[tuple[str, str]]]:
        """The runs of each step of a round: every lane's first run, then its second; in full
        duplex the reverse runs with the first ones, the others (another partner) after."""
        first = [lane[0] for lane in lanes]
        if self.duplex == "full":
            both = [lane[1] for lane in lanes if lane[1] == lane[0][::-1]]
            rest = [lane[1] for lane in lanes if lane[1] != lane[0][::-1]]
            return [first + both, rest] if rest else [first + both]
        return [first, [lane[1] for lane in lanes]]

    def _lane_order(self, rows: list, lanes: list) -> list:
        """Rows in the order of steps_of -> the per-run runner's order: lane by lane."""
        order = [run for runs in self.steps_of(lanes) for run in runs]
        at: dict[tuple[str, str], list[int]] = {}
        for k, run in enumerate(order):
            at.setdefault(run, []).append(k)
        out = []
        for lane in lanes:
            for run in lane:
                out.append(rows[at[run].pop(0)])
        return out

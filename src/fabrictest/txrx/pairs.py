"""Many node pairs in one MPI job, each measured as its own 2-rank txrx run (the sweep's round
as one job step: `python -m fabrictest.txrx.pairs --pairs P [--limit S] TXRX_OPTIONS`).

World ranks `0..P-1` receive, rank `P+i` transmits to rank `i` (txrx's --nrx P --nlink P
layout), but every pair runs in a communicator of its own two ranks (MPI_Comm_create_group:
collective over the pair only), so a pair never waits on another: nothing is collective over
the world after MPI_Init. Each rank prints its txrx lines once its pair is done, every line
prefixed `fabric-sweep-pair I r|t: ` so that the caller reads each pair's output apart. A
fault (a deadline, a dead peer) ends that rank's pair with txrx's one ERROR line and no MPI
abort; a rank still busy after `--limit` seconds prints why and exits, and one done but held in
MPI_Finalize by a dead rank of another pair exits then too: a hung or dead rank costs its own
pair, never the job, and the job lasts at most `--limit` seconds after its ranks started.
`--fault-pair I` applies txrx's hidden `--fault` to pair I only (tests).

Under MPICH's Hydra (`mpiexec -disable-auto-cleanup`, docs/sweep.md) SIGUSR1 is Hydra's notice
that a rank of the job ended (its default action ends the rank that gets it): ignored. A rank
killed by a signal ends the job there all the same (every other rank is SIGKILLed, at the
latest when the next one exits; MPICH's fault tolerance, MPIR_CVAR_ENABLE_FT=1, failed an
assertion in MPI_Init of 5.0.2): the pairs already done keep their figures, the others have
no output (the round runner measures them again once); a stalled or stopped rank costs its
own pair only.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import logging
import os
import signal
import sys
import threading
import time
from contextlib import redirect_stdout

from fabrictest.txrx.argv import parse
from fabrictest.txrx.errors import EXIT_FAULT, EXIT_USAGE, TxrxError, UsageError
from fabrictest.txrx.options import validate
from fabrictest.txrx.output import LOGGER

PREFIX = "fabric-sweep-pair"
HARD_GRACE = 2.0  # seconds past --limit before the kernel ends a rank the watchdog could not
ROLE = ("r", "t")  # pair rank 0 receives, pair rank 1 transmits (txrx's nrx=1 nlink=1)


def role_in_world(rank: int, pairs: int) -> tuple[int, int]:
    """(pair index, rank inside the pair) of a world rank."""
    return rank % pairs, 0 if rank < pairs else 1


def world_ranks(pair: int, pairs: int) -> list[int]:
    """The world ranks of a pair: its receiver, then its transmitter."""
    return [pair, pairs + pair]


def prefixed(pair: int, role: int, text: str) -> str:
    head = f"{PREFIX} {pair} {ROLE[role]}: "
    return "".join(f"{head}{line}\n" for line in text.splitlines())


def _args(argv):
    ap = argparse.ArgumentParser(prog="python -m fabrictest.txrx.pairs", add_help=False,
                                 allow_abbrev=False)
    ap.add_argument("--pairs", type=int, required=True)
    ap.add_argument("--limit", type=float, required=True)
    ap.add_argument("--fault-pair", type=int, default=None)
    return ap.parse_known_args(argv)


def _say(pair: int, role: int, text: str) -> None:
    out = sys.__stdout__  # not the capture of a measurement in flight (the watchdog's line)
    out.write(prefixed(pair, role, text))
    out.flush()


def _watchdog(pair: int, role: int, limit: float, done: threading.Event, code: list) -> None:
    """Ends this rank `limit` s after its start: without its pair done, saying so; with it
    done, quietly, when MPI_Finalize waits on a rank of another pair that died or hung (its
    figures are out already)."""
    t0 = time.monotonic()
    if not done.wait(limit):
        _say(pair, role, f"ERROR:{LOGGER}:no result within {limit:g} s (rank of pair {pair})")
        sys.stderr.flush()
        os._exit(EXIT_FAULT)
    time.sleep(max(0.0, limit - (time.monotonic() - t0)))
    sys.stderr.flush()
    os._exit(code[0])


def _peer_failed(pair: int, role: int, err) -> str:
    """The ERROR line of an MPI error on the pair's communicator (MPICH reports a dead peer at
    once as an error in the request's status; Open MPI's ranks see its silence instead)."""
    try:
        what = err.Get_error_string()
    except Exception:  # not an MPI.Exception after all
        what = str(err)
    peer = "transmitter" if ROLE[role] == "r" else "receiver"
    return (f"MPI error with the {peer} of pair {pair} (it died, or its link failed): "
            f"{type(err).__name__}: {what}")


def _measure(comm, opts, capture: io.StringIO, pair: int = 0, role: int = 0) -> int:
    """txrx's run on the pair's communicator, its lines (and its one ERROR line) in capture."""
    from mpi4py import MPI

    from fabrictest.txrx.run import run

    log = logging.getLogger(LOGGER)
    handler = logging.StreamHandler(capture)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.DEBUG if opts.verbose else logging.INFO)
    with redirect_stdout(capture):
        try:
            return run(comm, opts)
        except TxrxError as err:
            log.error(str(err))
            return err.exit_code
        except MPI.Exception as err:
            log.error(_peer_failed(pair, role, err))
            return EXIT_FAULT
        except Exception as err:  # one pair's failure, reported as its own
            log.error(f"internal error: {type(err).__name__}: {err}")
            return EXIT_FAULT


def main(argv=None) -> int:
    ns, rest = _args(sys.argv[1:] if argv is None else argv)
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if ns.pairs < 1 or size != 2 * ns.pairs:
        if rank == 0:
            print(f"ERROR:{LOGGER}:--pairs {ns.pairs} needs {2 * ns.pairs} ranks, got {size}",
                  file=sys.stderr, flush=True)
        return EXIT_USAGE
    pair, role = role_in_world(rank, ns.pairs)
    try:
        opts = parse(["--nrx", "1", "--nlink", "1", *rest])
        validate(opts, 2)
    except UsageError as err:
        _say(pair, role, f"ERROR:{LOGGER}:{err}")
        return EXIT_USAGE
    if ns.fault_pair != pair:
        opts = dataclasses.replace(opts, fault=None)
    # the kernel ends this rank HARD_GRACE s after the limit whatever holds the interpreter (a
    # compiled loop, MPI_Finalize spinning on a dead rank's fence never yield the GIL to the
    # watchdog thread): SIGALRM's default action terminates, no Python handler needed
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, ns.limit + HARD_GRACE)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # Hydra's notice that a rank ended (above)
    done, code = threading.Event(), [EXIT_FAULT]
    threading.Thread(target=_watchdog, args=(pair, role, ns.limit, done, code),
                     daemon=True).start()
    group = world.Get_group().Incl(world_ranks(pair, ns.pairs))
    comm = world.Create_group(group, tag=1)
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    capture = io.StringIO()
    code[0] = _measure(comm, opts, capture, pair, role)
    _say(pair, role, capture.getvalue())
    done.set()
    return code[0]


if __name__ == "__main__":
    sys.exit(main())

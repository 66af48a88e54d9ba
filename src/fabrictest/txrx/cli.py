"""`txrx`: command line, logging and the top-level error policy.

Errors print one line `ERROR:__main__:<message>` on stderr and every rank exits non-zero:
- usage errors (options, world size) are found identically by every rank before any
  communication: rank 0 prints, every rank exits 2;
- missing resources (RDMA device, pyverbs, CuPy, GPU, CUDA-aware MPI, memory) are agreed on
  collectively: rank 0 prints the first, every rank exits 2;
- faults during a run (a deadline, a dead peer, a verbs error) print on the rank that sees
  them and abort the job (MPI_Abort, exit 1), so that no rank waits forever;
- a completed run whose receivers missed or found corrupt messages exits 3 on every rank.
Tracebacks only with -v.
"""

from __future__ import annotations

import logging
import sys
import traceback

from fabrictest.txrx.argv import EPILOG, build_parser, parse  # noqa: F401 (txrx's API)
from fabrictest.txrx.errors import EXIT_FAULT, TxrxError, UsageError, refuse
from fabrictest.txrx.options import validate
from fabrictest.txrx.output import LOGGER

log = logging.getLogger(LOGGER)


def setup_logging(verbose: int = 0) -> None:
    fmt = logging.Formatter("%(levelname)s:%(name)s:%(message)s")
    out = logging.StreamHandler(sys.stdout)
    out.setFormatter(fmt)
    out.addFilter(lambda rec: rec.levelno < logging.WARNING)
    err = logging.StreamHandler(sys.stderr)
    err.setFormatter(fmt)
    err.setLevel(logging.WARNING)
    log.handlers[:] = [out, err]
    log.propagate = False
    log.setLevel(logging.DEBUG if verbose else logging.INFO)


def _rank_from_env() -> int:
    import os

    for name in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def run_main(argv=None) -> int:
    verbose = "-v" in (argv or sys.argv[1:]) or "--verbose" in (argv or sys.argv[1:])
    setup_logging(verbose)
    usage = None
    opts = None
    try:
        opts = parse(argv)
        validate(opts)
    except UsageError as err:
        usage = err
    except SystemExit as err:  # --help
        return int(err.code or 0)
    if usage is not None:
        # before MPI starts: every rank parsed the same argv, so only rank 0 says so
        rank = _rank_from_env()
        if rank == 0:
            log.error(str(usage))
        return refuse(rank)
    try:
        from mpi4py import MPI
    except ImportError as err:
        log.error(f"mpi4py cannot be imported ({err}): install mpi4py against your MPI")
        return EXIT_FAULT
    comm = MPI.COMM_WORLD.Dup()
    rank = comm.Get_rank()
    try:
        validate(opts, comm.Get_size())
    except UsageError as err:
        if rank == 0:
            log.error(str(err))
        return refuse(rank)
    try:
        from fabrictest.txrx.run import run

        return run(comm, opts)
    except UsageError as err:
        log.error(str(err))
        _abort(comm, err.exit_code)
    except TxrxError as err:
        log.error(str(err))
        if opts.verbose:
            traceback.print_exc()
        _abort(comm, err.exit_code)
    except KeyboardInterrupt:
        log.error(f"rank {rank} interrupted")
        _abort(comm, EXIT_FAULT)
    except Exception as err:
        log.error(f"rank {rank}: internal error: {type(err).__name__}: {err} (-v for the traceback)")
        if opts.verbose:
            traceback.print_exc()
        _abort(comm, EXIT_FAULT)
    return EXIT_FAULT


ABORT_DELAY = 0.2  # seconds for mpirun to relay our one line before its own abort notice


def _abort(comm, code: int) -> None:
    import time

    sys.stdout.flush()
    sys.stderr.flush()
    time.sleep(ABORT_DELAY)
    comm.Abort(code)


def main(argv=None) -> None:
    sys.exit(run_main(argv))


if __name__ == "__main__":
    main()

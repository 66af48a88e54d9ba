"""Errors the tool reports as one line (`ERROR:__main__:<message>`) with a non-zero exit."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAULT = 1  # a fault at run time: a peer gone, a deadline passed, a verbs error
EXIT_USAGE = 2  # bad options, a world size that does not fit, a missing device or library
EXIT_LOSS = 3  # the run completed but messages were missed or arrived corrupt


class TxrxError(Exception):
    """Base class: `str(err)` is the one line printed for the user."""

    exit_code = EXIT_FAULT


class UsageError(TxrxError):
    """The options or the environment cannot work; every rank finds it out the same way."""

    exit_code = EXIT_USAGE


class Unavailable(UsageError):
    """A resource this rank needs is missing here (RDMA device, pyverbs, CuPy, GPU, CUDA-aware MPI).

    Ranks may differ (one host lacks a device), so ranks agree on it collectively before exiting.
    """


class Fault(TxrxError):
    """A failure in the middle of a run (deadline, dead peer, completion error): abort the job."""

    exit_code = EXIT_FAULT


RANK0_FIRST = 0.5  # seconds the other ranks wait before exiting on a refusal


def refuse(rank: int) -> int:
    """Exit status of a refusal on `rank`: rank 0 (which prints the one line) exits first, so
    that mpirun reports its status and relays its line before it ends the other ranks."""
    if rank != 0:
        import time

        time.sleep(RANK0_FIRST)
    return EXIT_USAGE

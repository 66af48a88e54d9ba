"""txrx's command line, parsed into Options: one parser for `txrx` and for the pairs job
(txrx.pairs), which runs the same options once per node pair inside one MPI job."""

from __future__ import annotations

import argparse

from fabrictest.txrx.errors import UsageError
from fabrictest.txrx.options import (
    BUFFERS,
    DEFAULT_MSG_SIZE,
    DEFAULT_NMSG,
    DEFAULT_NUM_BLKS,
    DEFAULT_NUM_CMSGS,
    DEFAULT_TIMEOUT,
    METHODS,
    PROGRESS_INTERVAL,
    TESTS,
    TRANSPORTS,
    Options,
    parse_fault,
    parse_int,
)


def integer(text: str) -> int:
    return parse_int(text)


def number(text: str) -> float:
    return float(str(text).replace("_", ""))


def fault(text: str):
    try:
        return parse_fault(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage block
        raise UsageError(message)


EPILOG = """\
examples:
  mpirun -np 2 txrx --method mpi --nmsg 20000          one stream over MPI, 64 KiB messages
  mpirun -np 2 txrx --nmsg 100_000 --msg-size 65_536   one stream over RDMA (UC), the default
  mpirun -np 3 txrx --nrx 1 --nlink 2 --method mpi     two transmitters into one receiver
  mpirun -np 2 txrx --method mpi --test increment --inject-loss 0.01
                                                       see the loss check fail (exit 3)
  mpirun -np 2 txrx --nmsg 50_000_000 --quiet          a long run without progress lines

output: per stream, the receiver's elapsed time, data rate, messages missed, received, total
and loss rate, and each transmitter's elapsed time and rate (stdout). During a run longer than
--progress seconds rank 0 prints on stderr every --progress seconds how much of its streams
arrived, the rate so far and the time left (--quiet: none).

exit status:
  0  every stream whole: no message missed or corrupt
  1  a fault during the run (a deadline passed, a peer died, a verbs error): the job is aborted
  2  bad options or world size, or a missing resource (RDMA device, pyverbs, CuPy, GPU,
     CUDA-aware MPI, memory), found before any message is sent
  3  the run completed but messages were missed or arrived corrupt
Errors are one line, ERROR:__main__:<message>, on stderr (-v adds tracebacks).
"""


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="txrx",
        description="Stream numbered messages from transmitters into receivers over RDMA or "
        "MPI and report data rate and message loss per stream (launch with mpirun -np NRX+NLINK).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    a = p.add_argument
    a("--nrx", type=integer, default=1, help="number of receiver ranks (ranks 0..nrx-1)")
    a("--nlink", type=integer, default=1, help="number of transmitter ranks; t sends to t %% nrx")
    a("--method", choices=METHODS, default="rdma", help="data path (default rdma)")
    a("--msg-size", type=integer, default=DEFAULT_MSG_SIZE,
      help=f"bytes per message, a multiple of 8 (default {DEFAULT_MSG_SIZE})")
    a("--num-blks", type=integer, default=DEFAULT_NUM_BLKS,
      help=f"blocks in the ring buffer (default {DEFAULT_NUM_BLKS})")
    a("--num-cmsgs", type=integer, default=DEFAULT_NUM_CMSGS,
      help=f"messages per block (default {DEFAULT_NUM_CMSGS})")
    a("--nmsg", type=integer, default=DEFAULT_NMSG,
      help=f"messages per transmitter (default {DEFAULT_NMSG})")
    a("--test", choices=TESTS, default="throughput", help="payload check (default throughput)")
    a("--buffer", choices=BUFFERS, default="host", help="message buffers in host or GPU memory")
    a("--transport", choices=TRANSPORTS, default="uc", help="RDMA queue pair type (default uc)")
    a("--device", default=None, help="RDMA device (default: the first with an active port)")
    a("--port", type=integer, default=1, help="RDMA port (default 1)")
    a("--gid-index", type=integer, default=None, help="GID index (default: a RoCE v2 GID)")
    a("--timeout", type=number, default=DEFAULT_TIMEOUT,
      help=f"seconds any wait may last without progress (default {DEFAULT_TIMEOUT:g})")  # fmt: skip
    a("--json", default=None, metavar="PATH", help="write every rank's results to PATH (rank 0)")
    a("--inject-loss", type=number, default=0.0, metavar="FRACTION",
      help="transmitters skip this fraction of sequence numbers (testing)")  # fmt: skip
    a("--seed", type=integer, default=0, help="seed of --inject-loss (default 0)")
    a("--progress", type=number, default=PROGRESS_INTERVAL, metavar="SECONDS",
      help=f"seconds between rank 0's progress lines on stderr (default {PROGRESS_INTERVAL:g})")  # fmt: skip
    a("--line-rate", type=number, default=None, metavar="GBPS",
      help="the port's line rate: say whether the tool's own time per message could fill it "
      "(tool-bound) (default: the RDMA port's rate from sysfs; none with --method mpi)")  # fmt: skip
    a("-q", "--quiet", action="store_true", help="no progress lines")
    a("-v", "--verbose", action="count", default=0, help="debug output and tracebacks")
    a("--fault", type=fault, default=None, help=argparse.SUPPRESS)
    return p


def parse(argv=None) -> Options:
    ns = build_parser().parse_args(argv)
    return Options(**vars(ns))

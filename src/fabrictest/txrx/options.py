"""Options of the `txrx` command and their validation (pure: no MPI, no devices).

Buffer limits (docs/txrx.md repeats them):
- `--msg-size` is a multiple of 8 bytes between 8 B and 1 GiB: every message starts with its
  64-bit sequence number and the data checks work on 64-bit words;
- a ring (`--num-blks` x `--num-cmsgs` slots) has at most 1,048,576 slots;
- one rank's buffers (`streams x slots x msg_size`; a receiver has one ring per transmitter)
  are at most 16 GiB, and at most half of the host's memory (checked on every host at start);
- `--nmsg` is at most 2**32 with `--method rdma` (the immediate data is 32 bits wide).

Count and time limits (what is allocated per message): no rank keeps anything per message,
except a transmitter with `--inject-loss`, which holds the sorted list of the sequence numbers
it skips (8 bytes each, at most 16,777,216 of them: 128 MiB). Byte counts are 64-bit signed
integers, so `--nmsg x --msg-size` is at most 2**63 - 1. `--inject-loss` must skip at least one
message and leave at least one. `--timeout` is finite, above 0 and at most one hour.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

METHODS = ("rdma", "mpi")
TESTS = ("throughput", "ones", "increment")
BUFFERS = ("host", "cuda")
TRANSPORTS = ("uc", "rc")
FAULT_KINDS = ("stop", "stall", "die", "freeze", "corrupt")

# What shapes a figure unless asked otherwise (the SEREN tx/rx notes' values): the message
# size, the ring's blocks and messages per block, the messages per stream. Written here only:
# the command line, the sweep and the ReFrame tests take their defaults from these.
DEFAULT_MSG_SIZE = 65536
DEFAULT_NUM_BLKS = 10
DEFAULT_NUM_CMSGS = 100
DEFAULT_NMSG = 100_000

MIN_MSG_SIZE = 8
MSG_ALIGN = 8
MAX_MSG_SIZE = 1 << 30
MAX_SLOTS = 1 << 20
MAX_RANK_BUFFER = 16 << 30
MAX_RDMA_NMSG = 1 << 32
DEFAULT_TIMEOUT = 60.0
#: seconds between rank 0's progress lines on stderr (--progress)
PROGRESS_INTERVAL = 5.0
MAX_TIMEOUT = 3600.0  # no wait in the tool needs an hour without progress
MAX_STREAM_BYTES = (1 << 63) - 1  # byte counts are int64 in the JSON and in numpy
MAX_LINE_RATE = 10_000.0  # Gbps: above any port built (--line-rate)
MAX_SKIPPED = 1 << 24  # skipped sequence numbers a transmitter lists (8 bytes each: 128 MiB)


@dataclass(frozen=True)
class FaultSpec:
    """A testing fault (hidden option `--fault KIND:RANK:N`).

    stop:  transmitter RANK sends only sequence numbers < N but reports the full count (tail loss)
    stall: transmitter RANK stops after N messages and goes silent (its receiver's deadline fires)
    die:   RANK kills itself (SIGKILL) after N messages sent or received (a peer that dies)
    freeze: RANK stops itself (SIGSTOP) after N messages: no thread of it runs, not even its
           watchdog, until something outside ends it (a rank held by a debugger, a hung node)
    corrupt: transmitter RANK flips one payload byte of every message whose sequence number is
           a multiple of N (`--method mpi --test increment`)
    """

    kind: str
    rank: int
    after: int


@dataclass(frozen=True)
class Options:
    nrx: int = 1
    nlink: int = 1
    method: str = "rdma"
    msg_size: int = DEFAULT_MSG_SIZE
    num_blks: int = DEFAULT_NUM_BLKS
    num_cmsgs: int = DEFAULT_NUM_CMSGS
    nmsg: int = DEFAULT_NMSG
    test: str = "throughput"
    buffer: str = "host"
    transport: str = "uc"
    device: str | None = None
    port: int = 1
    gid_index: int | None = None
    timeout: float = DEFAULT_TIMEOUT
    json: str | None = None
    inject_loss: float = 0.0
    seed: int = 0
    verbose: int = 0
    quiet: bool = False  # no progress line
    progress: float = PROGRESS_INTERVAL  # seconds between rank 0's progress lines
    line_rate: float | None = None  # Gbps the port should carry (bottleneck: tool-bound or not)
    fault: FaultSpec | None = field(default=None)

    @property
    def slots(self) -> int:
        return self.num_blks * self.num_cmsgs

    @property
    def world_size(self) -> int:
        return self.nrx + self.nlink

    def max_streams(self) -> int:
        """Streams of the busiest receiver (receiver 0 has ceil(nlink / nrx))."""
        return -(-self.nlink // self.nrx)

    def rank_buffer_bytes(self, streams: int) -> int:
        return streams * self.slots * self.msg_size


def parse_int(text: str) -> int:
    """An integer as the SEREN tx/rx notes write them: `100_000`, `65_536`, also `0x10`."""
    try:
        return int(str(text).strip(), 0)
    except ValueError:
        raise ValueError(f"invalid integer {text!r}") from None


def parse_fault(text: str) -> FaultSpec:
    parts = str(text).split(":")
    if len(parts) != 3 or parts[0] not in FAULT_KINDS:
        raise ValueError(f"invalid fault {text!r}: expected KIND:RANK:N with KIND in {FAULT_KINDS}")
    return FaultSpec(parts[0], parse_int(parts[1]), parse_int(parts[2]))


def skipped_count(nmsg: int, fraction: float) -> int:
    """Sequence numbers `--inject-loss fraction` skips per transmitter: round(fraction * nmsg)."""
    return int(round(fraction * nmsg)) if fraction > 0 else 0


def human_bytes(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def _check_inject_loss(opts: Options) -> None:
    from fabrictest.txrx.errors import UsageError

    if opts.inject_loss <= 0:
        return
    k = skipped_count(opts.nmsg, opts.inject_loss)
    what = f"--inject-loss {opts.inject_loss:g} x --nmsg {opts.nmsg}"
    if k == 0:
        raise UsageError(
            f"{what} skips no message (round({opts.inject_loss * opts.nmsg:g}) = 0), so the run"
            f" would not test loss accounting: use --nmsg >= {math.ceil(1 / opts.inject_loss)}"
            " or a larger fraction"
        )
    if k >= opts.nmsg:
        raise UsageError(f"{what} skips every message: nothing would be sent")
    if k > MAX_SKIPPED:
        raise UsageError(
            f"{what} = {k} skipped messages per transmitter exceeds the limit of {MAX_SKIPPED}"
            " (a transmitter lists them, 8 bytes each): lower --nmsg or --inject-loss"
        )


def option_problem(method: str = "mpi", **values) -> str | None:
    """Why txrx would refuse these options (one line, its own words), or None: the tool's
    rules, for callers that pass options on (the ReFrame families, ``fabric-sweep``) and must
    refuse them before any launch. ``values``: :class:`Options` fields; unset ones take the
    tool's defaults, one receiver and one transmitter."""
    from fabrictest.txrx.errors import UsageError

    known = {f.name for f in dataclasses.fields(Options)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise TypeError(f"not txrx options: {', '.join(unknown)}")
    try:
        validate(Options(nrx=1, nlink=1, method=method,
                         **{k: v for k, v in values.items() if v is not None}))
    except UsageError as err:
        return str(err)
    return None


def validate(opts: Options, world_size: int | None = None) -> None:
    """Raise UsageError (one line) for options that cannot work; `world_size` from MPI."""
    from fabrictest.txrx.errors import UsageError

    if opts.method not in METHODS:
        raise UsageError(f"unknown --method {opts.method!r}: choose one of {', '.join(METHODS)}")
    if opts.test not in TESTS:
        raise UsageError(f"unknown --test {opts.test!r}: choose one of {', '.join(TESTS)}")
    if opts.buffer not in BUFFERS:
        raise UsageError(f"unknown --buffer {opts.buffer!r}: choose one of {', '.join(BUFFERS)}")
    if opts.transport not in TRANSPORTS:
        raise UsageError(
            f"unknown --transport {opts.transport!r}: choose one of {', '.join(TRANSPORTS)}"
        )
    for name in ("nrx", "nlink", "msg_size", "num_blks", "num_cmsgs", "nmsg"):
        value = getattr(opts, name)
        if value <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive, got {value}")
    if not (math.isfinite(opts.timeout) and 0 < opts.timeout <= MAX_TIMEOUT):
        raise UsageError(
            f"--timeout must be a finite number of seconds above 0 and at most {MAX_TIMEOUT:g}"
            f" (one hour), got {opts.timeout}"
        )
    if not (math.isfinite(opts.progress) and 0 < opts.progress <= MAX_TIMEOUT):
        raise UsageError(
            f"--progress must be a finite number of seconds above 0 and at most {MAX_TIMEOUT:g},"
            f" got {opts.progress} (--quiet turns the progress line off)"
        )
    if opts.line_rate is not None and not (
        math.isfinite(opts.line_rate) and 0 < opts.line_rate <= MAX_LINE_RATE
    ):
        raise UsageError(
            f"--line-rate must be a finite number of Gbps above 0 and at most {MAX_LINE_RATE:g},"
            f" got {opts.line_rate}"
        )
    if opts.port <= 0:
        raise UsageError(f"--port must be positive, got {opts.port}")
    if opts.gid_index is not None and opts.gid_index < 0:
        raise UsageError(f"--gid-index must be 0 or more, got {opts.gid_index}")
    if not 0.0 <= opts.inject_loss < 1.0:
        raise UsageError(f"--inject-loss must be in [0, 1), got {opts.inject_loss}")
    if opts.nmsg * opts.msg_size > MAX_STREAM_BYTES:
        raise UsageError(
            f"--nmsg {opts.nmsg} x --msg-size {opts.msg_size} bytes per stream does not fit the"
            f" 64-bit byte counters (at most 2**63-1 bytes): lower --nmsg"
        )
    _check_inject_loss(opts)
    if opts.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {opts.seed}")
    if opts.msg_size < MIN_MSG_SIZE or opts.msg_size > MAX_MSG_SIZE or opts.msg_size % MSG_ALIGN:
        raise UsageError(
            f"--msg-size {opts.msg_size} does not fit the buffer limits: a multiple of {MSG_ALIGN} "
            f"bytes from {MIN_MSG_SIZE} B to {human_bytes(MAX_MSG_SIZE)}"
        )
    if opts.slots > MAX_SLOTS:
        raise UsageError(
            f"--num-blks x --num-cmsgs = {opts.slots} slots exceeds the limit of {MAX_SLOTS}"
        )
    need = opts.rank_buffer_bytes(opts.max_streams())
    if need > MAX_RANK_BUFFER:
        raise UsageError(
            f"buffers of {need} bytes per rank ({opts.max_streams()} stream(s) x {opts.slots} slots"
            f" x {opts.msg_size} B) exceed the limit of {human_bytes(MAX_RANK_BUFFER)}:"
            " lower --num-blks, --num-cmsgs or --msg-size"
        )
    if opts.method == "rdma" and opts.nmsg > MAX_RDMA_NMSG:
        raise UsageError(
            f"--nmsg {opts.nmsg} exceeds {MAX_RDMA_NMSG} (32-bit immediate data) with --method rdma"
        )
    if opts.method == "rdma" and opts.buffer != "host":
        raise UsageError("--buffer cuda works with --method mpi only (GPUDirect RDMA is not supported)")
    if opts.fault is not None:
        if opts.fault.after < 0:
            raise UsageError(f"--fault count must be 0 or more, got {opts.fault.after}")
        if not 0 <= opts.fault.rank < opts.nrx + opts.nlink:
            raise UsageError(f"--fault rank {opts.fault.rank} is not a rank of this run")
        if opts.fault.kind in ("stop", "stall", "corrupt") and opts.fault.rank < opts.nrx:
            raise UsageError(f"--fault {opts.fault.kind} needs a transmitter rank (>= {opts.nrx})")
        if opts.fault.kind == "corrupt" and (
            opts.method != "mpi" or opts.test != "increment" or opts.fault.after < 1
            or opts.buffer != "host" or opts.msg_size < 16
        ):  # fmt: skip
            raise UsageError("--fault corrupt:RANK:N needs --method mpi, host buffers, --test"
                             " increment (every payload rewritten), a payload (--msg-size >= 16)"
                             " and N >= 1 (the rdma method has the simulated provider's"
                             " corrupt=F)")
    if opts.nlink < opts.nrx:
        raise UsageError(
            f"--nlink {opts.nlink} is smaller than --nrx {opts.nrx}: every receiver needs a transmitter"
        )
    if world_size is not None and world_size != opts.nrx + opts.nlink:
        raise UsageError(
            f"world size is {world_size} but --nrx {opts.nrx} + --nlink {opts.nlink} = "
            f"{opts.nrx + opts.nlink}: launch with mpirun -np {opts.nrx + opts.nlink}"
        )

"""The tool's log lines (the SEREN tool's, kept verbatim) and its JSON record.

Every line reads `INFO:__main__:<message>`: Python logging's default format with the logger
name the old script had when run as a program. A rank writes all its lines at once so that
lines of different ranks interleave only between groups. docs/txrx.md lists every line.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass, field

from fabrictest.txrx.bottleneck import LoopTime, Verdict
from fabrictest.txrx.bottleneck import line as own_time_line

PREFIX = "INFO:__main__:"
LOGGER = "__main__"


@dataclass
class TxReport:
    rank: int
    index: int
    peer: int  # world rank of the receiver
    host: str
    msg_size: int
    sent: int  # messages posted
    total: int  # sequence numbers covered (skipped ones included): the final count reported
    elapsed: float
    simulated: dict | None = None  # the simulated verbs provider's counters (None: real run)
    peer_host: str = ""  # host of the receiver ("": not known)
    own: LoopTime | None = None  # the loop's own time (bottleneck)
    verdict: Verdict | None = None  # tool-bound or not, once the line rate is known
    loop: str | None = None  # the mpi method's loop: "compiled" or "python" (None: rdma)

    @property
    def bytes(self) -> int:
        return self.sent * self.msg_size

    @property
    def gbps(self) -> float:
        return gbps(self.bytes, self.elapsed)

    def record(self) -> dict:
        return {
            "rank": self.rank,
            "role": "transmitter",
            "index": self.index,
            "host": self.host,
            "peer": self.peer,
            "peer_host": self.peer_host,
            "peers": [self.peer],
            "bytes": self.bytes,
            "messages_sent": self.sent,
            "messages_total": self.total,
            "elapsed_s": self.elapsed,
            "gbps": self.gbps,
            "loop": self.loop,
            **_verdict_record(self.verdict),
            **_sim_record(self.simulated),
        }


def _verdict_record(v: Verdict | None) -> dict:
    return {} if v is None else v.record()


def _sim_record(sim: dict | None) -> dict:
    return {} if sim is None else {"simulated": True, "sim": sim}


@dataclass
class StreamReport:
    stream: int  # receiver-local index K
    peer: int  # world rank of the transmitter
    msg_size: int
    received: int
    missed: int
    total: int
    loss_rate: float
    corrupt: int
    elapsed: float
    gaps: int = 0
    bad: int = 0
    simulated: dict | None = None  # the simulated verbs provider's counters of this stream's QP
    peer_host: str = ""  # host of the transmitter ("": not known)

    @property
    def bytes(self) -> int:
        return self.received * self.msg_size

    @property
    def gbps(self) -> float:
        return gbps(self.bytes, self.elapsed)

    def record(self) -> dict:
        return {
            "stream": self.stream,
            "peer": self.peer,
            "peer_host": self.peer_host,
            "bytes": self.bytes,
            "messages_received": self.received,
            "messages_missed": self.missed,
            "messages_total": self.total,
            "messages_corrupt": self.corrupt,
            "loss_rate": self.loss_rate,
            "loss_events": self.gaps,
            "out_of_order": self.bad,
            "elapsed_s": self.elapsed,
            "gbps": self.gbps,
            **_sim_record(self.simulated),
        }


@dataclass
class RxReport:
    rank: int
    index: int
    host: str
    streams: list[StreamReport] = field(default_factory=list)
    simulated: dict | None = None  # the simulated provider's process-wide figures
    own: LoopTime | None = None  # the loop's own time over all streams (bottleneck)
    verdict: Verdict | None = None
    loop: str | None = None  # the mpi method's loop: "compiled" or "python" (None: rdma)

    def record(self) -> dict:
        s = self.streams
        elapsed = max((x.elapsed for x in s), default=0.0)
        nbytes = sum(x.bytes for x in s)
        total = sum(x.total for x in s)
        missed = sum(x.missed for x in s)
        return {
            "rank": self.rank,
            "role": "receiver",
            "index": self.index,
            "host": self.host,
            "peers": [x.peer for x in s],
            "bytes": nbytes,
            "messages_received": sum(x.received for x in s),
            "messages_missed": missed,
            "messages_total": total,
            "messages_corrupt": sum(x.corrupt for x in s),
            "loss_rate": missed / total if total else 0.0,
            "elapsed_s": elapsed,
            "gbps": gbps(nbytes, elapsed),
            "loop": self.loop,
            **_verdict_record(self.verdict),
            **_sim_record(self.simulated),
            "streams": [x.record() for x in s],
        }


def gbps(nbytes: int, elapsed: float) -> float:
    """Payload bits / elapsed seconds / 1e9 (decimal Gbps, as perftest and the seed)."""
    return nbytes * 8 / elapsed / 1e9 if elapsed > 0 else 0.0


def buffer_line(host: str, kind: str, shape: tuple[int, ...]) -> str:
    return f"{host}, rdma_buffers for {kind} shape is {tuple(shape)}"


def transmitter_lines(rep: TxReport) -> list[str]:
    who = f"Rank {rep.index} transmitter"
    out = [
        f"{who} elapsed time is {float(rep.elapsed)} seconds",
        f"{who} data rate is {float(rep.gbps)} Gbps",
    ]
    if rep.peer_host:
        out.append(f"{who} {link_words(rep.host, rep.rank, rep.peer_host, rep.peer)}")
    if rep.verdict is not None:
        out.append(own_time_line(who, rep.verdict))
    if rep.simulated is not None:
        s = rep.simulated
        out.append(
            f"{who} verbs provider is simulated: {s.get('sent', 0)} writes sent,"
            f" {s.get('dropped', 0)} dropped, {s.get('corrupted', 0)} corrupted,"
            f" {s.get('retransmitted', 0)} retransmitted"
        )
    return out


def link_words(tx_host: str, tx_rank: int, rx_host: str, rx_rank: int) -> str:
    """`link is node03 (rank 4) -> node01 (rank 0)`: transmitter end first (world ranks)."""
    return f"link is {tx_host} (rank {tx_rank}) -> {rx_host} (rank {rx_rank})"


def stream_lines(rx_index: int, s: StreamReport, host: str = "") -> list[str]:
    """A stream's lines; with `host` (the receiver's) and the transmitter's host known, a
    `link is` line naming both ends (receiver rank == receiver index)."""
    who = f"Rank {rx_index} receiver from transmitter {s.stream}"
    link = [f"{who}, {link_words(s.peer_host, s.peer, host, rx_index)}"]
    return [
        f"{who}, elapsed time is {float(s.elapsed)} seconds",
        f"{who}, data rate is {float(s.gbps)} Gbps",
        f"{who}, message missed is {int(s.missed)}",
        f"{who}, message received is {int(s.received)}",
        f"{who}, message total is {int(s.total)}",
        f"{who}, message loss rate is {float(s.loss_rate)}",
        f"{who}, message corrupt is {int(s.corrupt)}",
    ] + (link if host and s.peer_host else []) + _sim_stream_line(who, s.simulated)


def _sim_stream_line(who: str, sim: dict | None) -> list[str]:
    if sim is None:
        return []
    return [
        f"{who}, verbs provider is simulated: {sim.get('landed', 0)} writes landed,"
        f" {sim.get('lost', 0)} lost on the wire, {sim.get('no_receive', 0)} without a posted"
        f" receive, {sim.get('access_errors', 0)} refused (rkey/bounds),"
        f" {sim.get('psn_resyncs', 0)} PSN resyncs"
    ]


def receiver_lines(rep: RxReport) -> list[str]:
    out: list[str] = []
    for s in rep.streams:
        out += stream_lines(rep.index, s, rep.host)
        out.append("")
    if rep.verdict is not None:
        out += [own_time_line(f"Rank {rep.index} receiver", rep.verdict), ""]
    return out


def emit(lines: list[str], stream=None) -> None:
    """Write `lines` in one write: `INFO:__main__:` before each, blank lines kept blank."""
    stream = stream or sys.stdout
    text = "".join(f"{PREFIX}{x}\n" if x else "\n" for x in lines)
    stream.write(text)
    stream.flush()


def json_path_problem(path: str) -> str | None:
    """Why `--json PATH` cannot be written (or None): checked by rank 0 before any traffic.

    PATH is written by renaming a new file over it, so it must be absent or a regular file: a
    symbolic link or a special file (a device, a pipe, a socket) is refused, never replaced
    (as root, `--json /dev/full` once replaced the device with a file). The directory must
    exist; writability is proven by creating and removing the temporary file the final write
    uses (os.access is not enough: root passes it on a read-only or pseudo file system).
    """
    bad = _not_a_regular_file(path)
    if bad:
        return bad
    where = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(where):
        return f"--json {path}: directory {where} does not exist"
    tmp = _tmp_name(path)
    try:
        os.close(_create(tmp))
    except OSError as err:
        return f"--json {path} cannot be written: {err.strerror or err}"
    try:
        os.unlink(tmp)
    except OSError:
        pass
    return None


_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_a_regular_file(path: str) -> str | None:
    """Why PATH may not be replaced by the JSON file (None: absent or a regular file)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"--json {path} cannot be checked: {err.strerror or err}"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return (
        f"--json {path} is {kind}: txrx writes its results only to a new or regular file, "
        "never over a link, directory or special file; give another path"
    )


def _tmp_name(path: str) -> str:
    return f"{path}.tmp{os.getpid()}"


def _create(tmp: str) -> int:
    """A new file at `tmp`: never one already there, never through a symbolic link."""
    return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)


def write_json(path: str, doc: dict) -> None:
    """Write `doc` atomically (a temporary file renamed into place, removed on failure); PATH
    is looked at again just before: if it became a link or a special file meanwhile, it is
    left alone and the run fails."""
    from fabrictest.txrx.errors import Fault

    tmp = _tmp_name(path)
    try:
        with os.fdopen(_create(tmp), "w") as f:
            json.dump(doc, f, indent=2, sort_keys=False)
            f.write("\n")
        bad = _not_a_regular_file(path)
        if bad:
            os.unlink(tmp)
            raise Fault(f"{bad} (it changed during the run; results not written)")
        os.replace(tmp, path)
    except OSError as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise Fault(f"--json {path} could not be written: {err.strerror or err}") from None

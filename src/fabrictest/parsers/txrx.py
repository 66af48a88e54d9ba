"""Log lines of the tx/rx tool (the SEREN tx/rx notes' ``run_cluster_messages.py`` and our
``txrx``).

Lines are matched anywhere in a line (so ``INFO:__main__:`` or an mpirun ``[1,0]<stdout>:``
prefix does not matter) and may interleave arbitrarily between ranks; other lines
(``INFO:	Receive Visibilities ending 1``) are ignored. Receiver lines::

    Rank R receiver from transmitter K, elapsed time is X seconds
    Rank R receiver from transmitter K, data rate is X Gbps
    Rank R receiver from transmitter K, message missed is N
    Rank R receiver from transmitter K, message received is N
    Rank R receiver from transmitter K, message total is N
    Rank R receiver from transmitter K, message loss rate is X
    Rank R receiver from transmitter K, message corrupt is N      (ours: --test ones/increment)

    Rank R receiver from transmitter K, link is HOST (rank W) -> HOST (rank R)   (ours)

Transmitter lines: ``Rank T transmitter elapsed time is X seconds``,
``Rank T transmitter data rate is X Gbps``, ``Rank T transmitter link is HOST (rank W) -> HOST
(rank R)`` (ours). The ``link is`` lines name the hosts at both ends of a stream (transmitter
first) and the ranks' world ranks; the seed's tool does not print them. ``verbs provider is
simulated`` (ours, ``--method rdma`` over ``FABRICTEST_VERBS=sim``) marks a simulated run. Buffers:
``HOST, rdma_buffers for receiver shape is (1, 10, 100, 65536)``. Errors: lines whose
message starts with ``ERROR:``.

Identity (docs/parsers.md): each line of a stream or transmitter once (a repeat, e.g. the log
printed twice, is ParseError, never first- or last-wins), rates in ``Gbps`` and times in
``seconds`` (another unit is ParseError); :func:`above_line_rate` refuses a rate no link or
host can carry. Ours, once per rank: ``Rank R receiver own time per message is
X us (Y us at the line rate of L Gbps): tool-bound`` (or ``not tool-bound``; without a line
rate ``(line rate unknown: ...)``): a tool-bound rank could not fill the link, its figures
measure the tool (:meth:`TxrxReport.tool_bound`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields

from . import physical
from ._util import ends_mid_line, require_text
from .errors import ParseError

_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"
_UNIT = r"(?![\w.])(?:[ \t]+(?P<unit>[A-Za-z/]+))?"
_RX = re.compile(
    r"Rank (\d+) receiver from transmitter (\d+), "
    r"(elapsed time|data rate|message missed|message received|message total|"
    r"message loss rate|message corrupt) is " + _NUM + _UNIT
)
_TX = re.compile(r"Rank (\d+) transmitter (elapsed time|data rate) is " + _NUM + _UNIT)
#: the unit each figure is printed in (counts and the loss rate have none)
_UNITS = {"elapsed time": "seconds", "data rate": "Gbps"}
_BUF = re.compile(
    r"(?:^|:)([^\s:,][^,:]*), rdma_buffers for (receiver|transmitter) shape is \(([^)]*)\)"
)
_LINK = r"link is (\S+) \(rank (\d+)\) -> (\S+) \(rank (\d+)\)"
_RX_LINK = re.compile(r"Rank (\d+) receiver from transmitter (\d+), " + _LINK)
_TX_LINK = re.compile(r"Rank (\d+) transmitter " + _LINK)
_SIMULATED = re.compile(r"verbs provider is simulated")
_ERROR = re.compile(r"(?:^|[\s>\]:])(ERROR:.*)$")
#: ours: each rank's own time per message and, with a line rate, whether it is tool-bound
_OWN = re.compile(
    r"Rank (\d+) (receiver|transmitter) own time per message is (?:" + _NUM + r" us|unknown)"
    r"(?: \(" + _NUM + r" us at the line rate of " + _NUM + r" Gbps\): "
    r"(tool-bound|not tool-bound|not judged))?"
)

_RX_FIELD = {
    "elapsed time": "elapsed_s",
    "data rate": "gbps",
    "message missed": "missed",
    "message received": "received",
    "message total": "total",
    "message loss rate": "loss_rate",
    "message corrupt": "corrupt",
}
_INT_FIELDS = {"missed", "received", "total", "corrupt"}


@dataclass
class TxrxStream:
    """One receiver's view of one transmitter; a field is None when its line is absent."""

    receiver_rank: int
    transmitter: int
    elapsed_s: float | None = None
    gbps: float | None = None
    missed: int | None = None
    received: int | None = None
    total: int | None = None
    loss_rate: float | None = None
    corrupt: int | None = None
    # from the `link is` line (ours only): both ends' hosts, the transmitter's world rank
    transmitter_host: str | None = None
    transmitter_rank: int | None = None
    receiver_host: str | None = None

    def is_complete(self, require_corrupt: bool = False) -> bool:
        """Every line of the stream seen: elapsed time, data rate, missed, received, total
        and loss rate; ``corrupt`` (only our tool prints it, with ``--test ones|increment``)
        only when ``require_corrupt``. The ``link is`` line is not required (the seed's tool
        has none)."""
        return all(
            getattr(self, f.name) is not None
            for f in fields(self)
            if f.name not in _LINK_FIELDS and (require_corrupt or f.name != "corrupt")
        )

    @property
    def link(self) -> str | None:
        """``node03->node01`` (transmitter host first), or None when the hosts are unknown."""
        if self.transmitter_host is None or self.receiver_host is None:
            return None
        return f"{self.transmitter_host}->{self.receiver_host}"


_LINK_FIELDS = {"transmitter_host", "transmitter_rank", "receiver_host"}


@dataclass
class TxrxTransmitter:
    rank: int  # the transmitter index t (its line's "Rank t")
    elapsed_s: float | None = None
    gbps: float | None = None
    host: str | None = None  # from its `link is` line (ours only)
    receiver_host: str | None = None


@dataclass
class TxrxOwnTime:
    """A rank's own time per message (ours): above what the line rate allows, the rank could
    not fill the link, and its figures measure the tool (``tool_bound``); None: not judged."""

    role: str  # receiver | transmitter
    index: int  # the rank's "Rank N" (receiver rank, transmitter index)
    own_us: float | None
    need_us: float | None = None
    line_rate_gbps: float | None = None
    tool_bound: bool | None = None


@dataclass
class TxrxReport:
    streams: list[TxrxStream]
    transmitters: list[TxrxTransmitter]
    buffers: list[tuple[str, str, tuple[int, ...]]]
    errors: list[str]
    cut_mid_line: bool = False  # the text ends inside a line
    simulated: bool = False  # a `verbs provider is simulated` line: not a NIC's figures
    own_times: list[TxrxOwnTime] = field(default_factory=list)  # ours: tool-bound or not

    def tool_bound(self) -> list[TxrxOwnTime]:
        """The ranks whose own time per message exceeds what the line rate allows."""
        return [o for o in self.own_times if o.tool_bound]

    def complete_streams(self, require_corrupt: bool = False) -> list[TxrxStream]:
        """Streams with every field (see :meth:`TxrxStream.is_complete`)."""
        return [s for s in self.streams if s.is_complete(require_corrupt)]

    def incomplete_streams(self) -> list[TxrxStream]:
        """Streams with a line missing (a receiver that died or hung mid-report)."""
        return [s for s in self.streams if not s.is_complete()]

    def stream(self, receiver_rank: int, transmitter: int) -> TxrxStream:
        for s in self.streams:
            if (s.receiver_rank, s.transmitter) == (receiver_rank, transmitter):
                return s
        raise KeyError(f"no stream receiver {receiver_rank} <- transmitter {transmitter}")

    def total_gbps(self) -> float:
        """Sum of the receivers' data rates."""
        return sum(s.gbps for s in self.streams if s.gbps is not None)

    def min_gbps(self) -> float | None:
        rates = [s.gbps for s in self.streams if s.gbps is not None]
        return min(rates) if rates else None

    def total_missed(self) -> int:
        return sum(s.missed for s in self.streams if s.missed is not None)


def _number(token: str, count: bool, line: str) -> int | float:
    """A count must be a whole number (``nan`` or ``1.5`` messages is not the tool's output);
    a rate or time may be ``nan``/``inf`` (then the stream is not whole, see ``missing``)."""
    if not count:
        return float(token)
    value = float(token)
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise ParseError(f"not tx/rx output: a message count of {token!r}: {line.strip()!r}")
    return int(value)


def _unit(m: re.Match[str], what: str, line: str) -> None:
    """A figure printed in another unit than the tool's is not its output."""
    want, got = _UNITS.get(what), m.group("unit")
    if got is not None and got != want:
        raise ParseError(f"not tx/rx output: {what} in {got}, expected "
                         f"{want or 'no unit'}: {line.strip()!r}")
    if want is not None and got != want:
        raise ParseError(f"not tx/rx output: {what} without its unit {want}: {line.strip()!r}")
def _own_time(m: re.Match[str]) -> TxrxOwnTime:
    own, need, rate, verdict = m.group(3), m.group(4), m.group(5), m.group(6)
    figures = [float(x) for x in (own, need, rate) if x is not None]
    if not all(math.isfinite(x) and x >= 0 for x in figures) or (rate and float(rate) <= 0):
        raise ParseError(f"not tx/rx output: an own time or line rate of {m.group(0)!r}")
    bound = {"tool-bound": True, "not tool-bound": False}.get(verdict)
    if bound is not None and own is not None:  # printed to 3 digits: 1 % either way is rounding
        o, n = float(own), float(need)
        if (bound and o < n * 0.99) or (not bound and o > n * 1.01):
            raise ParseError(f"not tx/rx output: the verdict contradicts its figures: {m.group(0)!r}")
    return TxrxOwnTime(m.group(2), int(m.group(1)), float(own) if own else None,
                       float(need) if need else None, float(rate) if rate else None, bound)


def parse_txrx(text: str) -> TxrxReport:
    text = require_text(text, "txrx")
    streams: dict[tuple[int, int], TxrxStream] = {}
    txs: dict[int, TxrxTransmitter] = {}
    buffers: list[tuple[str, str, tuple[int, ...]]] = []
    errors: list[str] = []
    simulated = False
    seen: dict[tuple, str] = {}

    def once(key: tuple, line: str) -> None:
        if key in seen:
            raise ParseError(f"tx/rx output repeats a line ({seen[key]!r} and "
                             f"{line.strip()!r}): which one is the run's?")
        seen[key] = line.strip()

    own_times: list[TxrxOwnTime] = []
    for line in text.splitlines():
        if _SIMULATED.search(line):
            simulated = True
        if (m := _RX_LINK.search(line)) is not None:
            key = (int(m.group(1)), int(m.group(2)))
            once(("rx link", *key), line)
            stream = streams.setdefault(key, TxrxStream(*key))
            stream.transmitter_host, stream.receiver_host = m.group(3), m.group(5)
            stream.transmitter_rank = int(m.group(4))
            continue
        if (m := _TX_LINK.search(line)) is not None:
            once(("tx link", int(m.group(1))), line)
            tx = txs.setdefault(int(m.group(1)), TxrxTransmitter(int(m.group(1))))
            tx.host, tx.receiver_host = m.group(2), m.group(4)
            continue
        if (m := _RX.search(line)) is not None:
            key = (int(m.group(1)), int(m.group(2)))
            _unit(m, m.group(3), line)
            once(("rx", *key, m.group(3)), line)
            stream = streams.setdefault(key, TxrxStream(*key))
            name = _RX_FIELD[m.group(3)]
            setattr(stream, name, _number(m.group(4), name in _INT_FIELDS, line))
            continue
        if (m := _TX.search(line)) is not None:
            _unit(m, m.group(2), line)
            once(("tx", int(m.group(1)), m.group(2)), line)
            tx = txs.setdefault(int(m.group(1)), TxrxTransmitter(int(m.group(1))))
            if m.group(2) == "elapsed time":
                tx.elapsed_s = float(m.group(3))
            else:
                tx.gbps = float(m.group(3))
            continue
        if (m := _BUF.search(line)) is not None:
            shape = tuple(int(x) for x in m.group(3).replace(" ", "").split(",") if x)
            buffers.append((m.group(1).strip(), m.group(2), shape))
            continue
        if (m := _OWN.search(line)) is not None:
            own = _own_time(m)
            if any((o.role, o.index) == (own.role, own.index) for o in own_times):
                raise ParseError(f"tx/rx output repeats a rank's own-time line: {line.strip()!r}")
            own_times.append(own)
            continue
        if (m := _ERROR.search(line.strip())) is not None:
            errors.append(m.group(1))
    if not (streams or txs or buffers or errors):
        raise ParseError("not tx/rx output: no receiver, transmitter, buffer or ERROR lines")
    return TxrxReport(
        streams=[streams[k] for k in sorted(streams)],
        transmitters=[txs[k] for k in sorted(txs)],
        buffers=buffers,
        errors=errors,
        cut_mid_line=ends_mid_line(text),
        simulated=simulated,
        own_times=own_times,
    )


def expected_streams(nrx: int, nlink: int) -> list[tuple[int, int]]:
    """(receiver rank, its stream index) of every stream of an ``nrx``/``nlink`` run: transmitter
    ``t`` feeds receiver ``t % nrx`` as that receiver's stream ``t // nrx``."""
    return sorted((t % nrx, t // nrx) for t in range(nlink))


def missing(report: TxrxReport, nrx: int, nlink: int) -> list[str]:
    """What keeps ``report`` from being whole: every stream of the run with all its lines and
    finite figures, and every transmitter's elapsed time and rate. Our tool (known by its
    ``link is`` lines, which the seed's tool never prints) prints a ``message corrupt`` and a
    ``link is`` line for every stream and a ``link is`` line for every transmitter: from it,
    these are required too, so a report cut after a stream's loss rate is not whole. Empty
    when whole."""
    problems = []
    ours = (any(s.transmitter_host is not None for s in report.streams)
            or any(t.host is not None for t in report.transmitters))
    got = {(s.receiver_rank, s.transmitter): s for s in report.streams}
    want = expected_streams(nrx, nlink)
    absent = [key for key in want if key not in got]
    if absent:
        names = ", ".join(f"receiver {r} <- transmitter {k}" for r, k in absent[:4])
        more = f" and {len(absent) - 4} more" if len(absent) > 4 else ""
        problems.append(f"{len(want) - len(absent)} of {len(want)} streams reported; "
                        f"no {names}{more}")
    extra = sorted(set(got) - set(want))
    if extra:
        problems.append(f"unexpected streams {extra} for --nrx {nrx} --nlink {nlink}")
    for key in want:
        stream = got.get(key)
        if stream is None:
            continue
        tag = f"receiver {key[0]} <- transmitter {key[1]}"
        lacking = [label for label, name in _RX_FIELD.items()
                   if (ours or name != "corrupt") and getattr(stream, name) is None]
        if ours and stream.transmitter_host is None:
            lacking.append("link is")
        if lacking:
            problems.append(f"{tag}: no {', '.join(repr(x) for x in lacking)} line")
        bad = [label for label, name in _RX_FIELD.items()
               if isinstance(getattr(stream, name), float) and not math.isfinite(getattr(stream, name))]
        if bad:
            problems.append(f"{tag}: {', '.join(bad)} not a finite number")
        # a receiver's rate is 0 when nothing arrived (the loss says so); a time is never 0
        impossible = [label for label, name in _RX_FIELD.items()
                      if isinstance(getattr(stream, name), float)
                      and math.isfinite(getattr(stream, name))
                      and (getattr(stream, name) < 0
                           or (name == "elapsed_s" and getattr(stream, name) == 0))]
        if impossible:
            problems.append(f"{tag}: {', '.join(impossible)} negative or zero, not a figure "
                            "txrx prints")
    txs = {t.rank: t for t in report.transmitters}
    for t in range(nlink):
        tx = txs.get(t)
        if tx is None or tx.gbps is None or tx.elapsed_s is None:
            problems.append(f"transmitter {t}: no " + ("report" if tx is None else "rate/elapsed line"))
        elif ours and tx.host is None:
            problems.append(f"transmitter {t}: no 'link is' line")
        elif not (math.isfinite(tx.gbps) and math.isfinite(tx.elapsed_s)):
            problems.append(f"transmitter {t}: rate or elapsed time not a finite number")
        elif tx.gbps <= 0 or tx.elapsed_s <= 0:
            problems.append(f"transmitter {t}: rate {tx.gbps:g} Gbps or elapsed time "
                            f"{tx.elapsed_s:g} s not positive")
    if report.cut_mid_line:
        problems.append("tx/rx output ends mid-line (cut short)")
    return problems


def above_line_rate(report: TxrxReport, nrx: int, line_rate_gbps: float,
                    host_ceiling_gbps: float,
                    hosts: dict[tuple[int, int], tuple[str, str]]) -> list[str]:
    """Rates no link or host can carry: a stream or transmitter between two hosts above the
    line rate (x the margin of :mod:`physical`), the sum of the streams a host receives from,
    or sends to, other hosts above it, and a stream within one host above the host's ceiling.
    ``hosts``: (receiver rank, stream index) -> (transmitter host, receiver host); transmitter
    t sends stream (t % ``nrx``, t // ``nrx``)."""
    line = physical.Ceiling(line_rate_gbps)
    host = physical.Ceiling(host_ceiling_gbps, what="shared-memory ceiling")
    problems: list[str] = []
    into: dict[str, float] = {}
    out_of: dict[str, float] = {}
    for s in report.streams:
        ends = hosts.get((s.receiver_rank, s.transmitter))
        if ends is None or s.gbps is None or not math.isfinite(s.gbps):
            continue
        local = ends[0] == ends[1]
        where = f"stream {ends[0]}->{ends[1]} (receiver {s.receiver_rank} <- transmitter " \
                f"{s.transmitter}) data rate"
        if (p := physical.above(where, s.gbps, host if local else line)) is not None:
            problems.append(p)
        if not local:
            into[ends[1]] = into.get(ends[1], 0.0) + s.gbps
    for t in report.transmitters:
        ends = hosts.get((t.rank % nrx, t.rank // nrx))
        if ends is None or t.gbps is None or not math.isfinite(t.gbps):
            continue
        local = ends[0] == ends[1]
        where = f"transmitter {t.rank} ({ends[0]}->{ends[1]}) data rate"
        if (p := physical.above(where, t.gbps, host if local else line)) is not None:
            problems.append(p)
        if not local:
            out_of[ends[0]] = out_of.get(ends[0], 0.0) + t.gbps
    for name, sums, way in (("receives", into, "from"), ("sends", out_of, "to")):
        for node, total in sorted(sums.items()):
            where = f"{node} {name} {way} other hosts"
            if (p := physical.above(where, total, line)) is not None:
                problems.append(p)
    return problems

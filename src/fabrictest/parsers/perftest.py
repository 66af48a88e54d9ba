"""perftest (``ib_write_bw``, ``ib_send_bw``, ``ib_read_bw``, ... and the ``*_lat`` tests).

Handled quirks: rows below 1 Gb/s printed with 6 decimals; ``BW peak`` 0.00 on servers and in
duration (``-D``) runs; a ``Conflicting CPU frequency`` warning between the column header and
the rows; ``-q N`` printing N local and N remote address lines (each with its ``GID:`` line);
IB links showing LIDs and no ``GID:`` lines; ``rdma_cm`` runs without RKey/VAddr; a copy cut
before the closing rule (``complete`` is False then).

Units: ``MB/sec`` in perftest is MiB/s (it divides by 0x100000); ``Gb/sec`` is 10^9 bit/s.

Identity (docs/parsers.md): one run per output (a second banner is ParseError), each size and
each setting once (a repeat is ParseError, never first- or last-wins), the same unit for peak
and average; lines a job script prints before the banner or after the closing rule are
ignored, a line between two rows is not (:func:`missing` names it); :func:`missing` with
``test=``/``units=`` checks the test and unit asked for, and :func:`above_line_rate` that the
average fits the link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import physical
from ._util import doubling_sizes, ends_mid_line, human_bytes, not_a_figure, require_text, to_int
from .errors import ParseError

_RULE = re.compile(r"^-{20,}\s*$")
_TEST = re.compile(r"^\s*(?P<name>\S.*?)\s+(?P<kind>BW|Latency)\s+Test\s*$")
_PAIR = re.compile(r"(?P<key>[A-Za-z][\w.*\- ]*?)\s*:\s*(?P<value>\S+(?: \S+)*?)(?=\s{2,}|\s*$)")
_ADDRESS = re.compile(r"^\s*(?P<side>local|remote) address:\s*(?P<rest>.*)$")
_GID = re.compile(r"^\s*GID:\s*(?P<gid>\S+)")
_BW_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(?P<unit>[^\]]+)\]"
                        r"(?:\s+BW average\[(?P<avg>[^\]]+)\])?(?:\s+MsgRate\[(?P<rate>[^\]]+)\])?")
_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]")
# a figure as printf writes it, "inf"/"nan"/negative included (missing() names them)
_FIG = r"[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|inf|nan)"
_BW_ROW = re.compile(rf"^\s*(\d+)\s+(\d+)\s+({_FIG})\s+({_FIG})\s+({_FIG})\s*$", re.IGNORECASE)
#: perftest's own warning, printed where it measures the clock (before a row, with -a between
#: rows): the cores report different frequencies; the figures stand (the CPU is not at its top
#: clock). tests/data/real-outputs/ib_send_bw-roce-cpufreq-warning-client.txt
_OWN_WARNING = re.compile(r"^Conflicting CPU frequency values detected: .*$")
_NUM_ROW = re.compile(rf"^\s*(\d+)\s+(\d+)(\s+{_FIG})+\s*$", re.IGNORECASE)

#: bits per second of one unit of each BW column unit
_UNIT_BITS = {
    "Gb/sec": 1e9,
    "MB/sec": 8 * 0x100000,
    "MiB/sec": 8 * 0x100000,
}


@dataclass(frozen=True)
class PerftestRow:
    bytes: int
    iterations: int
    bw_peak: float
    bw_avg: float
    msg_rate: float  # Mpps


@dataclass(frozen=True)
class PerftestLatencyRow:
    bytes: int
    iterations: int
    t_min: float
    t_max: float
    t_typical: float
    t_avg: float | None = None
    t_stdev: float | None = None
    p99: float | None = None
    p999: float | None = None


@dataclass
class PerftestResult:
    test: str  # "RDMA_Write BW", "Send BW", "Send Latency"
    role: str  # "client" | "server"
    transport: str | None  # Connection type: RC, UC, UD, XRC, DC
    link_layer: str | None  # "Ethernet" | "IB"
    units: str | None  # "Gb/sec" | "MB/sec" (MiB/s); None for latency tests
    gid_index: int | None
    qps: int | None
    device: str | None
    mtu: int | None
    rows: list[PerftestRow]
    latency_rows: list[PerftestLatencyRow] = field(default_factory=list)
    local: dict[str, str] = field(default_factory=dict)
    remote: dict[str, str] = field(default_factory=dict)
    local_addresses: list[dict[str, str]] = field(default_factory=list)
    remote_addresses: list[dict[str, str]] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    complete: bool = True  # False when the closing rule after the rows is missing
    #: lines that are not perftest's, printed between two rows
    inside: list[str] = field(default_factory=list)
    rate_unit: str | None = None  # MsgRate[...]: Mpps
    duration_mode: bool = False  # every BW peak 0.00 on a client: -D runs

    def to_gbps(self, value: float) -> float:
        """Convert a BW column value to Gb/s (10^9 bit/s)."""
        if self.units not in _UNIT_BITS:
            raise ValueError(f"unknown perftest unit {self.units!r}")
        return value * _UNIT_BITS[self.units] / 1e9

    def peak_avg_gbps(self) -> float:
        """The largest ``BW average`` over all sizes, in Gb/s."""
        if not self.rows:
            raise ValueError(f"{self.test}: no bandwidth rows ({self.role})")
        return self.to_gbps(max(r.bw_avg for r in self.rows))

    def at(self, nbytes: int) -> PerftestRow:
        for row in self.rows:
            if row.bytes == nbytes:
                return row
        raise KeyError(f"{self.test}: no row for {nbytes} bytes")

    def largest(self) -> PerftestRow:
        return max(self.rows, key=lambda r: r.bytes)


def _address(rest: str) -> dict[str, str]:
    tokens = rest.split()
    return {tokens[i]: tokens[i + 1] for i in range(0, len(tokens) - 1, 2)}


def parse_perftest(text: str) -> PerftestResult:
    text = require_text(text, "perftest")
    lines = text.splitlines()
    test = None
    settings: dict[str, str] = {}
    local: list[dict[str, str]] = []
    remote: list[dict[str, str]] = []
    rows: list[PerftestRow] = []
    lat_rows: list[PerftestLatencyRow] = []
    warnings: list[str] = []
    units = None
    in_rows = False
    closed = False
    opening_rule: str | None = None
    waiting = False
    last_address: dict[str, str] | None = None
    rate_unit: str | None = None
    seen: set[int] = set()
    pending: list[str] = []  # lines between rows that are not perftest's, until a row follows
    inside: list[str] = []
    for raw in lines:
        line = raw.strip()
        if "Waiting for client" in line:
            waiting = True
            continue
        if test is None:
            m = _TEST.match(raw)
            if m and not line.startswith("#"):
                test = f"{m.group('name')} {m.group('kind')}"
            elif _RULE.match(line):
                opening_rule = line
            continue
        if (m := _TEST.match(raw)) is not None and not line.startswith("#"):
            raise ParseError(f"two perftest runs in one output ({test} Test, then "
                             f"{line!r}): which one is the run's?")
        if closed:
            continue  # after perftest's closing rule: a job script's lines
        if _RULE.match(line):
            # perftest closes its rows with the same rule it opens its banner with; a rule of
            # another length after the rows (Open MPI's abort banner) is not its closing line
            if opening_rule is None:
                opening_rule = line
            if in_rows and (rows or lat_rows) and line == opening_rule:
                closed = True
                in_rows = False
            elif in_rows and (rows or lat_rows):
                warnings.append(line)
                pending.append(line)
            last_address = None
            continue
        if (m := _ADDRESS.match(raw)) is not None:
            last_address = _address(m.group("rest"))
            (local if m.group("side") == "local" else remote).append(last_address)
            continue
        if (m := _GID.match(raw)) is not None and last_address is not None:
            last_address["GID"] = m.group("gid")
            continue
        if (m := _BW_HEADER.search(line)) is not None:
            units = m.group("unit")
            if m.group("avg") not in (None, units):
                raise ParseError(f"perftest {test}: BW peak in {units}, BW average in "
                                 f"{m.group('avg')}: {line!r}")
            rate_unit = m.group("rate")
            in_rows = True
            continue
        if _LAT_HEADER.search(line):
            in_rows = True
            continue
        if in_rows:
            size = None
            if units is not None and (m := _BW_ROW.match(line)) is not None:
                size = int(m.group(1))
                row = PerftestRow(bytes=size, iterations=int(m.group(2)),
                                  bw_peak=float(m.group(3)), bw_avg=float(m.group(4)),
                                  msg_rate=float(m.group(5)))
            elif units is None and _NUM_ROW.match(line):
                tok = line.split()
                vals = [float(t) for t in tok[2:]]
                vals += [None] * (7 - len(vals))
                size = int(tok[0])
                row = PerftestLatencyRow(size, int(tok[1]), *vals[:7])
            elif line:
                warnings.append(line)
                if (rows or lat_rows) and not _OWN_WARNING.match(line):
                    pending.append(line)
            if size is not None:
                if size in seen:
                    raise ParseError(f"perftest {test} prints {human_bytes(size)} twice: "
                                     "which one is the run's?")
                seen.add(size)
                inside += pending
                pending = []
                (rows if isinstance(row, PerftestRow) else lat_rows).append(row)
            continue
        if ":" in line and not line.startswith("#"):
            for m in _PAIR.finditer(raw):
                key, value = m.group("key").strip(), m.group("value").strip()
                if key in settings:
                    raise ParseError(f"perftest {test} prints {key!r} twice ({settings[key]!r} "
                                     f"and {value!r}): which one is the run's?")
                settings[key] = value
    if test is None or not settings:
        raise ParseError("not perftest output: no '<verb> BW|Latency Test' banner and settings")
    role = (
        "server" if waiting or ("RX depth" in settings and "TX depth" not in settings) else "client"
    )
    if not rows and not lat_rows and role == "client":
        raise ParseError(f"perftest {test}: no result rows (truncated or failed run)")
    mtu_m = re.match(r"(\d+)", settings.get("Mtu", ""))
    gid = settings.get("GID index")
    result = PerftestResult(
        test=test,
        role=role,
        transport=settings.get("Connection type"),
        link_layer=settings.get("Link type"),
        units=units,
        gid_index=to_int(gid) if gid is not None else None,
        qps=to_int(settings["Number of qps"]) if "Number of qps" in settings else None,
        device=settings.get("Device"),
        mtu=int(mtu_m.group(1)) if mtu_m else None,
        rows=rows,
        latency_rows=lat_rows,
        local=local[0] if local else {},
        remote=remote[0] if remote else {},
        local_addresses=local,
        remote_addresses=remote,
        settings=settings,
        warnings=warnings,
        complete=(closed or not (rows or lat_rows)) and not ends_mid_line(text),
        duration_mode=role == "client" and bool(rows) and all(r.bw_peak == 0 for r in rows),
        inside=inside,
        rate_unit=rate_unit,
    )
    return result


def missing(result: PerftestResult, msg_size: int | None = None, test: str | None = None,
            units: str | None = None) -> list[str]:
    """What keeps a client's ``result`` from being whole: perftest's closing rule after the
    rows (the same rule as its banner's), a row for ``msg_size`` (``-s``) when given, with
    ``-a`` every size doubling from the first row to the last, no line between two rows, a
    known unit; with ``test`` (``"RDMA_Write BW"``) and ``units`` (``"Gb/sec"`` for
    ``--report_gbits``), the test and unit asked for."""
    problems = []
    name = f"perftest {result.test}"
    if test is not None and result.test != test:
        problems.append(f"{name}: the output is perftest's {result.test} Test, not {test}")
    if result.rows and result.units not in _UNIT_BITS:
        problems.append(f"{name}: bandwidth in {result.units!r}, not a perftest unit")
    elif units is not None and result.rows and result.units != units:
        problems.append(f"{name}: bandwidth in {result.units}, expected {units}")
    if result.rows and result.rate_unit not in (None, "Mpps"):
        problems.append(f"{name}: message rate in {result.rate_unit}, expected Mpps")
    if not (result.rows or result.latency_rows):
        problems.append(f"{name}: no result rows")
    elif not result.complete:
        problems.append(f"{name}: no closing rule after the rows (cut short)")
    if result.inside:
        problems.append(f"{name}: a line inside its table that is not perftest's: "
                        f"{result.inside[0][:80]!r}")
    sizes = [r.bytes for r in (result.rows or result.latency_rows)]
    if len(sizes) > 1 and sizes != doubling_sizes(sizes[0], sizes[-1]):
        problems.append(f"{name}: rows of {', '.join(human_bytes(s) for s in sizes[:6])}"
                        f"{' ...' if len(sizes) > 6 else ''}: not every size from "
                        f"{human_bytes(sizes[0])} to {human_bytes(sizes[-1])} (-a doubles it)")
    if msg_size is not None and result.rows and all(r.bytes != msg_size for r in result.rows):
        problems.append(f"{name}: no row for {human_bytes(msg_size)}")
    return problems + _unphysical(result)


def above_line_rate(result: PerftestResult, line_rate_gbps: float,
                    what: str = "line rate") -> list[str]:
    """An average bandwidth the link cannot carry (above ``line_rate_gbps`` x the margin of
    :mod:`physical`). Empty when every row fits, or the unit is unknown (:func:`missing`)."""
    if result.units not in _UNIT_BITS:
        return []
    ceiling = physical.Ceiling(line_rate_gbps, what=what)
    return physical.rates_above(f"perftest {result.test} average", [
        (r.bytes, r.bw_avg) for r in result.rows], _UNIT_BITS[result.units] / 1e9,
        str(result.units), ceiling)


def _unphysical(result: PerftestResult) -> list[str]:
    """Average bandwidth and message rate finite and positive (the peak may be 0: ``-D``
    duration mode prints it so), every latency finite and positive."""
    found = []
    for r in result.rows:
        where = f"perftest {result.test}: at {human_bytes(r.bytes)}"
        found += [not_a_figure(f"{where} average bandwidth", r.bw_avg),
                  not_a_figure(f"{where} message rate", r.msg_rate),
                  not_a_figure(f"{where} peak bandwidth", r.bw_peak, zero_ok=True)]
    for r in result.latency_rows:
        where = f"perftest {result.test}: at {human_bytes(r.bytes)}"
        for name in ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p999"):
            value = getattr(r, name)
            found.append(not_a_figure(f"{where} {name}", value, zero_ok=name == "t_stdev"))
    return [p for p in found if p]


__all__ = ["PerftestLatencyRow", "PerftestResult", "PerftestRow", "above_line_rate", "missing",
           "parse_perftest"]

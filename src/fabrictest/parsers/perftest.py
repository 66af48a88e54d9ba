"""perftest (``ib_write_bw``, ``ib_send_bw``, ``ib_read_bw``, ... and the ``*_lat`` tests).

Handled quirks: rows below 1 Gb/s printed with 6 decimals; ``BW peak`` 0.00 on servers and in
duration (``-D``) runs; a ``Conflicting CPU frequency`` warning between the column header and
the rows; ``-q N`` printing N local and N remote address lines (each with its ``GID:`` line);
IB links showing LIDs and no ``GID:`` lines; ``rdma_cm`` runs without RKey/VAddr; a copy cut
before the closing rule (``complete`` is False then).

Units: ``MB/sec`` in perftest is MiB/s (it divides by 0x100000); ``Gb/sec`` is 10^9 bit/s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, human_bytes, not_a_figure, require_text, to_int
from .errors import ParseError

_RULE = re.compile(r"^-{20,}\s*$")
_TEST = re.compile(r"^\s*(?P<name>\S.*?)\s+(?P<kind>BW|Latency)\s+Test\s*$")
_PAIR = re.compile(r"(?P<key>[A-Za-z][\w.*\- ]*?)\s*:\s*(?P<value>\S+(?: \S+)*?)(?=\s{2,}|\s*$)")
_ADDRESS = re.compile(r"^\s*(?P<side>local|remote) address:\s*(?P<rest>.*)$")
_GID = re.compile(r"^\s*GID:\s*(?P<gid>\S+)")
_BW_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(?P<unit>[^\]]+)\]")
_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]")
# a figure as printf writes it, "inf"/"nan"/negative included (missing() names them)
_FIG = r"[-+]?(?:[\d.]+(?:[eE][-+]?\d+)?|inf|nan)"
_BW_ROW = re.compile(rf"^\s*(\d+)\s+(\d+)\s+({_FIG})\s+({_FIG})\s+({_FIG})\s*$", re.IGNORECASE)
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
            in_rows = True
            continue
        if _LAT_HEADER.search(line):
            in_rows = True
            continue
        if in_rows:
            if units is not None and (m := _BW_ROW.match(line)) is not None:
                rows.append(
                    PerftestRow(
                        bytes=int(m.group(1)),
                        iterations=int(m.group(2)),
                        bw_peak=float(m.group(3)),
                        bw_avg=float(m.group(4)),
                        msg_rate=float(m.group(5)),
                    )
                )
            elif units is None and _NUM_ROW.match(line):
                tok = line.split()
                vals = [float(t) for t in tok[2:]]
                vals += [None] * (7 - len(vals))
                lat_rows.append(PerftestLatencyRow(int(tok[0]), int(tok[1]), *vals[:7]))
            elif line:
                warnings.append(line)
            continue
        if ":" in line and not line.startswith("#"):
            for m in _PAIR.finditer(raw):
                settings[m.group("key").strip()] = m.group("value").strip()
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
    )
    return result


def missing(result: PerftestResult, msg_size: int | None = None) -> list[str]:
    """What keeps a client's ``result`` from being whole: perftest's closing rule after the
    rows (the same rule as its banner's), and a row for ``msg_size`` (``-s``) when given."""
    problems = []
    if not (result.rows or result.latency_rows):
        problems.append(f"perftest {result.test}: no result rows")
    elif not result.complete:
        problems.append(f"perftest {result.test}: no closing rule after the rows (cut short)")
    if msg_size is not None and result.rows and all(r.bytes != msg_size for r in result.rows):
        problems.append(f"perftest {result.test}: no row for {human_bytes(msg_size)}")
    return problems + _unphysical(result)


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


__all__ = ["PerftestLatencyRow", "PerftestResult", "PerftestRow", "missing", "parse_perftest"]

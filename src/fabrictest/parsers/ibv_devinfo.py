"""``ibv_devinfo`` and ``ibv_devinfo -v`` output -> HCAs and their ports.

Handled: tabs or spaces (a terminal copy turns tabs into spaces); MLNX_OFED 4.x ``-v``
extras (``device_cap_exp_flags``, ODP caps, ``Multi-Packet RQ``, lines without a colon);
plain output without ``phys_state``/``active_speed``/GIDs (those fields are None then);
GID lines with (rdma-core: ``fe80::..., RoCE v2``) or without (MOFED 4.x) a type;
``No IB devices found`` (an empty list).

Identity: each HCA, each of its ports, each key of a block and each GID index once (a repeat
with another value is ParseError, never first- or last-wins); :func:`missing` refuses a value
that is no ``ibv_devinfo`` value (an MTU that is not 256..4096, a lane speed or width that no
link runs at, a LID outside the unicast range), which is how a cut or a changed unit shows.

States are normalised to the ``ibv_devinfo`` spelling whatever the source:
``PORT_ACTIVE``, ``PORT_DOWN``, ``PORT_INIT``, ``PORT_ARMED``...; physical states to
``LINK_UP``, ``POLLING``, ``DISABLED``, ``SLEEP``, ``PORT_CONFIGURATION_TRAINING``,
``LINK_ERROR_RECOVERY``, ``PHY_TEST``. Link layers to ``InfiniBand`` / ``Ethernet``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from ._util import ends_mid_line, require_text, to_int
from .errors import ParseError

PORT_STATES = {
    0: "PORT_NOP",
    1: "PORT_DOWN",
    2: "PORT_INIT",
    3: "PORT_ARMED",
    4: "PORT_ACTIVE",
    5: "PORT_ACTIVE_DEFER",
}
PHYS_STATES = {
    1: "SLEEP",
    2: "POLLING",
    3: "DISABLED",
    4: "PORT_CONFIGURATION_TRAINING",
    5: "LINK_UP",
    6: "LINK_ERROR_RECOVERY",
    7: "PHY_TEST",
}
_PHYS_ALIASES = {
    "linkup": "LINK_UP",
    "link_up": "LINK_UP",
    "polling": "POLLING",
    "disabled": "DISABLED",
    "sleep": "SLEEP",
    "portconfigurationtraining": "PORT_CONFIGURATION_TRAINING",
    "port_configuration_training": "PORT_CONFIGURATION_TRAINING",
    "linkerrorrecovery": "LINK_ERROR_RECOVERY",
    "link_error_recovery": "LINK_ERROR_RECOVERY",
    "phytest": "PHY_TEST",
    "phy_test": "PHY_TEST",
}


def normalise_state(value: str | None) -> str | None:
    """``PORT_ACTIVE (4)``, ``4: ACTIVE``, ``ACTIVE`` -> ``PORT_ACTIVE``."""
    if value is None:
        return None
    text = value.strip()
    m = re.search(r"\((\d+)\)\s*$", text) or re.match(r"^(\d+)\s*:", text)
    if m and int(m.group(1)) in PORT_STATES:
        return PORT_STATES[int(m.group(1))]
    word = re.sub(r"\s*\(\d+\)\s*$", "", text).upper().replace(" ", "_")
    return word if word.startswith("PORT_") else f"PORT_{word}"


def normalise_phys_state(value: str | None) -> str | None:
    """``LINK_UP (5)``, ``5: LinkUp``, ``LINK_UP`` -> ``LINK_UP``; ``POLLING (2)`` -> ``POLLING``."""
    if value is None:
        return None
    text = value.strip()
    m = re.search(r"\((\d+)\)\s*$", text) or re.match(r"^(\d+)\s*:", text)
    if m and int(m.group(1)) in PHYS_STATES:
        return PHYS_STATES[int(m.group(1))]
    word = re.sub(r"\s*\(\d+\)\s*$", "", text)
    key = word.lower().replace(" ", "")
    return _PHYS_ALIASES.get(key, _PHYS_ALIASES.get(word.lower(), word.upper().replace(" ", "_")))


def normalise_link_layer(value: str | None) -> str | None:
    """``InfiniBand``/``IB`` -> ``InfiniBand``; ``Ethernet``/``RoCE``/``eth`` -> ``Ethernet``."""
    if value is None:
        return None
    low = value.strip().lower()
    if low in ("ib", "infiniband"):
        return "InfiniBand"
    if low in ("ethernet", "eth", "roce", "iwarp"):
        return "Ethernet"
    return value.strip()


@dataclass(frozen=True)
class GidEntry:
    index: int
    gid: str
    kind: str | None = None  # "RoCE v1" | "RoCE v2" | None (IB, or type not printed)
    netdev: str | None = None


@dataclass
class PortInfo:
    port: int
    state: str | None = None  # PORT_ACTIVE, PORT_DOWN, ...
    phys_state: str | None = None  # LINK_UP, POLLING, ... (None: plain ibv_devinfo)
    link_layer: str | None = None  # InfiniBand | Ethernet
    active_mtu: int | None = None  # bytes
    max_mtu: int | None = None  # bytes
    active_speed_gbps: float | None = None  # per lane
    active_width: int | None = None  # lanes: 1, 2, 4, 8, 12
    rate_gbps: float | None = None  # width x lane speed
    gids: list[GidEntry] = field(default_factory=list)
    lid: int | None = None
    sm_lid: int | None = None
    device: str | None = None
    netdev: str | None = None
    #: every ``key: value`` of the block as printed (missing() judges the values read)
    raw: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return f"{self.device or '?'}/{self.port}"

    @property
    def active(self) -> bool:
        return self.state == "PORT_ACTIVE"

    @property
    def link_up(self) -> bool | None:
        return None if self.phys_state is None else self.phys_state == "LINK_UP"

    def rocev2_gids(self) -> list[GidEntry]:
        return [g for g in self.gids if g.kind == "RoCE v2"]


@dataclass
class HcaInfo:
    name: str
    transport: str | None = None
    fw_ver: str | None = None
    node_guid: str | None = None
    ports: list[PortInfo] = field(default_factory=list)
    board_id: str | None = None
    vendor_part_id: int | None = None
    attributes: dict[str, str] = field(default_factory=dict)

    def port(self, number: int) -> PortInfo:
        for p in self.ports:
            if p.port == number:
                return p
        raise KeyError(f"{self.name} has no port {number}")


#: the keys the parser reads (MOFED's -v prints some others, e.g. "Unknown flags", several times)
_READ = {"state", "phys_state", "link_layer", "active_mtu", "max_mtu", "active_speed",
         "active_width", "port_lid", "sm_lid", "transport", "fw_ver", "node_guid", "board_id",
         "vendor_part_id"}
_HCA = re.compile(r"^\s*hca_id:\s*(\S+)\s*$")
_PORT = re.compile(r"^\s*port:\s*(\d+)\s*$")
_KV = re.compile(r"^\s*([A-Za-z_][\w ]*?):\s*(\S.*?)\s*$")
_GID = re.compile(r"^\s*GID\[\s*(\d+)\]:\s*(\S+?)(?:,\s*(.+?))?\s*$")


def _first_int(value: str) -> int | None:
    m = re.match(r"\s*(\d+)", value)
    return int(m.group(1)) if m else None


def _speed(value: str) -> float | None:
    m = re.match(r"\s*([\d.]+)\s*Gb", value)
    return float(m.group(1)) if m else None


def _width(value: str) -> int | None:
    m = re.match(r"\s*(\d+)X", value)
    return int(m.group(1)) if m else None


def gid_kind(text: str | None, link_layer: str | None = None) -> str | None:
    """``RoCE v2``, ``RoCE v1``, ``IB/RoCE v1`` (sysfs) -> ``RoCE v2`` / ``RoCE v1`` / None."""
    if not text:
        return None
    low = text.lower()
    if "v2" in low:
        return "RoCE v2"
    if "roce" in low and link_layer != "InfiniBand":
        return "RoCE v1"
    return None


def _apply_port(port: PortInfo, key: str, value: str) -> None:
    if key == "state":
        port.state = normalise_state(value)
    elif key == "phys_state":
        port.phys_state = normalise_phys_state(value)
    elif key == "link_layer":
        port.link_layer = normalise_link_layer(value)
    elif key == "active_mtu":
        port.active_mtu = _first_int(value)
    elif key == "max_mtu":
        port.max_mtu = _first_int(value)
    elif key == "active_speed":
        port.active_speed_gbps = _speed(value)
    elif key == "active_width":
        port.active_width = _width(value)
    elif key == "port_lid":
        port.lid = to_int(value.split()[0])
    elif key == "sm_lid":
        port.sm_lid = to_int(value.split()[0])


def parse_ibv_devinfo(text: str) -> list[HcaInfo]:
    text = require_text(text, "ibv_devinfo")
    if "No IB devices found" in text and "hca_id" not in text:
        return []
    hcas: list[HcaInfo] = []
    hca: HcaInfo | None = None
    port: PortInfo | None = None
    for raw in text.splitlines():
        if (m := _HCA.match(raw)) is not None:
            if any(h.name == m.group(1) for h in hcas):
                raise ParseError(f"ibv_devinfo lists {m.group(1)} twice: which one is it?")
            hca = HcaInfo(name=m.group(1))
            hcas.append(hca)
            port = None
            continue
        if hca is None:
            continue
        if (m := _PORT.match(raw)) is not None:
            if any(p.port == int(m.group(1)) for p in hca.ports):
                raise ParseError(f"ibv_devinfo lists {hca.name} port {m.group(1)} twice: "
                                 "which one is it?")
            port = PortInfo(port=int(m.group(1)), device=hca.name)
            hca.ports.append(port)
            continue
        if port is not None and (m := _GID.match(raw)) is not None:
            if any(g.index == int(m.group(1)) for g in port.gids):
                raise ParseError(f"ibv_devinfo lists {hca.name}/{port.port} GID[{m.group(1)}] "
                                 "twice: which one is it?")
            port.gids.append(
                GidEntry(int(m.group(1)), m.group(2), gid_kind(m.group(3), port.link_layer))
            )
            continue
        m = _KV.match(raw)
        if m is None:
            continue
        key, value = m.group(1).strip(), m.group(2)
        block = port.raw if port is not None else hca.attributes
        if key in _READ and key in block:
            where = f"{hca.name}/{port.port}" if port is not None else hca.name
            raise ParseError(f"ibv_devinfo prints {where} {key} twice ({block[key]!r} and "
                             f"{value!r}): which one is it?")
        if port is not None:
            port.raw[key] = value
            _apply_port(port, key, value)
            continue
        hca.attributes[key] = value
        if key == "transport":
            hca.transport = re.sub(r"\s*\(\d+\)\s*$", "", value)
        elif key == "fw_ver":
            hca.fw_ver = value
        elif key == "node_guid":
            hca.node_guid = value
        elif key == "board_id":
            hca.board_id = value
        elif key == "vendor_part_id":
            hca.vendor_part_id = to_int(value)
    if not hcas:
        raise ParseError("not ibv_devinfo output: no 'hca_id:' line")
    for h in hcas:
        for p in h.ports:
            if p.active_width is not None and p.active_speed_gbps is not None:
                p.rate_gbps = p.active_width * p.active_speed_gbps
            if p.link_layer == "InfiniBand":
                # an IB port may print ", RoCE v1"-less types only; never call IB GIDs RoCE
                p.gids = [GidEntry(g.index, g.gid, None, g.netdev) for g in p.gids]
    return hcas


def infer_mofed_gid_kinds(port: PortInfo) -> list[GidEntry]:
    """Guess RoCE GID types where the output does not print them (MLNX_OFED 4.x ``-v``).

    MLNX_OFED lists each address of a RoCE port twice, RoCE v1 at the even index and RoCE v2
    at the odd one (``show_gids`` shows the types). Only applied to an Ethernet port whose
    GIDs carry no type and come in such equal pairs; otherwise the GIDs are returned as is.
    The real types are in sysfs (``ports/N/gid_attrs/types/I``), which
    :func:`fabrictest.sysinfo.read_port_from_sysfs` reads.
    """
    gids = port.gids
    if port.link_layer != "Ethernet" or not gids or any(g.kind for g in gids):
        return list(gids)
    by_index = {g.index: g for g in gids}
    out: list[GidEntry] = []
    for g in gids:
        partner = by_index.get(g.index ^ 1)
        if partner is None or partner.gid.lower() != g.gid.lower():
            return list(gids)
        kind = "RoCE v1" if g.index % 2 == 0 else "RoCE v2"
        out.append(GidEntry(g.index, g.gid, kind, g.netdev))
    return out


_KNOWN_STATES = set(PORT_STATES.values())
_KNOWN_PHYS = set(PHYS_STATES.values())
#: what ibv_devinfo prints: IB MTUs, lane speeds (SDR .. XDR), widths, unicast LIDs
MTUS = {256, 512, 1024, 2048, 4096}
LANE_GBPS = {2.5, 5.0, 10.0, 14.0, 25.0, 50.0, 100.0, 200.0}
WIDTHS = {1, 2, 4, 8, 12}
MAX_LID = 0xBFFF


def _value_problems(p: PortInfo) -> list[str]:
    """Values printed that no port has (a cut, a changed unit, a scaled figure)."""
    bad = []
    checks = (("active_mtu", p.active_mtu, MTUS), ("max_mtu", p.max_mtu, MTUS),
              ("active_speed", p.active_speed_gbps, LANE_GBPS),
              ("active_width", p.active_width, WIDTHS))
    for key, value, known in checks:
        if key in p.raw and value not in known:
            bad.append(f"{key} {p.raw[key]!r}")
    for key, value in (("port_lid", p.lid), ("sm_lid", p.sm_lid)):
        if key in p.raw and (value is None or not 0 <= value <= MAX_LID):
            bad.append(f"{key} {p.raw[key]!r}")
    return bad


def _whole_gid(text: str) -> bool:
    """A GID printed whole: 8 groups of 4 hex digits (``fe80:0000:...``) or an IPv6 address
    (rdma-core's ``fe80::ac0:ebff:fe3b:353c``)."""
    if "::" not in text:
        return re.fullmatch(r"[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}", text) is not None
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def missing(hcas: list[HcaInfo], text: str | None = None) -> list[str]:
    """What keeps parsed ``ibv_devinfo [-v]`` output from being whole (a copy or a run cut
    mid-block): every HCA lists ports; every port has its state, active MTU and link layer
    (the last line of a plain port block) with known values; with ``-v`` (the HCA shows its
    ``max_qp``) every port has its ``phys_state``; every GID is printed whole. Empty when whole.
    A cut between two whole GID lines cannot be seen: ``ibv_devinfo`` prints no count.
    Given the ``text`` too, a last line without its newline counts as cut."""
    problems = ["ibv_devinfo: output ends mid-line (cut short)"] if ends_mid_line(text) else []
    for hca in hcas:
        if not hca.ports:
            problems.append(f"{hca.name}: no port block (cut short)")
        verbose = "max_qp" in hca.attributes
        for p in hca.ports:
            where = f"{hca.name}/{p.port}"
            lacking = [name for name in ("state", "active_mtu", "link_layer")
                       if getattr(p, name) is None]
            if verbose and p.phys_state is None:
                lacking.append("phys_state")
            if lacking:
                problems.append(f"{where}: no {', '.join(lacking)} (cut short)")
            if p.state is not None and p.state not in _KNOWN_STATES:
                problems.append(f"{where}: unknown state {p.state!r} (cut short?)")
            if p.phys_state is not None and p.phys_state not in _KNOWN_PHYS:
                problems.append(f"{where}: unknown phys_state {p.phys_state!r} (cut short?)")
            if p.link_layer is not None and p.link_layer not in ("InfiniBand", "Ethernet"):
                problems.append(f"{where}: unknown link_layer {p.link_layer!r} (cut short?)")
            if bad := _value_problems(p):
                problems.append(f"{where}: {', '.join(bad)}: not a value ibv_devinfo prints "
                                "(cut short?)")
            cut = [g.index for g in p.gids if not _whole_gid(g.gid)]
            if cut:
                problems.append(f"{where}: GID[{cut[0]}] is not a whole address (cut short)")
    return problems

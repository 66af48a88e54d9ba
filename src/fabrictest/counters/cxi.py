"""``cxi_stat [-r]`` (HPE Slingshot, libcxi's CXI status utility; pure).

One block per device, as libcxi's ``utils/cxi_stat.c`` prints it: ``Device: cxi0`` at the
start of a line, then ``Description``, ``Part Number``, ``Serial Number``, ``FW Version``,
``Network device``, ``MAC``, ``NID``, ``PID granule``, ``PCIE speed/width``, ``PCIE slot``, the
port's ``Link layer retry``, ``Link loopback``, ``Link media``, ``Link MTU``, ``Link speed``
(``CK_400G``, ``BS_200G``; newer drivers ``bs200G``) and ``Link state`` (the driver's sysfs
text: ``up``, ``down``; empty when cxi_stat could not read it), and with ``-r`` the ``Rates:``
(codewords per second over a pause, from the NIC's 56-bit counters, pause percentages per
PCP). Site wrappers (``slingshot-diag``) print lines before a block; they are not read.

The link state is what a snapshot keeps (``link_up``: 1 up, 0 down); any other text, an empty
one, or one whose line was cut (``Link state: u``) is unknown (None), never "down".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabrictest.parsers.errors import ParseError

from .text import whole_lines

#: the link states cxi_stat prints that a snapshot reads: 1 up, 0 down
LINK_STATES = {"up": 1, "down": 0}


@dataclass
class CxiDevice:
    """One ``Device: cxiN`` block: its netdev, link state and speed, and the ``--rates``
    figures when present (codewords per second, pause percentages)."""

    device: str
    netdev: str | None = None
    link_state: str | None = None
    link_speed: str | None = None
    rates: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def link_up(self) -> int | None:
        """1 up, 0 down, None when the state was not read or is another one."""
        return LINK_STATES.get(self.link_state or "")


_FIELD = re.compile(r"^\s*(?P<key>[^:]+):\s*(?P<value>.*?)\s*$")
_RATE = re.compile(r"^<?(?P<num>[0-9.eE+-]+)(?:/s)?$")
#: the block's fields a snapshot or a check reads -> CxiDevice attribute
_READ = {"Network device": "netdev", "Link state": "link_state", "Link speed": "link_speed"}


def parse_cxi_stat(text: str) -> list[CxiDevice]:
    """``cxi_stat [-r]`` -> one record per device; ParseError without a whole ``Device:`` line
    or with one device printed twice. A field read (the netdev, link state and speed, a rate)
    printed twice in a block is a problem and reads None, a pause percentage outside 0-100 is
    a problem. A last line cut before its newline is not read."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError("cxi_stat: empty")
    lines, cut = whole_lines(text)
    devices: list[CxiDevice] = []
    read: set[str] = set()  # the fields of the current block read so far
    in_rates = False
    for line in lines:
        m = _FIELD.match(line)
        if m is None:
            continue
        key, value = m["key"].strip(), m["value"]
        if key == "Device" and not line[:1].isspace():
            if any(d.device == value for d in devices):
                raise ParseError(f"cxi_stat: device {value} printed twice")
            devices.append(CxiDevice(device=value))
            read, in_rates = set(), False
            continue
        if not devices:
            continue  # a wrapper's lines before the first block
        dev = devices[-1]
        if key == "Rates":
            in_rates = True
            continue
        rate = _RATE.match(value.replace("%", "")) if in_rates else None
        if key not in _READ and rate is None:
            continue
        if key in read:  # which of the two is the device's cannot be told
            dev.problems.append(f"cxi_stat {dev.device}: {key!r} printed twice")
            if key in _READ:
                setattr(dev, _READ[key], None)
            dev.rates.pop(key, None)
            continue
        read.add(key)
        if key == "Network device":
            dev.netdev = value or None
        elif key == "Link state":
            dev.link_state = value or None
            if value not in LINK_STATES:
                dev.problems.append(f"cxi_stat {dev.device}: Link state {value!r} is "
                                    "neither up nor down")
        elif key == "Link speed":
            dev.link_speed = value or None
        else:
            try:
                dev.rates[key] = float(rate["num"])
            except ValueError:
                continue
            if value.endswith("%") and not 0 <= dev.rates[key] <= 100:
                dev.problems.append(f"cxi_stat {dev.device}: {key} {value} is not a share "
                                    "of the time")
    if not devices:
        raise ParseError("not cxi_stat output: no whole 'Device: cxiN' line")
    if cut is not None:
        devices[-1].problems.append(f"cxi_stat {devices[-1].device}: output ends mid-line "
                                    f"({cut.strip()[:40]!r})")
    return devices


def cxi_missing(devices: list[CxiDevice], rates: bool = False) -> list[str]:
    """What keeps the output from being read whole: a device without its link state, a state
    printed twice or unknown, a cut last line (or, with ``rates``, no ``-r`` figures)."""
    out = []
    for d in devices:
        if d.link_state is None and not d.problems:
            out.append(f"cxi_stat {d.device}: no 'Link state' line")
        out += d.problems
        if rates:
            lacking = [k for k in ("Corrected CW", "Uncorrected CW") if k not in d.rates]
            if lacking:
                out.append(f"cxi_stat {d.device}: no {', '.join(lacking)} rate")
    return out

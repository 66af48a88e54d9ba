"""``rdma link [show]`` (iproute2) output, text or ``rdma -j link`` JSON.

Modern lines: ``link mlx5_7/1 subnet_prefix fe80:... lid 3403 sm_lid 1 lmc 0 state DOWN
physical_state POLLING [netdev ens1f0]``. Old iproute2 prefixes the index:
``0/1: mlx5_0/1: state DOWN physical_state DISABLED`` (with a trailing space).
States are kept as printed (``ACTIVE``, ``DOWN``; ``LINK_UP``, ``POLLING``, ``DISABLED``).

Identity: each port once, each key of a line once (a repeat is ParseError, never first- or
last-wins), a number that is none (``lid 3.4``) is ParseError. :func:`missing` says what keeps
the text from being whole: a last line without its newline (``physical_state POLL`` is a cut,
not a state), a state that ``rdma`` never prints.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ._util import ends_mid_line, require_text, to_int
from .errors import ParseError

_LINE = re.compile(
    r"^\s*(?:link\s+|(?P<idx>\d+)/(?P<idxport>\d+):\s*)(?P<dev>[^\s/]+)/(?P<port>\d+):?\s*(?P<rest>.*?)\s*$"
)
_KEYS = {
    "state",
    "physical_state",
    "netdev",
    "netdev_index",
    "subnet_prefix",
    "lid",
    "sm_lid",
    "lmc",
}


#: what iproute2's rdma prints (rdma/link.c: ib_port_state, ib_port_phys_state)
STATES = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}
PHYS_STATES = {"SLEEP", "POLLING", "DISABLED", "PORT_CONFIGURATION_TRAINING", "LINK_UP",
               "LINK_ERROR_RECOVERY", "PHY_TEST"}
_NUMBERS = ("lid", "sm_lid", "lmc")


@dataclass(frozen=True)
class RdmaLink:
    device: str
    port: int
    state: str | None
    physical_state: str | None
    netdev: str | None = None
    lid: int | None = None
    sm_lid: int | None = None
    lmc: int | None = None
    subnet_prefix: str | None = None
    index: int | None = None  # the legacy "idx/port:" prefix

    @property
    def active(self) -> bool:
        return self.state == "ACTIVE"

    @property
    def link_up(self) -> bool:
        return self.physical_state == "LINK_UP"


def _from_json(data) -> list[RdmaLink]:
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise ParseError("rdma -j link: not a list of links")
    links = []
    for item in data:
        links.append(
            RdmaLink(
                device=str(item.get("ifname")),
                port=_json_int(item.get("port", 0)),
                state=item.get("state"),
                physical_state=item.get("physical_state"),
                netdev=item.get("netdev"),
                lid=item.get("lid"),
                sm_lid=item.get("sm_lid"),
                lmc=item.get("lmc"),
                subnet_prefix=item.get("subnet_prefix"),
                index=item.get("ifindex"),
            )
        )
    return links


def _json_int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParseError(f"rdma -j link: port {value!r} is not a number")
    return value


def parse_rdma_link(text: str) -> list[RdmaLink]:
    text = require_text(text, "rdma link")
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as err:
            raise ParseError(f"rdma -j link: invalid JSON: {err}") from err
        return _from_json(data)
    links: list[RdmaLink] = []
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if m is None:
            continue
        tokens = m.group("rest").split()
        values: dict[str, str] = {}
        i = 0
        while i < len(tokens) - 1:
            if tokens[i] in _KEYS:
                if tokens[i] in values:
                    raise ParseError(f"rdma link: {tokens[i]} twice in {raw.strip()!r}")
                values[tokens[i]] = tokens[i + 1]
                i += 2
            else:
                i += 1
        if "state" not in values and "physical_state" not in values:
            continue
        numbers = {k: to_int(values[k]) for k in _NUMBERS if k in values}
        if None in numbers.values():
            bad = next(k for k, v in numbers.items() if v is None)
            raise ParseError(f"rdma link: {bad} {values[bad]!r} is not a number: {raw.strip()!r}")
        device, port = m.group("dev"), int(m.group("port"))
        if any((x.device, x.port) == (device, port) for x in links):
            raise ParseError(f"rdma link: {device}/{port} listed twice: which one is it?")
        links.append(
            RdmaLink(
                device=device,
                port=port,
                state=values.get("state"),
                physical_state=values.get("physical_state"),
                netdev=values.get("netdev"),
                lid=numbers.get("lid"),
                sm_lid=numbers.get("sm_lid"),
                lmc=numbers.get("lmc"),
                subnet_prefix=values.get("subnet_prefix"),
                index=int(m.group("idx")) if m.group("idx") else None,
            )
        )
    if not links:
        raise ParseError("not 'rdma link' output: no 'link DEV/PORT ... state ...' line")
    return links


def missing(links: list[RdmaLink], text: str | None = None) -> list[str]:
    """What keeps parsed ``rdma link`` output from being whole: a state or physical state
    that ``rdma`` does not print (a cut word), and, given the ``text``, a last line without
    its newline (cut while written). Empty when whole."""
    problems = ["rdma link: output ends mid-line (cut short)"] if ends_mid_line(text) else []
    for link in links:
        where = f"{link.device}/{link.port}"
        if link.state is not None and link.state not in STATES:
            problems.append(f"rdma link {where}: unknown state {link.state!r} (cut short?)")
        if link.physical_state is not None and link.physical_state not in PHYS_STATES:
            problems.append(f"rdma link {where}: unknown physical_state "
                            f"{link.physical_state!r} (cut short?)")
        if link.lmc is not None and not 0 <= link.lmc <= 7:
            problems.append(f"rdma link {where}: lmc {link.lmc} is not 0..7")
    return problems

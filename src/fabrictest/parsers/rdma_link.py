"""``rdma link [show]`` (iproute2) output, text or ``rdma -j link`` JSON.

Modern lines: ``link mlx5_7/1 subnet_prefix fe80:... lid 3403 sm_lid 1 lmc 0 state DOWN
physical_state POLLING [netdev ens1f0]``. Old iproute2 prefixes the index:
``0/1: mlx5_0/1: state DOWN physical_state DISABLED`` (with a trailing space).
States are kept as printed (``ACTIVE``, ``DOWN``; ``LINK_UP``, ``POLLING``, ``DISABLED``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ._util import require_text, to_int
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


def _from_json(data: list[dict]) -> list[RdmaLink]:
    links = []
    for item in data:
        links.append(
            RdmaLink(
                device=str(item.get("ifname")),
                port=int(item.get("port", 0)),
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
                values[tokens[i]] = tokens[i + 1]
                i += 2
            else:
                i += 1
        if "state" not in values and "physical_state" not in values:
            continue
        links.append(
            RdmaLink(
                device=m.group("dev"),
                port=int(m.group("port")),
                state=values.get("state"),
                physical_state=values.get("physical_state"),
                netdev=values.get("netdev"),
                lid=to_int(values["lid"]) if "lid" in values else None,
                sm_lid=to_int(values["sm_lid"]) if "sm_lid" in values else None,
                lmc=to_int(values["lmc"]) if "lmc" in values else None,
                subnet_prefix=values.get("subnet_prefix"),
                index=int(m.group("idx")) if m.group("idx") else None,
            )
        )
    if not links:
        raise ParseError("not 'rdma link' output: no 'link DEV/PORT ... state ...' line")
    return links

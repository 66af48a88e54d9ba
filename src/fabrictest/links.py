"""Streams of a tx/rx run as links (transmitter host -> receiver host): the names of their
per-link figures and the node(s) a failing figure points at. Pure; used by the ReFrame suite
(reframe_tests/txrx.py) and unit-tested in tests/reframe/test_links.py."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace


def perf_name(text: str) -> str:
    """A performance variable name from free text (host names)."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")


def node_var(host: str) -> str:
    """The receive rate of one host (the sum of its streams)."""
    return f"node_{perf_name(host)}_rx_gbps"


@dataclass(frozen=True)
class Link:
    """One stream: transmitter index ``t`` on host ``tx`` into a receiver on host ``rx``."""

    t: int
    tx: str
    rx: str
    gbps: float | None
    stream_var: str = ""
    tx_var: str = ""
    label: str = ""  # node03->node01 ("from transmitter t" added where streams share the hosts)


def name_links(links: list[Link]) -> list[Link]:
    """Name each link's figures: ``stream_<tx>_to_<rx>_gbps`` and ``tx_<tx>_gbps``, with
    ``_tx<t>`` (the transmitter index) added where two streams share those hosts (ranks on
    one host)."""
    pairs = Counter((x.tx, x.rx) for x in links)
    senders = Counter(x.tx for x in links)
    out = []
    for x in links:
        pair, label = f"stream_{perf_name(x.tx)}_to_{perf_name(x.rx)}", f"{x.tx}->{x.rx}"
        if pairs[(x.tx, x.rx)] > 1:
            pair, label = pair + f"_tx{x.t}", label + f" from transmitter {x.t}"
        tx = f"tx_{perf_name(x.tx)}" + (f"_tx{x.t}" if senders[x.tx] > 1 else "")
        out.append(replace(x, stream_var=f"{pair}_gbps", tx_var=f"{tx}_gbps", label=label))
    return out


def suspects(links: list[Link], failed: set[str]) -> set[str]:
    """Hosts all of whose streams (sent or received) failed: a host with a healthy stream is
    not the cause of another stream's slowness."""
    hosts = {h for x in links for h in (x.tx, x.rx)}
    return {h for h in hosts
            if all(x.stream_var in failed for x in links if h in (x.tx, x.rx))}


def who_of(link: Link, bad: set[str]) -> str:
    """The node(s) to look at for a failing stream: its ends among the suspects, else the link
    itself (both ends have healthy streams)."""
    ends = [h for h in dict.fromkeys((link.tx, link.rx)) if h in bad]
    return " or ".join(ends) if ends else f"{link.tx}->{link.rx}"


def place_of(var: str, links: list[Link], failed: set[str]) -> tuple[str, str]:
    """(who, where) of a per-link or per-node figure (see FabricTest.figure_place)."""
    bad = suspects(links, failed)
    for x in links:
        if var == x.stream_var:
            return who_of(x, bad), f"stream {x.label}"
        if var == x.tx_var:
            return who_of(x, bad), f"transmitter {x.t} on {x.tx} sending to {x.rx}"
    for host in dict.fromkeys(x.rx for x in links):
        if var == node_var(host):
            into = [x for x in links if x.rx == host]
            who = [who_of(x, bad) for x in into if x.stream_var in failed]
            senders = ", ".join(dict.fromkeys(x.tx for x in into))
            return " and ".join(dict.fromkeys(who)) or host, f"{host} receiving from {senders}"
    return "", ""

"""Link rates and directions: what `tc` is asked to do on a node's veth pair (pure, no system).

A node's link is a veth pair: `eth0` inside the node's namespace and `vcv-<node>` on the
bridge. A queueing discipline shapes what leaves a device, so

* ``tx`` (what the node SENDS) is shaped on the node-side `eth0`,
* ``rx`` (what the node RECEIVES) is shaped on the host-side `vcv-<node>`,
* ``both`` shapes the two ends (the default, and how `vcluster up` shapes every link).
"""

from __future__ import annotations

import math
import re

TX, RX, BOTH = "tx", "rx", "both"
DIRECTIONS = (TX, RX, BOTH)
NODE_DEVICE = "eth0"  # the node-side end of every pair, inside the node's namespace

_RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(bit|bps)?\s*$", re.IGNORECASE)


class PlanError(ValueError):
    """A request that cannot describe a cluster or its links (bad node name, rate, count...)."""


MAX_RATE_BITS = 10**12  # 1000gbit


def parse_rate(text: str) -> int:
    """A tc-style rate ('200mbit', '50Mbit', '1gbit', '500kbit', '1000000') -> bits/s.

    'bps' means bytes per second, as in tc.
    """
    m = _RATE_RE.match(str(text))
    if not m:
        raise PlanError(f"bad rate {text!r}: use e.g. 50mbit, 1gbit, 500kbit")
    value = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    if (m.group(3) or "bit").lower() == "bps":
        value *= 8
    if not math.isfinite(value) or value > MAX_RATE_BITS:
        raise PlanError(f"rate {text!r} is above {MAX_RATE_BITS // 10**9}gbit: no veth link "
                        "carries it")
    bits = int(value)
    if bits < 8000:
        raise PlanError(f"rate {text!r} is below 8kbit: too slow to carry Slurm's own traffic")
    return bits


def format_rate(bits: int) -> str:
    """bits/s -> the shortest exact tc spelling: 200000000 -> '200mbit'."""
    for unit, scale in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits % scale == 0:
            return f"{bits // scale}{unit}"
    return f"{bits}bit"


def burst_bytes(rate_bits: int) -> int:
    """The token bucket of a link shaped at `rate_bits`: 10 ms of traffic, at least 64 KiB
    (so that GSO segments pass). A transfer that starts on a full bucket may send this much
    above the rate."""
    return max(rate_bits // 8 // 100, 64 * 1024)


def tbf_args(rate_bits: int) -> list[str]:
    """`tc qdisc replace dev X root` arguments for a token bucket at `rate_bits`.

    The bucket holds 10 ms of traffic (:func:`burst_bytes`) and the queue 50 ms, so TCP
    settles on the rate instead of bursting.
    """
    return ["tbf", "rate", f"{rate_bits}bit", "burst", str(burst_bytes(rate_bits)), "latency",
            "50ms"]


def directions(direction: str) -> tuple[str, ...]:
    """'both' -> ('tx', 'rx'); 'tx' -> ('tx',); PlanError for anything else."""
    if direction not in DIRECTIONS:
        raise PlanError(f"bad direction {direction!r}: use tx, rx or both")
    return (TX, RX) if direction == BOTH else (direction,)


def shaped_end(direction: str, netns: str, veth: str) -> tuple[str | None, str]:
    """(namespace or None for the root namespace, device) whose egress carries `direction`."""
    if direction == TX:
        return netns, NODE_DEVICE
    if direction == RX:
        return None, veth
    raise PlanError(f"{direction!r} is not one direction (tx or rx)")


def describe(direction: str) -> str:
    """Words for a direction in messages: 'tx (what it sends)'."""
    return {TX: "tx (what it sends)", RX: "rx (what it receives)",
            BOTH: "link (tx and rx)"}[direction]

"""A simulated verbs provider: pyverbs' API without an RDMA device.

Selected only by FABRICTEST_VERBS=sim (never by default). It lets the rdma transport run as a
whole on a machine with no NIC and no soft-RoCE: the device-bound objects (device list,
Context with its port and GID table, PD, MR, CQ, QP and the QPInitAttr that binds them) are
simulated here; work requests, scatter-gather entries, QPCap, QPAttr, AHAttr, GlobalRoute,
GID and work completions are pyverbs' own classes, so the transport builds exactly what it
would build for a NIC, and the provider reads the work requests as the C structs a driver
reads. The wire is shared memory between processes of one host (see `wire`); faults for
tests and the copy-free benchmark wire are set in the environment (see `config`).

What is simulated is the verbs semantics the transport depends on (see `qp`); what is not:
timing (no link rate, no congestion, no PFC/ECN), multi-packet segmentation on the wire,
atomics, reads, sends, SRQs, UD, inline data, more than one SGE, memory windows, events.
"""

from __future__ import annotations

from .config import SimConfigError
from .device import MR, PD, Context, DeviceAttr, PortAttr, get_device_list
from .qp import QP, provider_times, stats
from .queues import CQ, QPInitAttr

__all__ = [
    "CQ", "MR", "PD", "QP", "Context", "DeviceAttr", "PortAttr", "QPInitAttr",
    "SimConfigError", "get_device_list", "provider_times", "stats",
]  # fmt: skip

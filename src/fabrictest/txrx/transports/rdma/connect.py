"""Connection set-up of the rdma method: the device, the queue pairs, the exchange over MPI.

`probe` opens the device (first with an active port unless --device), picks the port's GID
and reads its limits; `run` creates the PD, memory regions, CQs and QPs (one QP per stream on
a receiver, all on one CQ), exchanges QP numbers, PSNs, GIDs/LIDs, MTUs, ring addresses and
rkeys over MPI, walks every QP RESET -> INIT -> RTR -> RTS and hands over to `transmit` or
`receive`. A provider error anywhere becomes one line naming the rank (no traceback).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from fabrictest.txrx import ring
from fabrictest.txrx.bottleneck import port_rate_gbps
from fabrictest.txrx.errors import Fault, Unavailable
from fabrictest.txrx.output import RxReport, buffer_line, emit
from fabrictest.txrx.sync import allgather_obj

from . import receive, transmit, verbs
from .gid import GidEntry, port_gids, select_gid
from .verbs import E, mask


@dataclass
class Setup:
    ctx: object
    device: str
    port: int
    gid: GidEntry | None
    roce: bool
    lid: int
    mtu: int
    max_qp_wr: int
    max_cqe: int
    pv: object = None  # the provider (verbs.provider())
    extra: dict = field(default_factory=dict)
    rate_gbps: float | None = None  # the port's rate from sysfs (None: simulated or unread)

    @property
    def simulated(self) -> bool:
        return bool(getattr(self.pv, "simulated", False))


@dataclass(frozen=True)
class Endpoint:
    """What a QP's peer needs to know (exchanged over MPI)."""

    qpn: int
    psn: int
    gid: str | None  # canonical GID (RoCE) or None (InfiniBand, LID routed)
    lid: int
    mtu: int  # ibv_mtu enum value of the port's active MTU
    addr: int = 0  # receiver ring address of this stream
    rkey: int = 0


def probe(opts, host: str, env=None) -> Setup:
    """Open the RDMA device and pick port and GID, or raise Unavailable (one line)."""
    pv = verbs.provider(env)
    if pv.simulated and pv.wire == "nocopy" and opts.test != "throughput":
        raise Unavailable(
            "FABRICTEST_VERBS_SIM_WIRE=nocopy moves no payload, so --test ones/increment cannot"
            " check one: use it with --test throughput (a benchmark of the loops)"
        )
    try:
        devs = pv.get_device_list()
    except Exception:
        devs = []
    names = []
    for dev in devs:
        n = dev.name
        names.append(n.decode() if isinstance(n, bytes) else str(n))
    if not names:
        raise Unavailable(
            f"no RDMA device on {host}: the rdma method needs one (ibv_get_device_list found"
            " none); use --method mpi"
        )
    if opts.device is not None and opts.device not in names:
        raise Unavailable(f"RDMA device {opts.device} not found on {host} (found: {', '.join(names)})")
    problems = []
    for name in [opts.device] if opts.device else names:
        try:
            ctx = pv.Context(name=name)
            pattr = ctx.query_port(opts.port)
        except Exception as err:
            problems.append(f"{name} port {opts.port}: {err}")
            continue
        if pattr.state != E("IBV_PORT_ACTIVE"):
            problems.append(f"{name} port {opts.port} is not active")
            continue
        roce = pattr.link_layer != E("IBV_LINK_LAYER_INFINIBAND")
        layer = "ethernet" if roce else "infiniband"
        entries = port_gids(ctx, name, opts.port, pattr, layer)
        gid = select_gid(entries, opts.gid_index, layer, f"{name} port {opts.port} on {host}")
        dattr = ctx.query_device()
        rate = None if pv.simulated else port_rate_gbps(name, opts.port)
        return Setup(ctx, name, opts.port, gid, roce, pattr.lid, pattr.active_mtu,
                     dattr.max_qp_wr, dattr.max_cqe, pv, rate_gbps=rate)  # fmt: skip
    raise Unavailable(f"no usable RDMA port on {host}: {'; '.join(problems)}; use --method mpi")


def qp_steps(
    transport: str, local: Endpoint, remote: Endpoint, port: int, gid_index: int | None,
    roce: bool = True, hop_limit: int = 64, timeout: int = 14, retry: int = 7,
) -> list[tuple[dict, list[str]]]:  # fmt: skip
    """Attributes and mask names of the RESET->INIT->RTR->RTS transitions (pure).

    Attribute values are plain ints, except `qp_state` (an enum name) and `ah_attr`, a dict
    (is_global, dgid, sgid_index, hop_limit, dlid, port_num, sl)."""
    if transport not in ("uc", "rc"):
        raise ValueError(f"transport {transport!r}")
    init = (
        {"qp_state": "IBV_QPS_INIT", "pkey_index": 0, "port_num": port,
         "qp_access_flags": E("IBV_ACCESS_LOCAL_WRITE") | E("IBV_ACCESS_REMOTE_WRITE")},
        ["IBV_QP_STATE", "IBV_QP_PKEY_INDEX", "IBV_QP_PORT", "IBV_QP_ACCESS_FLAGS"],
    )  # fmt: skip
    ah = {"is_global": 1 if roce else 0, "dgid": remote.gid if roce else None,
          "sgid_index": gid_index if roce else 0, "hop_limit": hop_limit if roce else 0,
          "dlid": 0 if roce else remote.lid, "port_num": port, "sl": 0}  # fmt: skip
    rtr_attr = {"qp_state": "IBV_QPS_RTR", "path_mtu": min(local.mtu, remote.mtu),
                "dest_qp_num": remote.qpn, "rq_psn": remote.psn, "ah_attr": ah}  # fmt: skip
    rtr_mask = ["IBV_QP_STATE", "IBV_QP_AV", "IBV_QP_PATH_MTU", "IBV_QP_DEST_QPN", "IBV_QP_RQ_PSN"]
    rts_attr = {"qp_state": "IBV_QPS_RTS", "sq_psn": local.psn}
    rts_mask = ["IBV_QP_STATE", "IBV_QP_SQ_PSN"]
    if transport == "rc":
        rtr_attr.update(max_dest_rd_atomic=1, min_rnr_timer=12)
        rtr_mask += ["IBV_QP_MAX_DEST_RD_ATOMIC", "IBV_QP_MIN_RNR_TIMER"]
        rts_attr.update(timeout=timeout, retry_cnt=retry, rnr_retry=7, max_rd_atomic=1)
        rts_mask += ["IBV_QP_TIMEOUT", "IBV_QP_RETRY_CNT", "IBV_QP_RNR_RETRY",
                     "IBV_QP_MAX_QP_RD_ATOMIC"]  # fmt: skip
    return [init, (rtr_attr, rtr_mask), (rts_attr, rts_mask)]


def connect(pv, qp, steps) -> None:
    for attr, names in steps:
        qp.modify(verbs.qp_attr(pv, attr), mask(names))


def run(comm, opts, role, setup: Setup, host: str, shape):
    """Create, connect and run this rank's side; provider errors become one-line faults."""
    who = f"rank {role.rank} ({role.kind} {role.index})"
    try:
        return _run(comm, opts, role, setup, host, shape)
    except setup.pv.Error as err:
        raise Fault(f"{who}: verbs error: {err}") from None


def _run(comm, opts, role, setup: Setup, host: str, shape):
    pv, ctx = setup.pv, setup.ctx
    pd = pv.PD(ctx)
    nbytes = int(np.prod(shape))
    slots, size = opts.slots, opts.msg_size
    qpt = E("IBV_QPT_UC" if opts.transport == "uc" else "IBV_QPT_RC")
    depth = max(16, min(setup.max_qp_wr, 4096))
    gid = setup.gid.gid if (setup.roce and setup.gid) else None
    gidx = setup.gid.index if setup.gid else 0
    lines = [buffer_line(host, role.kind, shape)]
    if setup.simulated:
        lines.append(f"{host}, verbs provider is {pv.describe}: no RDMA device was used")
    emit(lines)
    local_write, remote_write = E("IBV_ACCESS_LOCAL_WRITE"), E("IBV_ACCESS_REMOTE_WRITE")

    def make_qp(cq, send_wr, recv_wr):
        cap = pv.QPCap(max_send_wr=send_wr, max_recv_wr=recv_wr, max_send_sge=1, max_recv_sge=1)
        return pv.QP(pd, pv.QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, cap=cap, sq_sig_all=0))

    def endpoint(qp, addr=0, rkey=0):
        return Endpoint(qp.qp_num, random.getrandbits(24), gid, setup.lid, setup.mtu, addr, rkey)

    if role.is_receiver:
        mr = pv.MR(pd, nbytes, local_write | remote_write)
        words = verbs.np_view(mr, nbytes, shape).view(np.uint64).reshape(role.streams, slots, size // 8)
        sink = pv.MR(pd, 64, local_write)
        cq = pv.CQ(ctx, min(setup.max_cqe, depth * role.streams + 16), None, None, 0)
        qps = [make_qp(cq, 16, depth) for _ in role.peers]
        base = verbs.buffer_address(mr)
        mine = {tx: endpoint(qp, base + k * slots * size, mr.rkey)
                for k, (tx, qp) in enumerate(zip(role.peers, qps, strict=True))}  # fmt: skip
        info = allgather_obj(comm, mine, opts.timeout, "exchanging queue pair details")
        for tx, qp in zip(role.peers, qps, strict=True):
            connect(pv, qp, qp_steps(opts.transport, mine[tx], info[tx], setup.port, gidx, setup.roce))
        streams, cpu, own = receive.receive(comm, opts, role, pv, qps, cq, sink, words, depth)
        rep = RxReport(role.rank, role.index, host, streams, own=own)
        if setup.simulated:
            rep.simulated = {"provider": pv.times(), "loop_cpu_s": cpu}
        return rep

    mr = pv.MR(pd, nbytes, local_write)
    rows = verbs.np_view(mr, nbytes, shape).view(np.uint64).reshape(slots, size // 8)
    cq = pv.CQ(ctx, min(setup.max_cqe, depth + 16), None, None, 0)
    qp = make_qp(cq, depth, 1)
    mine = endpoint(qp)
    info = allgather_obj(comm, mine, opts.timeout, "exchanging queue pair details")
    remote = info[role.peers[0]][role.rank]
    connect(pv, qp, qp_steps(opts.transport, mine, remote, setup.port, gidx, setup.roce))
    if opts.test == "ones":
        ring.fill_ones(rows)
    return transmit.transmit(comm, opts, role, pv, qp, cq, mr, rows, remote, depth, host)


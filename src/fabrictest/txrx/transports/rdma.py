"""The `rdma` method: RDMA WRITE WITH IMMEDIATE over UC (default) or RC queue pairs (pyverbs).

Each transmitter has one QP connected to one QP of its receiver (a receiver has one QP per
stream, all completing on one CQ). Message `seq` is written from the transmitter's slot
`seq % slots` to the receiver's slot `seq % slots`, with `seq` as the immediate data, so a lost
message never shifts later ones. QP numbers, PSNs, GIDs/LIDs, MTUs, addresses and rkeys are
exchanged over MPI. Transmitters post prebuilt chains of work requests (one `post_send` per
chain, one signalled completion per chain); receivers poll completions in batches, account for
the immediate data as arrays and re-post receive requests as chains. Transmitters send their
final count over MPI; the receiver then drains for a short grace period and counts what did not
arrive as missed (tail loss included) instead of waiting for it.

pyverbs is imported lazily: its enums live in `pyverbs.enums` (rdma-core <= 5x, Debian 12's 44)
or `pyverbs.libibverbs_enums` (newer, e.g. 59); `E()` reads either, with the verbs ABI values as
a last resort. The pure parts (GID choice, QP attributes, byte order of the immediate data) are
unit-tested without a device.
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
import random
import socket
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from fabrictest.txrx import faults, ring
from fabrictest.txrx.errors import Fault, Unavailable
from fabrictest.txrx.output import RxReport, StreamReport, TxReport, buffer_line, emit
from fabrictest.txrx.stats import GapCounter
from fabrictest.txrx.sync import Deadline, allgather_obj, barrier, wait

FINAL_TAG = 0x717A
DRAIN_GRACE = 0.2  # seconds to wait for stragglers after a transmitter's final count
SYSFS = "/sys/class/infiniband"

# ibv_* values from <infiniband/verbs.h> (kernel/user ABI, stable across rdma-core releases)
ABI = {
    "IBV_QPT_RC": 2, "IBV_QPT_UC": 3,
    "IBV_QPS_RESET": 0, "IBV_QPS_INIT": 1, "IBV_QPS_RTR": 2, "IBV_QPS_RTS": 3,
    "IBV_QP_STATE": 1, "IBV_QP_ACCESS_FLAGS": 8, "IBV_QP_PKEY_INDEX": 16, "IBV_QP_PORT": 32,
    "IBV_QP_AV": 128, "IBV_QP_PATH_MTU": 256, "IBV_QP_TIMEOUT": 512, "IBV_QP_RETRY_CNT": 1024,
    "IBV_QP_RNR_RETRY": 2048, "IBV_QP_RQ_PSN": 4096, "IBV_QP_MAX_QP_RD_ATOMIC": 8192,
    "IBV_QP_MIN_RNR_TIMER": 32768, "IBV_QP_SQ_PSN": 65536, "IBV_QP_DEST_QPN": 1048576,
    "IBV_QP_MAX_DEST_RD_ATOMIC": 131072,
    "IBV_ACCESS_LOCAL_WRITE": 1, "IBV_ACCESS_REMOTE_WRITE": 2,
    "IBV_WR_RDMA_WRITE_WITH_IMM": 1, "IBV_SEND_SIGNALED": 2,
    "IBV_WC_SUCCESS": 0, "IBV_WC_RECV_RDMA_WITH_IMM": 129,
    "IBV_PORT_ACTIVE": 4, "IBV_LINK_LAYER_INFINIBAND": 1, "IBV_LINK_LAYER_ETHERNET": 2,
    "IBV_MTU_256": 1, "IBV_MTU_1024": 3, "IBV_MTU_4096": 5,
    "IBV_GID_TYPE_IB": 0, "IBV_GID_TYPE_ROCE_V1": 1, "IBV_GID_TYPE_ROCE_V2": 2,
}  # fmt: skip

_enums = None


def enums_module():
    """pyverbs' enum module: `libibverbs_enums` (newer rdma-core) or `enums` (44 and older)."""
    global _enums
    if _enums is None:
        try:
            import pyverbs.libibverbs_enums as mod
        except ImportError:
            try:
                import pyverbs.enums as mod
            except ImportError:
                mod = False
        _enums = mod
    return _enums or None


def E(name: str) -> int:
    mod = enums_module()
    value = getattr(mod, name, None) if mod is not None else None
    return int(ABI[name] if value is None else value)


def mask(names) -> int:
    out = 0
    for n in names:
        out |= E(n)
    return out


# ---------------------------------------------------------------- pure parts (unit-tested)


def htonl(x: int) -> int:
    return socket.htonl(int(x) & 0xFFFFFFFF)


def ntohl(x: int) -> int:
    return socket.ntohl(int(x) & 0xFFFFFFFF)


def imm_of(seq: int) -> int:
    """Immediate data for message `seq`: the sequence number, in network byte order."""
    return htonl(seq)


def seq_of(imm: int) -> int:
    return ntohl(imm)


def canonical_gid(text: str) -> str:
    """Eight 4-digit groups, as pyverbs' GID() and sysfs write them."""
    return ipaddress.IPv6Address(text.strip()).exploded


@dataclass(frozen=True)
class GidEntry:
    index: int
    gid: str
    gid_type: str  # "RoCE v2", "RoCE v1" ("IB/RoCE v1" in sysfs) or "IB"
    netdev: str | None = None

    @property
    def is_zero(self) -> bool:
        return ipaddress.IPv6Address(self.gid) == ipaddress.IPv6Address("::")

    @property
    def is_roce_v2(self) -> bool:
        return self.gid_type.strip().lower() == "roce v2"

    @property
    def is_ipv4_mapped(self) -> bool:
        return ipaddress.IPv6Address(self.gid).ipv4_mapped is not None

    @property
    def is_link_local(self) -> bool:
        return ipaddress.IPv6Address(self.gid).is_link_local


def gid_type_name(value) -> str:
    if isinstance(value, str):
        return value
    return {E("IBV_GID_TYPE_IB"): "IB", E("IBV_GID_TYPE_ROCE_V1"): "RoCE v1",
            E("IBV_GID_TYPE_ROCE_V2"): "RoCE v2"}.get(int(value), str(value))  # fmt: skip


def select_gid(
    entries: list[GidEntry], override: int | None = None, link_layer: str = "ethernet",
    where: str = "the port",
) -> GidEntry:  # fmt: skip
    """The GID to use: `override` if given, else a RoCE v2 GID (IPv4-mapped first, then global
    IPv6, then link-local); on InfiniBand, index 0. Raises Unavailable with the reason."""
    valid = [e for e in entries if not e.is_zero]
    if override is not None:
        for e in valid:
            if e.index == override:
                return e
        raise Unavailable(f"--gid-index {override} is empty or missing on {where}")
    if link_layer == "infiniband":
        for e in valid:
            if e.index == 0:
                return e
        if valid:
            return min(valid, key=lambda e: e.index)
        raise Unavailable(f"no GID on {where}")
    v2 = [e for e in valid if e.is_roce_v2]
    if not v2:
        raise Unavailable(
            f"no RoCE v2 GID on {where} (is an IP address configured on its netdev?); "
            "pass --gid-index to use another"
        )
    return min(v2, key=lambda e: (not e.is_ipv4_mapped, e.is_link_local, e.index))


def read_sysfs_gids(device: str, port: int, root: str = SYSFS) -> list[GidEntry]:
    """GID table from sysfs (gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>)."""
    base = os.path.join(root, device, "ports", str(port))
    out = []
    try:
        names = os.listdir(os.path.join(base, "gids"))
    except OSError:
        return out
    for name in sorted(names, key=lambda x: int(x) if x.isdigit() else -1):
        if not name.isdigit():
            continue

        def read(*parts):
            try:
                with open(os.path.join(base, *parts)) as f:
                    return f.read().strip()
            except OSError:
                return None

        gid = read("gids", name)
        if not gid:
            continue
        out.append(
            GidEntry(int(name), canonical_gid(gid), read("gid_attrs", "types", name) or "",
                     read("gid_attrs", "ndevs", name))
        )  # fmt: skip
    return out


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


def chain_length(num_cmsgs: int, sq_depth: int) -> int:
    """Work requests per chain: the largest divisor of num_cmsgs that fits half the send queue."""
    limit = max(1, sq_depth // 2)
    for n in range(min(num_cmsgs, limit), 0, -1):
        if num_cmsgs % n == 0:
            return n
    return 1


def seqs_from_imm(imms) -> np.ndarray:
    """Sequence numbers from a batch of immediate data values (network byte order)."""
    a = np.asarray(imms, dtype=np.uint32)
    return a.byteswap().astype(np.int64) if np.little_endian else a.astype(np.int64)


# ---------------------------------------------------------------- device discovery


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
    extra: dict = field(default_factory=dict)


def import_pyverbs():
    try:
        import pyverbs.device as device
    except ImportError as err:
        raise Unavailable(
            f"pyverbs cannot be imported ({err}): install python3-pyverbs (or rdma-core+pyverbs)"
            " or use --method mpi"
        ) from None
    return device


def probe(opts, host: str) -> Setup:
    """Open the RDMA device and pick port and GID, or raise Unavailable (one line)."""
    d = import_pyverbs()
    try:
        devs = d.get_device_list()
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
    candidates = [opts.device] if opts.device else names
    problems = []
    for name in candidates:
        try:
            ctx = d.Context(name=name)
            pattr = ctx.query_port(opts.port)
        except Exception as err:
            problems.append(f"{name} port {opts.port}: {err}")
            continue
        if pattr.state != E("IBV_PORT_ACTIVE"):
            problems.append(f"{name} port {opts.port} is not active")
            continue
        roce = pattr.link_layer != E("IBV_LINK_LAYER_INFINIBAND")
        where = f"{name} port {opts.port} on {host}"
        entries = read_sysfs_gids(name, opts.port) or _pyverbs_gids(ctx, opts.port, pattr)
        gid = select_gid(entries, opts.gid_index, "ethernet" if roce else "infiniband", where)
        dattr = ctx.query_device()
        return Setup(ctx, name, opts.port, gid, roce, pattr.lid, pattr.active_mtu,
                     dattr.max_qp_wr, dattr.max_cqe)  # fmt: skip
    raise Unavailable(f"no usable RDMA port on {host}: {'; '.join(problems)}; use --method mpi")


def _pyverbs_gids(ctx, port: int, pattr) -> list[GidEntry]:
    out = []
    for i in range(int(getattr(pattr, "gid_tbl_len", 0) or 0)):
        try:
            gid = ctx.query_gid(port, i).gid
            gtype = gid_type_name(ctx.query_gid_type(port, i))
        except Exception:
            continue
        out.append(GidEntry(i, canonical_gid(gid), gtype))
    return out


# ---------------------------------------------------------------- data path


def _np_view(mr, nbytes: int, shape) -> np.ndarray:
    addr = mr.buf if isinstance(mr.buf, int) else ctypes.addressof(mr.buf)
    raw = (ctypes.c_uint8 * nbytes).from_address(addr)
    return np.ctypeslib.as_array(raw).reshape(shape)


def _qp_attr(attr: dict):
    from pyverbs.addr import GID, AHAttr, GlobalRoute
    from pyverbs.qp import QPAttr

    qa = QPAttr()
    for key, value in attr.items():
        if key == "qp_state":
            qa.qp_state = E(value)
        elif key == "ah_attr":
            gr = None
            if value["is_global"]:
                gr = GlobalRoute(dgid=GID(value["dgid"]), sgid_index=value["sgid_index"],
                                 hop_limit=value["hop_limit"])  # fmt: skip
            qa.ah_attr = AHAttr(dlid=value["dlid"], sl=value["sl"], is_global=value["is_global"],
                                port_num=value["port_num"], gr=gr)  # fmt: skip
        else:
            setattr(qa, key, value)
    return qa


def _connect(qp, steps) -> None:
    for attr, names in steps:
        qp.modify(_qp_attr(attr), mask(names))


def _check_wc(wc, who: str) -> None:
    if wc.status != E("IBV_WC_SUCCESS"):
        try:
            from pyverbs.cq import WC  # noqa: F401
            from pyverbs.enums import ibv_wc_status_to_str as text  # type: ignore
        except Exception:
            text = None
        what = text(wc.status) if text else f"status {wc.status}"
        raise Fault(f"{who}: work completion error: {what} (vendor error {wc.vendor_err})")


def run(comm, opts, role, setup: Setup, host: str, shape) -> TxReport | RxReport:
    from pyverbs.cq import CQ
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.qp import QP, QPCap, QPInitAttr

    ctx = setup.ctx
    pd = PD(ctx)
    nbytes = int(np.prod(shape))
    slots, size = opts.slots, opts.msg_size
    qpt = E("IBV_QPT_UC" if opts.transport == "uc" else "IBV_QPT_RC")
    depth = max(16, min(setup.max_qp_wr, 4096))
    gid = setup.gid.gid if (setup.roce and setup.gid) else None
    gidx = setup.gid.index if setup.gid else 0
    emit([buffer_line(host, role.kind, shape)])
    timeout = opts.timeout

    if role.is_receiver:
        mr = MR(pd, nbytes, E("IBV_ACCESS_LOCAL_WRITE") | E("IBV_ACCESS_REMOTE_WRITE"))
        buf = _np_view(mr, nbytes, shape)
        words = buf.view(np.uint64).reshape(role.streams, slots, size // 8)
        sink = MR(pd, 64, E("IBV_ACCESS_LOCAL_WRITE"))
        cqe = min(setup.max_cqe, depth * role.streams + 16)
        cq = CQ(ctx, cqe, None, None, 0)
        qps = []
        for _ in role.peers:
            cap = QPCap(max_send_wr=16, max_recv_wr=depth, max_send_sge=1, max_recv_sge=1)
            qps.append(QP(pd, QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, cap=cap, sq_sig_all=0)))
        base = mr.buf if isinstance(mr.buf, int) else ctypes.addressof(mr.buf)
        mine = {
            tx: Endpoint(qp.qp_num, random.getrandbits(24), gid, setup.lid, setup.mtu,
                         base + k * slots * size, mr.rkey)
            for k, (tx, qp) in enumerate(zip(role.peers, qps, strict=True))
        }  # fmt: skip
        info = allgather_obj(comm, mine, timeout, "exchanging queue pair details")
        for tx, qp in zip(role.peers, qps, strict=True):
            _connect(qp, qp_steps(opts.transport, mine[tx], info[tx], setup.port, gidx, setup.roce))
        streams = _receive(comm, opts, role, qps, cq, sink, words, depth, host)
        return RxReport(role.rank, role.index, host, streams)

    mr = MR(pd, nbytes, E("IBV_ACCESS_LOCAL_WRITE"))
    buf = _np_view(mr, nbytes, shape)
    rows = buf.view(np.uint64).reshape(slots, size // 8)
    cq = CQ(ctx, min(setup.max_cqe, depth + 16), None, None, 0)
    cap = QPCap(max_send_wr=depth, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, cap=cap, sq_sig_all=0))
    dest = role.peers[0]
    mine = Endpoint(qp.qp_num, random.getrandbits(24), gid, setup.lid, setup.mtu)
    info = allgather_obj(comm, mine, timeout, "exchanging queue pair details")
    remote = info[dest][role.rank]
    _connect(qp, qp_steps(opts.transport, mine, remote, setup.port, gidx, setup.roce))
    if opts.test == "ones":
        ring.fill_ones(rows)
    return _transmit(comm, opts, role, qp, cq, mr, rows, remote, depth, host)


def _transmit(comm, opts, role, qp, cq, mr, rows, remote: Endpoint, depth: int, host: str):
    from pyverbs.wr import SGE, SendWR

    slots, size = opts.slots, opts.msg_size
    op = E("IBV_WR_RDMA_WRITE_WITH_IMM")
    signaled = E("IBV_SEND_SIGNALED")
    base = mr.buf if isinstance(mr.buf, int) else ctypes.addressof(mr.buf)
    lkey = mr.lkey
    L = chain_length(opts.num_cmsgs, depth)
    # in-flight limit: the send queue, and for data checks never a slot still being sent
    limit = depth if opts.test == "throughput" else min(depth, max(L, slots - L))

    def make_wr(slot: int, seq: int, flags: int) -> SendWR:
        sge = SGE(base + slot * size, size, lkey)
        wr = SendWR(wr_id=slot, opcode=op, num_sge=1, sg=[sge], imm_data=imm_of(seq),
                    send_flags=flags)  # fmt: skip
        wr.set_wr_rdma(remote.rkey, ring.remote_address(remote.addr, slot, slots, size))
        return wr

    wrs = [make_wr(s, s, signaled if (s + 1) % L == 0 else 0) for s in range(slots)]
    for s in range(slots - 1):
        if (s + 1) % L:
            wrs[s].next_wr = wrs[s + 1]
    skipped = ring.skipped_seqs(opts.nmsg, opts.inject_loss, opts.seed, role.index)
    stop = faults.stop_at(opts.fault, role.rank)
    fault = opts.fault if opts.fault and opts.fault.rank == role.rank else None
    who = f"Rank {role.index} transmitter (rank {role.rank})"
    inflight: deque = deque()  # (work requests in the chain, objects to keep alive)
    outstanding = 0
    deadline = Deadline(opts.timeout)

    def reap(need_room: int) -> None:
        nonlocal outstanding
        while inflight and outstanding + need_room > limit:
            n, wcs = cq.poll(16)
            if n:
                deadline.touch()
                for wc in wcs[:n]:
                    _check_wc(wc, who)
                    count, _keep = inflight.popleft()
                    outstanding -= count
            elif deadline.expired():
                raise Fault(f"{who}: no send completion for {opts.timeout:g} s")

    sent = 0
    barrier(comm, opts.timeout, f"{who}: waiting for every rank to start")
    t0 = time.perf_counter()
    for _w, seqs in ring.send_windows(opts.nmsg, L, skipped, stop):
        n = int(seqs.size)
        reap(n)
        first_slot = int(seqs[0]) % slots
        if opts.test != "throughput":
            idx = ring.slot_of(seqs, slots)
            block = rows[idx]
            ring.fill_messages(block, seqs, opts.test)
            rows[idx] = block
        if n == L and first_slot % L == 0:
            for i, seq in enumerate(seqs.tolist()):
                wrs[first_slot + i].imm_data = imm_of(seq)
            qp.post_send(wrs[first_slot])
            inflight.append((n, None))
        else:  # a window with skipped sequence numbers: a fresh chain
            chain = [make_wr(int(s) % slots, int(s), 0) for s in seqs.tolist()]
            chain[-1].send_flags = signaled
            for a, b in zip(chain, chain[1:], strict=False):
                a.next_wr = b
            qp.post_send(chain[0])
            inflight.append((n, chain))
        outstanding += n
        sent += n
        if fault is not None:
            faults.trigger(fault, role.rank, sent, opts.timeout)
    reap(limit + 1)
    elapsed = time.perf_counter() - t0
    final = np.array([opts.nmsg, sent], dtype=np.int64)
    wait(comm.Isend(final, role.peers[0], FINAL_TAG), opts.timeout, f"{who}: sending the final count")
    return TxReport(role.rank, role.index, role.peers[0], host, size, sent, opts.nmsg, elapsed)


def _receive(comm, opts, role, qps, cq, sink, words, depth: int, host: str) -> list[StreamReport]:
    from pyverbs.wr import SGE, RecvWR

    slots = opts.slots
    nstreams = len(qps)
    chain_n = max(1, depth // 4)
    sge = SGE(sink.buf if isinstance(sink.buf, int) else ctypes.addressof(sink.buf), 64, sink.lkey)
    chain = [RecvWR(wr_id=i, num_sge=1, sg=[sge]) for i in range(chain_n)]
    for a, b in zip(chain, chain[1:], strict=False):
        a.next_wr = b
    for qp in qps:
        for _ in range(depth // chain_n):
            qp.post_recv(chain[0])
    consumed = [0] * nstreams
    by_qpn = {qp.qp_num: k for k, qp in enumerate(qps)}
    counters = [GapCounter(opts.nmsg) for _ in range(nstreams)]
    corrupt = [0] * nstreams
    t_last: list[float | None] = [None] * nstreams
    finals = [np.zeros(2, dtype=np.int64) for _ in range(nstreams)]
    freqs = [comm.Irecv(finals[k], role.peers[k], FINAL_TAG) for k in range(nstreams)]
    total: list[int | None] = [None] * nstreams
    final_at: list[float] = [0.0] * nstreams
    done = [False] * nstreams
    check = opts.test != "throughput"
    ok, rdma_imm = E("IBV_WC_SUCCESS"), E("IBV_WC_RECV_RDMA_WITH_IMM")
    fault = opts.fault if opts.fault and opts.fault.rank == role.rank else None
    who = f"Rank {role.index} receiver"
    received_all = 0
    barrier(comm, opts.timeout, f"{who}: waiting for every rank to start")
    t0 = time.perf_counter()
    until = [time.monotonic() + opts.timeout] * nstreams  # each stream's own deadline
    imms: list[list[int]] = [[] for _ in range(nstreams)]
    while not all(done):
        n, wcs = cq.poll(64)
        now = time.perf_counter()
        mono = time.monotonic()
        if n:
            for wc in wcs[:n]:
                if wc.status != ok or wc.opcode != rdma_imm:
                    _check_wc(wc, who)
                    continue
                imms[by_qpn[wc.qp_num]].append(wc.imm_data)
            for k in range(nstreams):
                got = imms[k]
                if not got:
                    continue
                seqs = seqs_from_imm(got)
                imms[k] = []
                counters[k].add(seqs)
                t_last[k] = now
                until[k] = mono + opts.timeout
                if check:
                    idx = ring.slot_of(seqs, slots)
                    rows = words[k][idx]
                    corrupt[k] += ring.count_corrupt(rows, seqs, opts.test)
                    words[k][idx, 0] = ring.POISON  # a message that never lands here shows up
                consumed[k] += len(seqs)
                while consumed[k] >= chain_n:
                    qps[k].post_recv(chain[0])
                    consumed[k] -= chain_n
                received_all += len(seqs)
            if fault is not None:
                faults.trigger(fault, role.rank, received_all, opts.timeout)
        for k in range(nstreams):
            if done[k]:
                continue
            if total[k] is None and freqs[k].Test():
                total[k] = int(finals[k][0])
                final_at[k] = now
                until[k] = mono + opts.timeout
            if total[k] is not None:
                c = counters[k]
                quiet = now - max(final_at[k], t_last[k] or 0.0)
                if c.received + c.bad >= total[k] or quiet > DRAIN_GRACE:
                    done[k] = True
            if not done[k] and mono > until[k]:
                raise Fault(
                    f"{who} from transmitter {k}: nothing arrived for {opts.timeout:g} s (received"
                    f" {counters[k].received} of {opts.nmsg}, final count "
                    f"{'not ' if total[k] is None else ''}received): its transmitter (rank "
                    f"{role.peers[k]}) stopped sending or died"
                )
    out = []
    for k in range(nstreams):
        c = counters[k].finish(total[k])
        elapsed = (t_last[k] or final_at[k]) - t0
        out.append(StreamReport(k, role.peers[k], opts.msg_size, c.received, c.missed, c.total,
                                c.loss_rate, corrupt[k], elapsed, c.gaps, c.bad))  # fmt: skip
    return out

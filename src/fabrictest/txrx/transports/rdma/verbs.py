"""The verbs compatibility shim: which provider, enum values, immediates, completions, errors.

Provider: pyverbs (a real device) unless FABRICTEST_VERBS=sim selects the simulated provider
(`fabrictest.simverbs`); any other value is refused. Both hand out the same classes under the
same names, and work requests, SGEs and QP attributes are pyverbs' own either way.

Enums: pyverbs' enum module is `pyverbs.enums` (rdma-core <= 5x, Debian 12's 44) or
`pyverbs.libibverbs_enums` (newer, e.g. 59); `E()` reads either, with the verbs ABI values as
a last resort (they are stable across releases).
"""

from __future__ import annotations

import ctypes
import os
import socket
from types import SimpleNamespace

import numpy as np

from fabrictest.txrx.errors import Fault, Unavailable, UsageError

ENV = "FABRICTEST_VERBS"

# ibv_* values from <infiniband/verbs.h> (kernel/user ABI, stable across rdma-core releases)
ABI = {
    "IBV_QPT_RC": 2, "IBV_QPT_UC": 3,
    "IBV_QPS_RESET": 0, "IBV_QPS_INIT": 1, "IBV_QPS_RTR": 2, "IBV_QPS_RTS": 3, "IBV_QPS_ERR": 6,
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
WC_STATUS = (
    "SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR", "WR_FLUSH_ERR",
    "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR", "REM_ACCESS_ERR",
    "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR",
    "REM_ABORT_ERR", "INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR",
    "GENERAL_ERR",
)  # fmt: skip

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


def wc_status_name(status: int) -> str:
    """`IBV_WC_REM_ACCESS_ERR` for 10 (ibv_wc_status_str's words are not in pyverbs 44)."""
    s = int(status)
    return f"IBV_WC_{WC_STATUS[s]}" if 0 <= s < len(WC_STATUS) else f"status {s}"


# ---------------------------------------------------------------- immediates (pure)


def htonl(x: int) -> int:
    return socket.htonl(int(x) & 0xFFFFFFFF)


def ntohl(x: int) -> int:
    return socket.ntohl(int(x) & 0xFFFFFFFF)


def imm_of(seq: int) -> int:
    """Immediate data for message `seq`: the sequence number, in network byte order."""
    return htonl(seq)


def seq_of(imm: int) -> int:
    return ntohl(imm)


def imms_of(seqs: np.ndarray) -> list[int]:
    """Immediates of a batch of sequence numbers (network byte order), as Python ints."""
    a = np.asarray(seqs).astype(np.uint32)
    return (a.byteswap() if np.little_endian else a).tolist()


def seqs_from_imm(imms) -> np.ndarray:
    """Sequence numbers from a batch of immediate data values (network byte order)."""
    a = np.asarray(imms, dtype=np.uint32)
    return a.byteswap().astype(np.int64) if np.little_endian else a.astype(np.int64)


# ---------------------------------------------------------------- the provider


def provider_name(env=None) -> str:
    """'sim' or 'pyverbs' from FABRICTEST_VERBS; anything else is a usage error."""
    value = (os.environ if env is None else env).get(ENV, "").strip()
    if value in ("", "pyverbs"):
        return "pyverbs"
    if value == "sim":
        return "sim"
    raise UsageError(
        f"{ENV}={value}: expected 'sim' (the simulated verbs provider) or nothing (pyverbs)"
    )


def provider(env=None) -> SimpleNamespace:
    """The classes the transport uses, from pyverbs or from the simulated provider."""
    name = provider_name(env)
    try:
        import pyverbs.device as device
        from pyverbs.addr import GID, AHAttr, GlobalRoute
        from pyverbs.pyverbs_error import PyverbsError
        from pyverbs.qp import QPAttr, QPCap
        from pyverbs.wr import SGE, RecvWR, SendWR
    except ImportError as err:
        extra = " (the simulated provider uses pyverbs' own work requests)" if name == "sim" else ""
        raise Unavailable(
            f"pyverbs cannot be imported ({err}){extra}: install python3-pyverbs (or "
            "rdma-core+pyverbs) or use --method mpi"
        ) from None
    common = dict(GID=GID, AHAttr=AHAttr, GlobalRoute=GlobalRoute, QPAttr=QPAttr, QPCap=QPCap,
                  SGE=SGE, SendWR=SendWR, RecvWR=RecvWR, Error=PyverbsError)  # fmt: skip
    if name == "sim":
        from fabrictest import simverbs as sim
        from fabrictest.simverbs import config, structs

        try:
            structs.offsets()
            wire, faults = config.wire(), config.faults()
            config.directory()
        except (config.SimConfigError, structs.LayoutError) as err:
            raise Unavailable(f"simulated verbs provider: {err}") from None
        return SimpleNamespace(
            name="sim", simulated=True, get_device_list=sim.get_device_list, Context=sim.Context,
            PD=sim.PD, MR=sim.MR, CQ=sim.CQ, QP=sim.QP, QPInitAttr=sim.QPInitAttr,
            describe=f"simulated (FABRICTEST_VERBS=sim, shared-memory wire, "
            f"{'payloads copied' if wire == 'copy' else 'copy-free: payloads not moved'}, "
            f"faults: {faults.describe()})",
            wire=wire, times=sim.provider_times, stats=sim.stats, **common,
        )  # fmt: skip
    from pyverbs.cq import CQ
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.qp import QP, QPInitAttr

    return SimpleNamespace(
        name="pyverbs", simulated=False, get_device_list=device.get_device_list,
        Context=device.Context, PD=PD, MR=MR, CQ=CQ, QP=QP, QPInitAttr=QPInitAttr,
        describe="pyverbs", wire=None, times=None, stats=None, **common,
    )  # fmt: skip


# ---------------------------------------------------------------- objects


def buffer_address(mr) -> int:
    return mr.buf if isinstance(mr.buf, int) else ctypes.addressof(mr.buf)


def np_view(mr, nbytes: int, shape) -> np.ndarray:
    """The memory region as a numpy array (no copy)."""
    raw = (ctypes.c_uint8 * nbytes).from_address(buffer_address(mr))
    return np.ctypeslib.as_array(raw).reshape(shape)


def qp_attr(pv, attr: dict):
    """A pyverbs QPAttr from qp_steps' plain description."""
    qa = pv.QPAttr()
    for key, value in attr.items():
        if key == "qp_state":
            qa.qp_state = E(value)
        elif key == "ah_attr":
            gr = None
            if value["is_global"]:
                gr = pv.GlobalRoute(dgid=pv.GID(value["dgid"]), sgid_index=value["sgid_index"],
                                    hop_limit=value["hop_limit"])  # fmt: skip
            qa.ah_attr = pv.AHAttr(dlid=value["dlid"], sl=value["sl"], is_global=value["is_global"],
                                   port_num=value["port_num"], gr=gr)  # fmt: skip
        else:
            setattr(qa, key, value)
    return qa


def check_wc(wc, who: str) -> None:
    if wc.status != E("IBV_WC_SUCCESS"):
        raise Fault(
            f"{who}: work completion error: {wc_status_name(wc.status)} on QP {wc.qp_num:#x}"
            f" (wr_id {wc.wr_id}, vendor error {wc.vendor_err})"
        )


def sim_stats(pv, qp) -> dict | None:
    """The simulated provider's counters of a queue pair (None with pyverbs)."""
    return pv.stats(qp) if pv.simulated else None

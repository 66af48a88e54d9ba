"""Verbs constants, from pyverbs' own enum module (`libibverbs_enums` in newer rdma-core,
`enums` in 44 and older): the simulated provider speaks the values pyverbs users pass."""

from __future__ import annotations

try:  # pragma: no cover - depends on the installed rdma-core
    import pyverbs.libibverbs_enums as _mod
except ImportError:
    import pyverbs.enums as _mod


def E(name: str) -> int:
    return int(getattr(_mod, name))


QPT_RC, QPT_UC = E("IBV_QPT_RC"), E("IBV_QPT_UC")
QPS_RESET, QPS_INIT, QPS_RTR = E("IBV_QPS_RESET"), E("IBV_QPS_INIT"), E("IBV_QPS_RTR")
QPS_RTS, QPS_ERR = E("IBV_QPS_RTS"), E("IBV_QPS_ERR")
LOCAL_WRITE, REMOTE_WRITE = E("IBV_ACCESS_LOCAL_WRITE"), E("IBV_ACCESS_REMOTE_WRITE")
WR_RDMA_WRITE, WR_RDMA_WRITE_WITH_IMM = E("IBV_WR_RDMA_WRITE"), E("IBV_WR_RDMA_WRITE_WITH_IMM")
SEND_SIGNALED = E("IBV_SEND_SIGNALED")
WC_SUCCESS, WC_LOC_LEN_ERR = E("IBV_WC_SUCCESS"), E("IBV_WC_LOC_LEN_ERR")
WC_LOC_QP_OP_ERR, WC_LOC_PROT_ERR = E("IBV_WC_LOC_QP_OP_ERR"), E("IBV_WC_LOC_PROT_ERR")
WC_WR_FLUSH_ERR, WC_REM_ACCESS_ERR = E("IBV_WC_WR_FLUSH_ERR"), E("IBV_WC_REM_ACCESS_ERR")
WC_RETRY_EXC_ERR = E("IBV_WC_RETRY_EXC_ERR")
WC_RDMA_WRITE, WC_RECV_RDMA_WITH_IMM = E("IBV_WC_RDMA_WRITE"), E("IBV_WC_RECV_RDMA_WITH_IMM")
WC_WITH_IMM = E("IBV_WC_WITH_IMM")
PORT_ACTIVE, LINK_LAYER_ETHERNET = E("IBV_PORT_ACTIVE"), E("IBV_LINK_LAYER_ETHERNET")
MTU_1024, MTU_4096 = E("IBV_MTU_1024"), E("IBV_MTU_4096")
GID_TYPE_ROCE_V1, GID_TYPE_ROCE_V2 = E("IBV_GID_TYPE_ROCE_V1"), E("IBV_GID_TYPE_ROCE_V2")

# attribute mask bits a RESET->INIT->RTR->RTS walk uses (the kernel's qp_state_table)
M = {n: E(f"IBV_QP_{n}") for n in (
    "STATE", "CUR_STATE", "ACCESS_FLAGS", "PKEY_INDEX", "PORT", "AV", "PATH_MTU", "TIMEOUT",
    "RETRY_CNT", "RNR_RETRY", "RQ_PSN", "MAX_QP_RD_ATOMIC", "ALT_PATH", "MIN_RNR_TIMER",
    "SQ_PSN", "MAX_DEST_RD_ATOMIC", "PATH_MIG_STATE", "DEST_QPN",
)}  # fmt: skip


def mtu_bytes(mtu_enum: int) -> int:
    return 128 << int(mtu_enum)  # IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5

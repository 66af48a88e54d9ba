"""Which QP state transitions verbs accept, with which attribute masks.

The kernel's `qp_state_table` (drivers/infiniband/core/verbs.c) for UC and RC queue pairs,
as far as RESET -> INIT -> RTR -> RTS goes: (required, optional) mask bits per transition
beyond IBV_QP_STATE. Anything else is EINVAL; any state may go to RESET or ERR.
"""

from __future__ import annotations

from .enums import QPS_INIT, QPS_RESET, QPS_RTR, QPS_RTS, QPT_RC, QPT_UC, M


def _req(*names):
    return sum(M[n] for n in names)


_UC_RTR = _req("AV", "PATH_MTU", "DEST_QPN", "RQ_PSN")
TRANSITIONS = {  # (from, to): {qp type: (required, optional)} as in the kernel's qp_state_table
    (QPS_RESET, QPS_INIT): {t: (_req("PKEY_INDEX", "PORT", "ACCESS_FLAGS"), 0)
                            for t in (QPT_UC, QPT_RC)},
    (QPS_INIT, QPS_INIT): {t: (0, _req("PKEY_INDEX", "PORT", "ACCESS_FLAGS"))
                           for t in (QPT_UC, QPT_RC)},
    (QPS_INIT, QPS_RTR): {
        QPT_UC: (_UC_RTR, _req("ALT_PATH", "ACCESS_FLAGS", "PKEY_INDEX")),
        QPT_RC: (_UC_RTR | _req("MAX_DEST_RD_ATOMIC", "MIN_RNR_TIMER"),
                 _req("ALT_PATH", "ACCESS_FLAGS", "PKEY_INDEX")),
    },
    (QPS_RTR, QPS_RTS): {
        QPT_UC: (_req("SQ_PSN"), _req("CUR_STATE", "ALT_PATH", "ACCESS_FLAGS", "PATH_MIG_STATE")),
        QPT_RC: (_req("SQ_PSN", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "MAX_QP_RD_ATOMIC"),
                 _req("CUR_STATE", "ALT_PATH", "ACCESS_FLAGS", "MIN_RNR_TIMER", "PATH_MIG_STATE")),
    },
    (QPS_RTS, QPS_RTS): {
        QPT_UC: (0, _req("CUR_STATE", "ACCESS_FLAGS", "ALT_PATH", "PATH_MIG_STATE")),
        QPT_RC: (0, _req("CUR_STATE", "ACCESS_FLAGS", "ALT_PATH", "PATH_MIG_STATE",
                         "MIN_RNR_TIMER")),
    },
}  # fmt: skip

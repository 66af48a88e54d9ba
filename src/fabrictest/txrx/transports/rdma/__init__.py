"""The `rdma` method: RDMA WRITE WITH IMMEDIATE over UC (default) or RC queue pairs.

Each transmitter has one QP connected to one QP of its receiver (a receiver has one QP per
stream, all completing on one CQ). Modules, along the seams of the data path:

- `verbs`: the compatibility shim (pyverbs or, with FABRICTEST_VERBS=sim, the simulated
  provider `fabrictest.simverbs`; enum values across rdma-core releases; immediates; errors);
- `gid`: the GID model (which GID of the port a QP uses);
- `connect`: device probe, QP creation, exchange over MPI, RESET->INIT->RTR->RTS;
- `transmit` and `receive`: the two data loops.
"""

from __future__ import annotations

from .connect import Setup, probe, run

__all__ = ["Setup", "probe", "run"]

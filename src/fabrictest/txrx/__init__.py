"""The RoCE transmitter/receiver tool (`txrx`).

Transmitters stream numbered messages into receivers, over MPI (`--method mpi`) or RDMA WRITE
WITH IMMEDIATE through pyverbs (`--method rdma`), and every rank reports data rate and message
loss with the same log lines as the SEREN tool it replaces (see docs/txrx.md).
"""

from fabrictest.txrx.errors import Fault, TxrxError, UsageError

__all__ = ["Fault", "TxrxError", "UsageError"]

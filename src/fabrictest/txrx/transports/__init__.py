"""Data paths: `mpi` (persistent Isend/Irecv over the ring) and `rdma` (pyverbs)."""

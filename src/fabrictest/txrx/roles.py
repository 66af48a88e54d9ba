"""Rank -> role mapping.

Ranks `0..nrx-1` receive; rank `r >= nrx` is transmitter `t = r - nrx` and sends to receiver
`t % nrx`. A receiver's streams are its transmitters in rank order; stream `k` of receiver `r`
is transmitter `t = r + k*nrx` (so `k = t // nrx`). The SEREN tx/rx notes' log lines name a
transmitter by `t` ("Rank t transmitter") and a receiver's stream by `k` ("Rank r receiver from
transmitter k").
"""

from __future__ import annotations

from dataclasses import dataclass

RECEIVER = "receiver"
TRANSMITTER = "transmitter"


@dataclass(frozen=True)
class Role:
    rank: int  # world rank
    kind: str  # RECEIVER or TRANSMITTER
    index: int  # receiver index r (== rank) or transmitter index t (== rank - nrx)
    peers: tuple[int, ...]  # world ranks of the transmitters (receiver) or of the receiver

    @property
    def is_receiver(self) -> bool:
        return self.kind == RECEIVER

    @property
    def streams(self) -> int:
        return len(self.peers) if self.is_receiver else 1


def receiver_of(t: int, nrx: int) -> int:
    """World rank of the receiver that transmitter index `t` sends to."""
    return t % nrx


def stream_of(t: int, nrx: int) -> int:
    """Receiver-local stream index of transmitter index `t`."""
    return t // nrx


def transmitters_of(r: int, nrx: int, nlink: int) -> tuple[int, ...]:
    """World ranks of the transmitters of receiver `r`, in stream order."""
    return tuple(nrx + t for t in range(r, nlink, nrx))


def role_of(rank: int, nrx: int, nlink: int) -> Role:
    if not 0 <= rank < nrx + nlink:
        raise ValueError(f"rank {rank} outside 0..{nrx + nlink - 1}")
    if rank < nrx:
        return Role(rank, RECEIVER, rank, transmitters_of(rank, nrx, nlink))
    t = rank - nrx
    return Role(rank, TRANSMITTER, t, (receiver_of(t, nrx),))


def all_roles(nrx: int, nlink: int) -> list[Role]:
    return [role_of(r, nrx, nlink) for r in range(nrx + nlink)]

"""Receive-side accounting: sequence numbers in, missed/received/total/loss rate out.

`GapCounter.add` takes the sequence numbers of a batch of arrivals (an integer array) and is
vectorised: a batch that is strictly increasing (the normal case, in order on one QP or one
MPI stream) costs two numpy operations whatever its length. Arrivals that are not above every
earlier one (duplicates, reordering) or not below the configured limit are counted as `bad`
and are not received. At the end the transmitter's final count gives the total, so messages
lost after the last arrival (tail loss) are counted as missed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class StreamCounts:
    received: int
    missed: int
    total: int
    loss_rate: float
    gaps: int  # loss events: runs of consecutive missed messages (tail included)
    bad: int  # arrivals with a sequence number out of order, repeated or out of range

    def as_dict(self) -> dict:
        return asdict(self)


class GapCounter:
    __slots__ = ("limit", "received", "last", "missed_inside", "gaps", "bad")

    def __init__(self, limit: int | None = None):
        self.limit = limit  # sequence numbers must be < limit (the configured --nmsg)
        self.received = 0
        self.last = -1  # highest sequence number received so far
        self.missed_inside = 0  # messages missing below `last`
        self.gaps = 0
        self.bad = 0

    def add(self, seqs) -> None:
        """Account one batch of arrivals, in arrival order (int64 or uint64 array; a strided
        view of the ring's header column is read in place)."""
        if not isinstance(seqs, np.ndarray):
            seqs = np.asarray(seqs, dtype=np.int64)
        n = seqs.size
        if n == 0:
            return
        first = int(seqs[0])
        last = int(seqs[-1])
        if (
            first > self.last
            and (self.limit is None or last < self.limit)
            and (n == 1 or not np.count_nonzero(seqs[1:] <= seqs[:-1]))
        ):
            self._add_increasing(seqs, first, last, n)
            return
        # slow path: keep the arrivals above everything before them and below the limit
        if seqs.dtype != np.int64:  # a corrupt uint64 header >= 2**63 reads as negative: bad
            seqs = seqs.astype(np.int64)
        before = np.maximum.accumulate(np.concatenate(([self.last], seqs[:-1])))
        keep = seqs > before
        if self.limit is not None:
            keep &= seqs < self.limit
        good = seqs[keep]
        self.bad += int(n - good.size)
        if good.size:
            self._add_increasing(good, int(good[0]), int(good[-1]), int(good.size))

    def _add_increasing(self, seqs: np.ndarray, first: int, last: int, n: int) -> None:
        inside = (last - first + 1) - n  # missing within this batch
        gaps = int(np.count_nonzero(seqs[1:] - seqs[:-1] > 1)) if inside else 0
        self.add_run(first, last, n, gaps)

    def add_run(self, first: int, last: int, n: int, gaps: int) -> None:
        """A batch of `n` arrivals already known to rise strictly from `first` (above every
        earlier one) to `last` (below the limit), with `gaps` runs of missing numbers between
        them: what the compiled loop's scan finds without handing over the numbers."""
        lead = first - self.last - 1  # missing between the previous batch and this one
        if lead:
            self.gaps += 1
        self.gaps += gaps
        self.missed_inside += lead + (last - first + 1) - n
        self.received += n
        self.last = last

    def finish(self, total: int) -> StreamCounts:
        """Counts once the transmitter has said it sent sequence numbers 0..total-1."""
        tail = max(0, total - 1 - self.last)
        missed = self.missed_inside + tail
        gaps = self.gaps + (1 if tail else 0)
        if self.last >= total:  # a transmitter that reported fewer than it sent
            missed = max(0, total - self.received)
        received = self.received
        loss = missed / total if total else 0.0
        return StreamCounts(received, missed, total, loss, gaps, self.bad)

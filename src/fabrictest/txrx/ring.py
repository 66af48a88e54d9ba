"""Ring and slot arithmetic, the loss schedule, and message contents.

A rank's buffer is a ring of `num_blks` blocks of `num_cmsgs` messages (slots) of `msg_size`
bytes. Message `seq` uses slot `seq % slots`; its block is `slot // num_cmsgs`.

Every message starts with its sequence number as one 64-bit word (the *header*); the rest is
the payload, whose content depends on `--test`:
- throughput: not written, not checked;
- ones: every payload byte is 1;
- increment: the payload's 64-bit words continue one counter over the whole stream: word `j`
  (1 <= j < W, W = msg_size/8) of message `seq` is `seq*W + j`. A stale slot (a message that
  did not land, leaving an older lap's content) or a shifted one never matches.
Functions take `xp` (numpy or cupy) so that device buffers are filled and checked in place.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from fabrictest.txrx.options import skipped_count

HEADER_WORDS = 1
ONES_WORD = np.uint64(0x0101010101010101)
POISON = np.uint64(0xFFFFFFFFFFFFFFFF)
PIECE = 1 << 20
SMALL_POPULATION = 1 << 25  # up to here numpy's exact choice (it lists 0..nmsg-1: 256 MiB)


def slot_of(seq, slots: int):
    """Ring slot of message `seq` (works on ints and integer arrays)."""
    return seq % slots


def block_of(slot, num_cmsgs: int):
    return slot // num_cmsgs


def slot_offset(seq: int, slots: int, msg_size: int) -> int:
    """Byte offset of message `seq` in its ring."""
    return (seq % slots) * msg_size


def remote_address(base: int, seq: int, slots: int, msg_size: int) -> int:
    """Address message `seq` is written to in a receiver's ring starting at `base`."""
    return base + slot_offset(seq, slots, msg_size)


def skipped_seqs(nmsg: int, fraction: float, seed: int, stream: int = 0) -> np.ndarray:
    """The sequence numbers a transmitter skips for `--inject-loss fraction` (sorted, int64).

    Exactly `round(fraction * nmsg)` distinct numbers, reproducible from (`seed`, `stream`):
    the stream is the transmitter index, so transmitters lose different messages. Memory is
    O(skipped) whatever `nmsg` (numpy's choice without replacement would list all `nmsg`).
    """
    k = skipped_count(nmsg, fraction)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    rng = np.random.default_rng([seed, stream])
    if nmsg <= SMALL_POPULATION:
        return np.sort(rng.choice(nmsg, size=k, replace=False).astype(np.int64))
    # k <= MAX_SKIPPED << nmsg here: draw with replacement until k distinct, then keep k of them
    got = np.empty(0, dtype=np.int64)
    while got.size < k:
        extra = rng.integers(0, nmsg, size=int((k - got.size) * 1.1) + 64, dtype=np.int64)
        got = _sorted_distinct(np.concatenate((got, extra)))
    if got.size > k:
        got = np.sort(got[rng.choice(got.size, size=k, replace=False)])
    return got


def _sorted_distinct(a: np.ndarray) -> np.ndarray:
    """np.unique by sorting (numpy 2.3+'s hash-based unique is 30x slower on 10^7 int64)."""
    a = np.sort(a)
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def send_windows(
    nmsg: int, window: int, skipped: np.ndarray | None = None, stop: int | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """(window index, seqs) for seq windows `[w*window, (w+1)*window)`, skipped seqs removed.

    `stop` ends the stream early: seqs >= stop are not sent (tail loss). Windows left empty by
    skipping are not yielded.
    """
    end = nmsg if stop is None else max(0, min(nmsg, stop))
    skipped = np.empty(0, np.int64) if skipped is None else np.asarray(skipped, np.int64)
    piece = max(window, (PIECE // window) * window)
    for a in range(0, end, piece):
        b = min(end, a + piece)
        seqs = np.arange(a, b, dtype=np.int64)
        lo, hi = np.searchsorted(skipped, [a, b])
        if hi > lo:
            keep = np.ones(b - a, dtype=bool)
            keep[skipped[lo:hi] - a] = False
            seqs = seqs[keep]
        if seqs.size == 0:
            continue
        wid = seqs // window
        cuts = np.flatnonzero(wid[1:] != wid[:-1]) + 1
        for part in np.split(seqs, cuts):
            yield int(part[0] // window), part


def words_per_message(msg_size: int) -> int:
    return msg_size // 8


def fill_ones(words, xp=np) -> None:
    """Whole ring (…, W) of 64-bit words: payload bytes all 1 (headers written per message)."""
    words[..., HEADER_WORDS:] = ONES_WORD


def number_headers(headers, first: int, ramp, xp=np) -> None:
    """Write the consecutive sequence numbers first, first+1, ... into `headers` (a view of a
    ring's header column) with one array operation; `ramp` is 0, 1, ... (uint64, prepared once)."""
    xp.add(ramp[: headers.shape[0]], first, out=headers)


def fill_messages(rows, seqs, test: str, xp=np) -> None:
    """Write headers (and for `increment` the payload) of messages `seqs` into `rows` (n, W)."""
    seqs = xp.asarray(seqs, dtype=xp.uint64)
    rows[:, 0] = seqs
    if test == "increment":
        w = rows.shape[1]
        rows[:, HEADER_WORDS:] = seqs[:, None] * xp.uint64(w) + xp.arange(
            HEADER_WORDS, w, dtype=xp.uint64
        )


def corrupt_mask(rows, seqs, test: str, xp=np):
    """Boolean mask (n,) of messages in `rows` whose header or payload is wrong for `seqs`."""
    seqs = xp.asarray(seqs, dtype=xp.uint64)
    bad = rows[:, 0] != seqs
    if test == "ones":
        bad |= ~xp.all(rows[:, HEADER_WORDS:] == ONES_WORD, axis=1)
    elif test == "increment":
        w = rows.shape[1]
        expect = seqs[:, None] * xp.uint64(w) + xp.arange(HEADER_WORDS, w, dtype=xp.uint64)
        bad |= ~xp.all(rows[:, HEADER_WORDS:] == expect, axis=1)
    return bad


def count_corrupt(rows, seqs, test: str, xp=np) -> int:
    return int(corrupt_mask(rows, seqs, test, xp).sum())

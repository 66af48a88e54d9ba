"""Round scheduling: disjoint node pairs, all pairs of a round measured at once.

Screening uses perfect matchings taken from the round-robin ("circle") tournament over a
random relabelling of the nodes. Any two rounds of that tournament share no pair, and with an
odd node count a different node sits out each round. A random choice of rounds over a random
labelling makes the matchings as good as independent random ones, without repeats.

Extra rounds measure only the nodes whose evidence is still ambiguous, each with a known-good
partner it has not met (a repeat only when none is left, other ambiguous nodes when no good
node is free): a node takes part in at most one lane per round. A node with one direction in
doubt measures that direction twice, with two partners, in the time of one pair.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .runs import Round


def _circle_pairs(labels: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    """Round r of the circle method over `labels` (even length; -1 is the dummy)."""
    m = len(labels)
    others = labels[1:]
    k = r % (m - 1)
    order = np.concatenate([labels[:1], np.roll(others, -k)])
    return order[: m // 2], order[::-1][: m // 2]


#: below this many nodes an odd count screens one round more (see `screening_count`)
SMALL_ODD = 8
#: up to this many nodes every pair is screened (4 nodes: 3 matchings)
EVERY_PAIR = 4
#: from SMALL_ODD nodes up, screening gives at least this many runs (a round gives as many
#: runs as it pairs nodes): below it a slow share's level and the healthy one above it are
#: not told apart (see `screening_count`)
MIN_SCREEN_RUNS = 32


def screening_count(n: int, rounds: int, cap: int | None = None) -> int:
    """Screening rounds for n nodes: with an odd n one node sits out each round, and on a
    small cluster that loses the pairs the level needs (3 nodes, 2 rounds: 2 of the 3 pairs,
    and when both hold the slow node every run is slow: node02 at 0.5x passed in 12 of 40
    seeds). Below `SMALL_ODD` an odd n screens one round more (3 nodes: every pair).
    Up to `EVERY_PAIR` nodes every pair is screened: 4 nodes with 2 slow, 2 of the 3
    matchings leave the healthy pair unmet in a third of the seeds, and then every run is
    slow and the table looks like a healthy cluster (exit 0 in 4 of 10 seeds).
    From `SMALL_ODD` nodes up, at least `MIN_SCREEN_RUNS` runs (8-11 nodes: 4 matchings,
    12-15: 3, 16 and up: `rounds`): with half or most of 8-14 nodes at 0.7x (sigma 0.1)
    2 matchings' 16-28 runs left the healthy level inside the slow one's noise, exit 0 in 108
    of 320 sweeps (40 seeds a cell), 48 with this; a healthy sweep costs 0.3-1.5 rounds more.
    That floor stays within `cap` (the sweep's --max-rounds: a budget asked for is kept)."""
    if n <= EVERY_PAIR:
        return max(rounds, n - 1 + n % 2)
    if n < SMALL_ODD:
        return rounds + 1 if n % 2 else rounds
    per_round = 2 * (n // 2)
    floor = min(-(-MIN_SCREEN_RUNS // per_round), n - 1 + n % 2)
    return max(rounds, floor if cap is None else min(floor, cap))


def screening_rounds(names: Sequence[str], rounds: int, seed: int | None = None,
                     reserve: int = 0) -> list[Round]:
    """`rounds` perfect matchings of the nodes with no pair repeated (capped at N-1 or N),
    then up to `reserve` more from the same tournament (no pair repeated either), drawn after
    the first ones so that these do not depend on `reserve`."""
    if len(set(names)) != len(names):
        raise ValueError("node names must be unique")
    if len(names) < 2:
        raise ValueError("need at least 2 nodes")
    rng = np.random.default_rng(seed)
    labels = rng.permutation(len(names))
    if len(labels) % 2:
        labels = np.append(labels, -1)
    available = len(labels) - 1  # distinct matchings in the tournament
    chosen = rng.choice(available, size=min(rounds, available), replace=False)
    out = [_matching(i, labels, int(r), names, rng) for i, r in enumerate(chosen)]
    rest = np.setdiff1d(np.arange(available), chosen)
    if reserve > 0 and rest.size:
        more = rng.choice(rest, size=min(reserve, rest.size), replace=False)
        out += [_matching(len(out) + i, labels, int(r), names, rng) for i, r in enumerate(more)]
    return out


def _matching(index: int, labels: np.ndarray, r: int, names: Sequence[str], rng) -> Round:
    a, b = _circle_pairs(labels, r)
    real = (a >= 0) & (b >= 0)
    order = rng.permutation(int(real.sum()))
    idle = [int(x) for x in np.concatenate([a[~real], b[~real]]) if x >= 0]
    return Round(index=index, kind="screen", a=a[real][order], b=b[real][order], names=names,
                 idle=idle)


def extra_round(
    index: int,
    names: Sequence[str],
    ambiguous: np.ndarray,
    good: np.ndarray,
    met: dict[int, set[int]],
    seed: int | None = None,
    reason: str = "",
    one_way: dict[int, int] | None = None,
    helpers: dict[int, np.ndarray] | None = None,
) -> Round:
    """Pair each ambiguous node with a known-good node it has not met.

    `ambiguous` and `good` are node indices (disjoint); `met` maps each ambiguous node to the
    nodes it has already been paired with. A good node is used once per round; when the
    unmet good nodes run out an ambiguous node takes a good node again, and when no good node
    is free, another ambiguous node it has not met.

    `one_way`: node -> 0 (only its send side is in doubt) or 1 (only its receive side). Such
    a node spends both runs of its lane on that direction, each with its own unmet good
    partner (`n -> g1`, then `n -> g2`): twice the evidence where it is needed, in the same
    time as a pair measured both ways (a node never runs two measurements at once). With
    fewer than two partners to spare it is measured both ways with one, as any other.

    `helpers`: direction -> nodes (neither good nor ambiguous) whose other side is cleared:
    0, a cleared receive side, a partner for a doubtful send side; 1, a cleared send side.
    A one-way node draws from the good nodes and its direction's helpers: with most of a
    cluster slow, few nodes are cleared both ways, and a doubtful receive side met only
    slow senders to the last round and was named on them.
    """
    rng = np.random.default_rng(seed)
    one_way = one_way or {}
    amb = [int(x) for x in rng.permutation(ambiguous)]
    pool = [int(x) for x in rng.permutation(good)]
    helpers = helpers or {}
    # a one-way node's partners: the good nodes and its direction's helpers, shuffled
    by_dir = {d: [int(x) for x in rng.permutation(np.union1d(good, helpers[d]))]
              for d in (0, 1) if d in helpers and len(helpers[d])}
    starts = dict.fromkeys(by_dir, 0)
    used: set[int] = set()
    a_out: list[int] = []
    b_out: list[int] = []
    s2_out: list[int] = []
    d2_out: list[int] = []
    waiting: list[int] = []
    cursor = 0

    def unmet(n: int) -> int | None:
        nonlocal cursor
        seen = met.get(n, set())
        if n in one_way and one_way[n] in by_dir:  # its direction's own pool
            own, d = by_dir[one_way[n]], one_way[n]
            while starts[d] < len(own) and own[starts[d]] in used:
                starts[d] += 1
            for j in range(starts[d], min(len(own), starts[d] + 64)):
                if own[j] not in used and own[j] not in seen:
                    used.add(own[j])
                    return own[j]
            return None
        while cursor < len(pool) and pool[cursor] in used:
            cursor += 1
        # walk the shuffled good nodes: skipped ones (met by this node) stay available
        for j in range(cursor, min(len(pool), cursor + 64)):
            g = pool[j]
            if g not in used and g not in seen:
                used.add(g)
                return g
        return None

    def pair(g: int, n: int) -> None:  # g -> n, then n -> g
        a_out.append(g)
        b_out.append(n)
        s2_out.append(n)
        d2_out.append(g)

    for n in amb:
        partner = unmet(n)
        if partner is None:
            waiting.append(n)
            continue
        second = unmet(n) if n in one_way else None
        if second is None:
            pair(partner, n)
        elif one_way[n] == 0:  # n sends to both
            a_out.append(n)
            b_out.append(partner)
            s2_out.append(n)
            d2_out.append(second)
        else:  # n receives from both
            a_out.append(partner)
            b_out.append(n)
            s2_out.append(second)
            d2_out.append(n)
    still: list[int] = []
    for n in waiting:
        # every nearby good node was met: a repeat with a free good node beats no evidence
        partner = next((g for g in pool if g not in used), None)
        if partner is None:
            still.append(n)
            continue
        used.add(partner)
        pair(partner, n)
    # no good node free: ambiguous nodes measure each other (unmet pairs first)
    free = list(still)
    while len(free) >= 2:
        n = free.pop(0)
        seen = met.get(n, set())
        k = next((i for i, m in enumerate(free) if m not in seen), 0)
        pair(free.pop(k), n)

    def arr(x):
        return np.array(x, dtype=np.int64)

    return Round(index=index, kind="extra", a=arr(a_out), b=arr(b_out), names=names,
                 reason=reason, s2=arr(s2_out), d2=arr(d2_out))

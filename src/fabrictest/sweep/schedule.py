"""Round scheduling: disjoint node pairs, all pairs of a round measured at once.

Screening uses a few perfect matchings taken from the round-robin ("circle") tournament over
a random relabelling of the nodes. Any two rounds of that tournament share no pair, and with
an odd node count a different node sits out of each round. A random choice of rounds over a
random labelling makes the matchings as good as independent random ones, without repeats.

Confirmation pairs each suspect with a known-good node it has not met yet; a node takes part
in at most one pair per round, so suspects beyond the number of good nodes wait a round.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

Pair = tuple[str, str]


@dataclass
class Round:
    """One round: disjoint pairs measured concurrently; `idle` nodes sit it out."""

    index: int
    kind: str  # "screen" or "confirm"
    pairs: list[Pair]
    idle: list[str] = field(default_factory=list)

    def nodes(self) -> list[str]:
        return [n for p in self.pairs for n in p]


def _circle_round(labels: Sequence[str | None], r: int) -> list[tuple[str | None, str | None]]:
    """Round r of the circle method over `labels` (even length; None is the dummy)."""
    m = len(labels)
    others = labels[1:]
    k = r % (m - 1)
    rot = list(others[k:]) + list(others[:k])
    order = [labels[0], *rot]
    return [(order[i], order[m - 1 - i]) for i in range(m // 2)]


def screening_rounds(nodes: Sequence[str], rounds: int, seed: int | None = None) -> list[Round]:
    """`rounds` perfect matchings of `nodes` with no pair repeated (capped at N-1 or N)."""
    if len(set(nodes)) != len(nodes):
        raise ValueError("node names must be unique")
    if len(nodes) < 2:
        raise ValueError("need at least 2 nodes")
    rng = random.Random(seed)
    labels: list[str | None] = list(nodes)
    rng.shuffle(labels)
    if len(labels) % 2:
        labels.append(None)
    available = len(labels) - 1  # distinct matchings in the tournament
    chosen = rng.sample(range(available), min(rounds, available))
    out = []
    for i, r in enumerate(chosen):
        pairs: list[Pair] = []
        idle: list[str] = []
        for a, b in _circle_round(labels, r):
            if a is None or b is None:
                idle.append(a if b is None else b)  # type: ignore[arg-type]
                continue
            pairs.append((a, b) if rng.random() < 0.5 else (b, a))
        rng.shuffle(pairs)
        out.append(Round(index=i, kind="screen", pairs=pairs, idle=idle))
    return out


def confirmation_round(
    index: int,
    suspects: Sequence[str],
    good: Sequence[str],
    met: set[frozenset[str]],
) -> tuple[Round, list[str]]:
    """Pair each suspect with the first good node (in the given order) it has not met.

    Returns the round and the suspects left without a partner (no unused good node left).
    `good` should be ordered best first. A good node is used once per round.
    """
    used: set[str] = set()
    pairs: list[Pair] = []
    left: list[str] = []
    for s in suspects:
        partner = next(
            (g for g in good if g not in used and g != s and frozenset((s, g)) not in met), None
        )
        if partner is None:
            # a repeat is better than no evidence at all
            partner = next((g for g in good if g not in used and g != s), None)
        if partner is None:
            left.append(s)
            continue
        used.add(partner)
        pairs.append((partner, s))
    return Round(index=index, kind="confirm", pairs=pairs), left


def pairs_met(rounds: Iterable[Round]) -> set[frozenset[str]]:
    return {frozenset(p) for r in rounds for p in r.pairs}

"""Which node names a figure's name mentions (pure), in time linear in the name's length.

A figure names a node when the node's name appears in it not preceded by a letter or digit
and not followed by a digit: ``stream_node03_to_node01_gbps`` and ``node03->node01`` name
node03 and node01, ``node_node03_rx_gbps`` names node03, ``node030_send`` does not name node03.

The names are indexed once (a set per name length), so a figure is looked up at each of its
word starts for each length: the cost does not grow with the number of nodes. One
``re.search`` per node and figure did (10,000 nodes × 30,000 figures, beyond ``re``'s cache of
compiled patterns: the acceptance page did not finish at a centre's size).
"""

from __future__ import annotations

from collections.abc import Iterable

_DIGITS = frozenset("0123456789")


def _alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


class NodeIndex:
    def __init__(self, nodes: Iterable[str]):
        self._by_length: dict[int, set[str]] = {}
        for n in nodes:
            if n:
                self._by_length.setdefault(len(n), set()).add(n)
        self._lengths = sorted(self._by_length, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._lengths)

    def named(self, pvar: str) -> list[str]:
        """The nodes ``pvar`` names, in the order they appear (each once)."""
        out: list[str] = []
        end = len(pvar)
        for i in range(end):
            if i and _alnum(pvar[i - 1]):
                continue
            for length in self._lengths:
                j = i + length
                if j > end or (j < end and pvar[j] in _DIGITS):
                    continue
                word = pvar[i:j]
                if word in self._by_length[length] and word not in out:
                    out.append(word)
        return out

    def names_any(self, pvar: str) -> bool:
        return bool(self.named(pvar))

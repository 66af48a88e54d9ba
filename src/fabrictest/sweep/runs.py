"""One-way runs: what a round of pair measurements produces, kept as numpy columns.

Every measured pair gives two runs, one per direction: `src` sends, `dst` receives. A run's
figure is limited by the sender's send side and the receiver's receive side, so each run is
evidence about one node-direction at each end. A sweep of 100,000 nodes makes about a million
runs, hence columns (node indices, status codes, figures) rather than one object per run;
`Run` objects are built only for output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

OK, FAILED, TIMEOUT, INTERRUPTED = 0, 1, 2, 3
STATUS = ("ok", "failed", "timeout", "interrupted")
SEND, RECV = 0, 1
DIRECTION = ("send", "receive")


@dataclass
class Round:
    """One round: disjoint lanes, all measured at once, each lane two runs one after the other.

    A screening lane is a pair (node indices `a[i]`, `b[i]`) measured both ways: `a -> b`,
    then `b -> a`. An extra round may give a node whose one direction alone is in doubt two
    runs in that direction instead, with two partners: `a -> b`, then `s2 -> d2` (`s2`, `d2`
    set; None: `b -> a`). The lanes of a round share no node. `reason` says why an extra
    round ran."""

    index: int
    kind: str  # "screen" or "extra"
    a: np.ndarray
    b: np.ndarray
    names: Sequence[str]
    idle: list[int] = field(default_factory=list)  # screening: the node sitting out (odd N)
    reason: str = ""
    s2: np.ndarray | None = None  # the second run of each lane (None: b -> a)
    d2: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.a)

    def second(self) -> tuple[np.ndarray, np.ndarray]:
        """Sender and receiver of each lane's second run."""
        if self.s2 is None or self.d2 is None:
            return np.asarray(self.b), np.asarray(self.a)
        return np.asarray(self.s2), np.asarray(self.d2)

    def lanes(self) -> list[tuple[tuple[str, str], tuple[str, str]]]:
        """Per lane its two runs as (sender, receiver) names."""
        s2, d2 = self.second()
        n = self.names
        return [((n[a], n[b]), (n[s], n[d])) for a, b, s, d in zip(
            np.asarray(self.a).tolist(), np.asarray(self.b).tolist(), s2.tolist(), d2.tolist(),
            strict=True)]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The pairs of nodes measured (a lane of three nodes is two pairs)."""
        out = []
        for first, second in self.lanes():
            out.append(first)
            if {*second} != {*first}:
                out.append(second)
        return out

    def nodes(self) -> list[str]:
        return list(dict.fromkeys(n for p in self.pairs for n in p))

    def to_dict(self) -> dict:
        d = {"index": self.index, "kind": self.kind, "pairs": [list(p) for p in self.pairs],
             "idle": [self.names[i] for i in self.idle], "reason": self.reason}
        if self.s2 is not None:
            d["runs"] = [[list(r1), list(r2)] for r1, r2 in self.lanes()]
        return d


@dataclass
class RoundRuns:
    """The runs of one round (or of its completed part, when interrupted)."""

    src: np.ndarray
    dst: np.ndarray
    status: np.ndarray
    value: np.ndarray  # NaN where not OK
    seconds: np.ndarray
    details: dict[int, str] = field(default_factory=dict)  # index in this round -> why

    @classmethod
    def from_lists(cls, rows: Sequence[tuple[int, int, int, float | None, float, str]]):
        src = np.array([r[0] for r in rows], dtype=np.int64)
        dst = np.array([r[1] for r in rows], dtype=np.int64)
        status = np.array([r[2] for r in rows], dtype=np.int8)
        value = np.array([np.nan if r[3] is None else r[3] for r in rows], dtype=np.float64)
        seconds = np.array([r[4] for r in rows], dtype=np.float64)
        details = {i: r[5] for i, r in enumerate(rows) if r[5]}
        return cls(src, dst, status, value, seconds, details)


@dataclass
class Run:
    """One run, for output: `src` sent to `dst`."""

    round: int
    kind: str
    src: str
    dst: str
    status: str
    value: float | None
    seconds: float
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        return {"round": self.round, "kind": self.kind, "src": self.src, "dst": self.dst,
                "a": self.src, "b": self.dst,  # the report's keys: a sends to b
                "status": self.status, "value": self.value, "seconds": self.seconds,
                "detail": self.detail}


class RunTable:
    """Every run of a sweep, appended round by round."""

    def __init__(self, nodes: Sequence[str]):
        self.nodes = list(nodes)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self._parts: list[tuple[int, RoundRuns]] = []
        self.kinds: dict[int, str] = {}
        self._cache: dict[str, np.ndarray] | None = None

    def add(self, rnd: Round, runs: RoundRuns) -> None:
        self._parts.append((rnd.index, runs))
        self.kinds[rnd.index] = rnd.kind
        self._cache = None

    def _columns(self) -> dict[str, np.ndarray]:
        if self._cache is None:
            parts = self._parts

            def cat(name, dt):
                if not parts:
                    return np.zeros(0, dtype=dt)
                return np.concatenate([getattr(p, name) for _, p in parts]).astype(dt)

            rounds = (np.concatenate([np.full(len(p.src), i, dtype=np.int32) for i, p in parts])
                      if parts else np.zeros(0, dtype=np.int32))
            self._cache = {
                "src": cat("src", np.int64), "dst": cat("dst", np.int64),
                "status": cat("status", np.int8), "value": cat("value", np.float64),
                "seconds": cat("seconds", np.float64), "round": rounds,
            }
        return self._cache

    def __len__(self) -> int:
        return sum(len(p.src) for _, p in self._parts)

    def __getattr__(self, name: str) -> np.ndarray:
        if name in ("src", "dst", "status", "value", "seconds", "round"):
            return self._columns()[name]
        raise AttributeError(name)

    def screening(self) -> np.ndarray:
        """Mask of the runs of screening rounds."""
        screen = [i for i, k in self.kinds.items() if k == "screen"]
        return np.isin(self.round, screen)

    def detail(self, j: int) -> str:
        for _, part in self._parts:
            if j < len(part.src):
                return part.details.get(j, "")
            j -= len(part.src)
        raise IndexError(j)

    def run(self, j: int) -> Run:
        r = int(self.round[j])
        v = self.value[j]
        return Run(round=r, kind=self.kinds[r], src=self.nodes[self.src[j]],
                   dst=self.nodes[self.dst[j]], status=STATUS[self.status[j]],
                   value=None if np.isnan(v) else float(v), seconds=float(self.seconds[j]),
                   detail=self.detail(j))

    def runs(self, which: np.ndarray | None = None) -> list[Run]:
        if which is not None:
            return [self.run(int(j)) for j in np.flatnonzero(which)]
        cols = self._columns()
        names = self.nodes
        details: dict[int, str] = {}
        offset = 0
        for _, part in self._parts:
            details.update({offset + i: d for i, d in part.details.items()})
            offset += len(part.src)
        values = [None if v != v else v for v in cols["value"].tolist()]  # NaN -> None
        return [
            Run(round=r, kind=self.kinds[r], src=names[s], dst=names[d], status=STATUS[st],
                value=v, seconds=sec, detail=details.get(j, ""))
            for j, (r, s, d, st, v, sec) in enumerate(zip(
                cols["round"].tolist(), cols["src"].tolist(), cols["dst"].tolist(),
                cols["status"].tolist(), values, cols["seconds"].tolist(), strict=True))
        ]

    def partners_of(self, nodes: np.ndarray) -> dict[int, set[int]]:
        """Node index -> the nodes it has been paired with, for `nodes` only (cheap for a
        few thousand nodes among a million runs)."""
        out: dict[int, set[int]] = {int(n): set() for n in nodes}
        sel = np.isin(self.src, nodes)
        for s, d in zip(self.src[sel].tolist(), self.dst[sel].tolist(), strict=True):
            out[s].add(d)
        sel = np.isin(self.dst, nodes)
        for s, d in zip(self.src[sel].tolist(), self.dst[sel].tolist(), strict=True):
            out[d].add(s)
        return out

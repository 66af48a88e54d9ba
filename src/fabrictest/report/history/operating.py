"""Operating characteristics of `fabric-report history` on a given noise: the drop it sees, the
runs it takes, the false alarms it costs.

The noise is a pool of relative deviations (a session's value / its level - 1) taken from real
sessions: each figure's sessions about their own median (a handful of healthy recordings), or
about the levels its change points cut (a site's own history). A trial resamples the pool into
a healthy history of ``HISTORY`` sessions and runs on ``FOLLOW`` more, as a site runs the
command after each new session:

* **false alarms**: the healthy sessions after the history at which the figure is REGRESSED,
  per 100 such runs;
* **delay**: with a sustained drop from the first session after the history on, the runs
  after the change until the figure is REGRESSED (1: the first session on the new level);
  **missed** when not within ``FOLLOW`` runs;
* **spike**: one session ``SPIKE_DROP`` down and then healthy ones: how often it is a change
  point, and how often the figure is still REGRESSED once the next session is in.

The judge is :func:`.history.judge` itself. Pure: numbers in, figures out (numpy's seeded
generator).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from fabrictest.report.history import figures as hist
from fabrictest.report.records.results import PerfRecord

#: the healthy sessions before a trial's change
HISTORY = 20
#: the runs watched after it
FOLLOW = 10
#: the drops of the published table
DROPS = (0.01, 0.02, 0.03, 0.05, 0.10)
#: a single spike's depth
SPIKE_DROP = 0.10
#: fewest sessions of a figure whose deviations enter a pool
MIN_FIGURE_SESSIONS = 2


def family(test: str) -> str:
    """A test case's family: its class name (`TxRxTest %scenario=paired` -> `TxRxTest`)."""
    return test.split(" ")[0].split("%")[0]


def deviations(values: Sequence[float], cuts: Sequence[int] = ()) -> list[float]:
    """Each session's relative deviation from the median of its level (`cuts`: the first
    index of each new level), widened by sqrt(K / (K - 1)) for a level of K sessions (the
    median sits closer to its own sessions than the true level does)."""
    out: list[float] = []
    bounds = [0, *cuts, len(values)]
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        level = list(values[lo:hi])
        if len(level) < MIN_FIGURE_SESSIONS:
            continue
        med = statistics.median(level)
        if med == 0:
            continue
        widen = math.sqrt(len(level) / (len(level) - 1))
        out.extend(widen * (v / abs(med) - 1) for v in level)
    return out


def pools(series: Iterable[tuple[str, Sequence[float], Sequence[int]]]
          ) -> dict[str, np.ndarray]:
    """family -> its pooled deviations, from (test, values, cuts) per figure."""
    by: dict[str, list[float]] = defaultdict(list)
    for test, values, cuts in series:
        by[family(test)].extend(deviations(values, cuts))
    return {k: np.asarray(v, float) for k, v in sorted(by.items()) if v}


def _figure(values: Sequence[float]) -> hist.FigureHistory:
    recs = [PerfRecord("T", "T", "s", "p", "e", "bw", float(v), "Gbps", session=f"s{i:04d}",
                       time=float(i)) for i, v in enumerate(values)]
    (h,) = hist.series(recs, {})
    return h


def _named(values: Sequence[float], tolerance: float) -> bool:
    return hist.judge(_figure(values), tolerance).status == "REGRESSED"


def _healthy(pool: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    return 1.0 + rng.choice(pool, size=n, replace=True)


@dataclass
class Characteristics:
    noise: float  # the pool's robust spread (1.4826 x MAD)
    trials: int
    false_per_100: float
    #: drop -> (median delay in runs or None when most are missed, missed share)
    delay: dict[float, tuple[float | None, float]]
    spike_cp: float  # share of spikes that became a change point
    spike_named: float  # share still REGRESSED once the next session is in

    def to_dict(self) -> dict:
        return {"noise": self.noise, "trials": self.trials,
                "false_alarms_per_100_runs": self.false_per_100,
                "drops": [{"drop": d, "median_delay_runs": m, "missed": miss}
                          for d, (m, miss) in self.delay.items()],
                "spike_change_point": self.spike_cp, "spike_named_after_next": self.spike_named}


def spread(pool: np.ndarray) -> float:
    return float(1.4826 * np.median(np.abs(pool - np.median(pool))))


def measure(pool: np.ndarray, trials: int, rng: np.random.Generator,
            drops: Sequence[float] = DROPS, tolerance: float = hist.TOLERANCE,
            history: int = HISTORY, follow: int = FOLLOW) -> Characteristics:
    """The operating characteristics of `history` on noise resampled from `pool`."""
    false = runs = 0
    delays: dict[float, list[int | None]] = {d: [] for d in drops}
    spike_cp = spike_named = 0
    for _ in range(trials):
        calm = _healthy(pool, history + follow, rng)
        for end in range(history + 1, history + follow + 1):
            runs += 1
            false += _named(calm[:end], tolerance)
        for d in drops:
            stepped = calm.copy()
            stepped[history:] *= 1 - d
            delays[d].append(next((end - history for end in range(history + 1,
                                                                    history + follow + 1)
                                   if _named(stepped[:end], tolerance)), None))
        spiked = calm[:history + 2].copy()
        spiked[history] *= 1 - SPIKE_DROP
        h = hist.judge(_figure(spiked), tolerance)
        spike_cp += any(c.index in (history, history + 1) for c in h.changes)
        spike_named += h.status == "REGRESSED"
    table = {}
    for d, ds in delays.items():
        seen = sorted(x for x in ds if x is not None)
        missed = 1 - len(seen) / len(ds)
        # the median over every trial, a miss counting as later than any catch
        med = (float(statistics.median(seen + [math.inf] * (len(ds) - len(seen))))
               if missed < 0.5 else None)
        table[d] = (med, missed)
    return Characteristics(spread(pool), trials, 100 * false / runs, table,
                           spike_cp / trials, spike_named / trials)


def table(rows: Sequence[tuple[str, int, Characteristics]], drops: Sequence[float] = DROPS
          ) -> list[list[str]]:
    """Rows of text: family, figures' sessions, noise, false alarms per 100 runs, per drop
    'median delay / missed %', the spike's."""
    out = []
    for name, n, c in rows:
        cells = [name, str(n), f"±{100 * c.noise:.2f}%", f"{c.false_per_100:.1f}"]
        for d in drops:
            med, missed = c.delay[d]
            cells.append(f"{'-' if med is None else f'{med:g}'} / {100 * missed:.0f}%")
        cells.append(f"{100 * c.spike_cp:.0f}% / {100 * c.spike_named:.0f}%")
        out.append(cells)
    return out


def table_head(drops: Sequence[float] = DROPS) -> list[str]:
    return (["family", "deviations", "noise", "false/100 runs"]
            + [f"{100 * d:g}% drop: delay / missed" for d in drops]
            + ["10% spike: cp / named"])


def sweep_series(docs: Iterable[tuple[str, dict]]) -> list[tuple[str, list[float], list[int]]]:
    """(test, values, cuts) per figure of `fabric-sweep --json` documents of healthy runs of
    one fabric each ((shape, document)): every node's and link's rate over the runs (in the
    sweep's unit: its counts of rounds and suspects are no rate noise)."""
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for shape, doc in docs:
        for name, (value, unit) in (doc.get("figures") or {}).items():
            if unit == doc.get("unit"):
                by[(shape, name)].append(float(value))
    return [("fabric-sweep", v, []) for _k, v in sorted(by.items())]


def of_histories(histories: Sequence[hist.FigureHistory], trials: int, seed: int = 1
                 ) -> list[tuple[str, int, Characteristics]]:
    """`history --characteristics`: the table's rows on a site's own store, each family's
    noise its judged figures' sessions about the levels their change points cut."""
    judged = [h for h in histories if h.status != "few" and not h.unit == "count"]
    found = pools((h.test, [p.value for p in h.points], [c.index for c in h.changes])
                  for h in judged)
    return [(name, len(pool), measure(pool, trials, np.random.default_rng(seed)))
            for name, pool in found.items()]

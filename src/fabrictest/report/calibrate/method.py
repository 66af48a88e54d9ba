"""References from repeated sessions: reference = median, bound from the observed spread.

For each figure (test class, the values of its reference's `$index`, performance variable)
seen in K >= 3 sessions of one system:

* reference: the median of the sessions' values (one value per session; test cases that
  share one reference entry, such as two spans of one scenario, are pooled);
* bound, on the side that matters for the figure (rates: lower, times: upper, no direction:
  both): the largest of `floor`, `factor` x the noise, and the farthest session on that side
  (a reference must accept the runs it was made from), rounded outwards. The noise is the
  robust spread (1.4826 x MAD / median), corrected for the few sessions it comes from (with
  3 sessions the MAD is one distance, on average a third short of the spread) and for the
  reference's own error (x sqrt(1 + pi/2K)): a bound tighter than the noise is a false alarm
  waiting to happen. A quiet figure sits on the floor (3 %), a noisy one gets the bound its
  noise needs;
* refused, with one line naming the figure and why: fewer than 3 sessions, a figure missing
  from some sessions, sessions measured with different shaping variables, a median of 0, or
  a spread too wide for a bound that can fail (beyond `max_bound`; a lower bound of -100%).

Counter figures (unit `count`: retransmissions, CNPs, pause frames per node, judged against
their headline `counters_<counter>` through `reference_aliases`) are near 0 on a healthy
fabric, where a median and a relative spread mean nothing. They are calibrated by their own
rule: every node's figure of every session is pooled under the headline; reference = the worst
(largest) of them, at least `COUNT_MIN`; upper bound `+COUNT_MARGIN` (a count 4 times the worst
healthy one fails); no lower bound.

Other per-item figures judged against a headline's reference (`reference_aliases`) and
informational ones (`informational_perf_vars`) are not calibrated. Pure: no files.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabrictest.references.model import band
from fabrictest.report.records import refformat, stats, units
from fabrictest.report.records.counts import COUNT_MARGIN, COUNT_MIN, COUNT_UNIT, healthy_worst
from fabrictest.report.records.direction import HIGHER, LOWER, better
from fabrictest.report.records.results import PerfRecord
from fabrictest.report.records.words import counted

FACTOR = 3.0
#: the tightest bound: a quiet fabric is judged at 3 %, a noisy figure by its noise
FLOOR = 0.03
MAX_BOUND = 0.5
COUNT_RULE = (f"counts (unit {COUNT_UNIT}): every node's figure pooled; reference = the worst "
              f"of them over the sessions, at least {COUNT_MIN}; bound +{100 * COUNT_MARGIN:g}%")
_OK_PHASES = (None, "performance")  # a value from a test that failed only its reference


@dataclass
class Figure:
    """One reference entry's samples."""

    cls: str
    keys: tuple  # values of the $index names after '$system'
    pvar: str
    unit: str
    values: dict[str, list[float]] = field(default_factory=dict)  # session -> values
    #: the unit of each value, in the order of `values` (converted to `unit` at the end)
    units: dict[str, list[str]] = field(default_factory=dict)
    #: when the record giving `unit` completed (the newest record's unit is the figure's)
    unit_time: float = -math.inf
    shaping: dict[str, set] = field(default_factory=lambda: defaultdict(set))
    tests: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        where = ".".join(str(k) for k in self.keys)
        return f"{self.cls} {where + ' ' if where else ''}{self.pvar}"


@dataclass
class Entry:
    cls: str
    keys: tuple
    pvar: str
    ref: float
    lower: float | None
    upper: float | None
    unit: str
    spread: stats.Spread
    shaping: dict[str, Any]
    tests: list[str]
    #: what set the bound: the floor, the noise or the farthest session (and its size)
    set_by: str = ""

    @property
    def name(self) -> str:
        where = ".".join(str(k) for k in self.keys)
        return f"{self.cls} {where + ' ' if where else ''}{self.pvar}"

    def summary(self) -> str:
        lo = "-" if self.lower is None else f"{100 * self.lower:+.1f}%"
        hi = "-" if self.upper is None else f"{100 * self.upper:+.1f}%"
        sig = "?" if self.spread.sigma is None else f"±{100 * self.spread.sigma:.1f}%"
        by = f", set by {self.set_by}" if self.set_by else ""
        what = "worst" if self.unit == COUNT_UNIT else "median"
        return (f"{what} {self.ref:.4g} {self.unit}, bounds {lo} {hi}{by}, {self.spread.n} "
                f"sessions, spread {sig}, range {self.spread.low:.4g}-{self.spread.high:.4g}")


@dataclass
class Calibration:
    system: str
    sessions: list[str]
    entries: list[Entry]
    refused: list[str]


def _round_sig(x: float, digits: int = 4) -> float:
    if x == 0:
        return 0.0
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def _ceil(x: float, step: float = 0.001) -> float:
    return round(math.ceil(x / step - 1e-9) * step, 6)


#: Croux and Rousseeuw's small-sample factors making 1.4826 x MAD unbiased for a normal
#: sample of n = 2..9 (above: n / (n - 0.8)); checked by simulation (tests/report)
_MAD_SMALL_SAMPLE = {2: 1.196, 3: 1.495, 4: 1.363, 5: 1.206, 6: 1.200, 7: 1.140, 8: 1.129,
                     9: 1.107}


def noise_of(values: Sequence[float], sp: stats.Spread) -> float:
    """The relative noise a bound must allow for: the robust spread (1.4826 x MAD / median)
    corrected for the number of sessions K (three sessions' MAD is one distance and is on
    average a third short of the spread), times sqrt(1 + pi / 2K), since the reference, a
    median of K sessions, is itself that uncertain."""
    k = len(values)
    if sp.sigma is None:
        return 0.0
    small = _MAD_SMALL_SAMPLE.get(k, k / (k - 0.8))
    return sp.sigma * small * math.sqrt(1 + math.pi / (2 * k))


def bound_for(values: Sequence[float], direction: str | None, factor: float, floor: float
              ) -> tuple[float, float | None, float | None, stats.Spread]:
    """(reference, lower, upper, spread) for one figure's per-session values."""
    ref, lower, upper, sp, _by = bound_and_reason(values, direction, factor, floor)
    return ref, lower, upper, sp


def bound_and_reason(values: Sequence[float], direction: str | None, factor: float,
                     floor: float) -> tuple[float, float | None, float | None, stats.Spread, str]:
    """bound_for, and what set the bound (the floor, the noise, the farthest session)."""
    sp = stats.spread(values)
    ref = _round_sig(sp.median)
    noise = noise_of(values, sp)
    below = (ref - sp.low) / abs(ref)  # the farthest session on each side, as fractions
    above = (sp.high - ref) / abs(ref)
    need = {LOWER: above, HIGHER: below, None: max(above, below)}[direction]
    terms = {f"the floor {100 * floor:g}%": floor,
             f"the noise ({factor:g} x {100 * noise:.1f}%)": factor * noise,
             f"the farthest session ({100 * need:.1f}%)": need}
    by = max(terms, key=terms.get)
    bound = _ceil(terms[by])
    while direction != LOWER and band(ref, -bound, None)[0] > sp.low:  # rounding must not cut one off
        bound = _ceil(bound + 0.001)
    while direction != HIGHER and band(ref, None, bound)[1] < sp.high:
        bound = _ceil(bound + 0.001)
    lower = None if direction == LOWER else -bound
    upper = None if direction == HIGHER else bound
    return ref, lower, upper, sp, by


def _headline(r: PerfRecord) -> str | None:
    """The pvar a record is calibrated under: its own; a count's headline (pooled over the
    nodes); None for other per-item figures and informational ones."""
    aliases = r.variables.get("reference_aliases") or {}
    for pattern, headline in aliases.items():
        if re.fullmatch(pattern, r.pvar):
            return headline if r.unit == COUNT_UNIT else None
    informational = r.variables.get("informational_perf_vars") or []
    return None if any(re.fullmatch(p, r.pvar) for p in informational) else r.pvar


def count_bound(per_session: Sequence[float]) -> tuple[float, float, str]:
    """(reference, upper bound, what set it) of a count from each session's worst node."""
    worst = max(per_session)
    ref = healthy_worst(per_session)
    by = (f"the worst healthy count ({worst:g}; at least {COUNT_MIN}) x "
          f"{1 + COUNT_MARGIN:g}")
    return ref, COUNT_MARGIN, by


def gather(records: Sequence[PerfRecord], index_of: Callable[[str, PerfRecord], Sequence[str]],
           ) -> tuple[dict[tuple, Figure], list[str]]:
    """The figures to calibrate, keyed by (class, keys, pvar), and refusals of whole classes
    whose reference index cannot be filled from the results."""
    figures: dict[tuple, Figure] = {}
    refused: dict[str, str] = {}
    for r in records:
        pvar = _headline(r)
        if r.value is None or r.variables.get("fail_phase") not in _OK_PHASES or pvar is None:
            continue
        if r.base in refused:
            continue
        index = list(index_of(r.base, r))
        keys = []
        for name in index[1:]:
            if name == "$partition":
                keys.append(f"{r.system}:{r.partition}")
            elif name == "$environ":
                keys.append(r.environ)
            elif name.startswith("$"):
                refused[r.base] = (f"{r.base}: its $index names {name}, which a run report "
                                   "does not record")
                break
            elif name not in r.variables:
                refused[r.base] = (f"{r.base}: its $index names {name!r}, which its test "
                                   "cases do not record")
                break
            else:
                keys.append(refformat.index_value(r.variables, name))
        else:
            k = (r.base, tuple(keys), pvar)
            fig = figures.setdefault(k, Figure(r.base, tuple(keys), pvar, r.unit))
            fig.values.setdefault(r.session, []).append(r.value)
            fig.units.setdefault(r.session, []).append(r.unit)
            when = r.time if r.time is not None else -math.inf
            if when >= fig.unit_time:  # the newest record's unit: the performance function's
                fig.unit, fig.unit_time = r.unit, when
            fig.tests.add(r.test)
            for name, value in refformat.measured_with(r.variables, index).items():
                fig.shaping[name].add(value if not isinstance(value, list) else tuple(value))
    return figures, list(refused.values())


def _in_one_unit(fig: Figure) -> str | None:
    """Convert every value of `fig` to its unit (the newest record's, within one dimension);
    the refusal when its sessions gave it in units of different dimensions."""
    try:
        units.common([u for us in fig.units.values() for u in us] + [fig.unit], fig.name)
    except units.UnitError as err:
        return str(err)
    for s, vals in fig.values.items():
        fig.values[s] = [units.convert(v, u, fig.unit) for v, u in zip(vals, fig.units[s],
                                                                         strict=True)]
    return None


def calibrate(records: Sequence[PerfRecord], sessions: Sequence[str],
              index_of: Callable[[str, PerfRecord], Sequence[str]], *,
              factor: float = FACTOR, floor: float = FLOOR, max_bound: float = MAX_BOUND,
              ) -> Calibration:
    """Entries for every figure of `records` (one system), or refusals."""
    system = records[0].system if records else ""
    sessions = list(sessions)
    figures, refused = gather(records, index_of)
    entries: list[Entry] = []
    for fig in sorted(figures.values(), key=lambda f: (f.cls, str(f.keys), f.pvar)):
        missing = [s for s in sessions if s not in fig.values]
        if missing:
            refused.append(f"{fig.name}: missing from {len(missing)} of {len(sessions)} "
                           f"sessions ({', '.join(s[:8] for s in missing)})")
            continue
        mixed = _in_one_unit(fig)
        if mixed:
            refused.append(mixed)
            continue
        varied = {k: sorted(map(str, v)) for k, v in fig.shaping.items() if len(v) > 1}
        if varied:
            what = "; ".join(f"{k} {', '.join(v)}" for k, v in varied.items())
            refused.append(f"{fig.name}: the sessions measured it differently ({what})")
            continue
        counts = fig.unit == COUNT_UNIT
        per_session = [max(fig.values[s]) if counts else stats.spread(fig.values[s]).median
                       for s in sessions]
        if len(per_session) < stats.MIN_SESSIONS:
            refused.append(f"{fig.name}: {counted(len(per_session), 'session')}, "
                           f"{stats.MIN_SESSIONS} needed")
            continue
        shaping = {k: next(iter(v)) for k, v in fig.shaping.items()}
        if counts:
            ref, upper, set_by = count_bound(per_session)
            entries.append(Entry(fig.cls, fig.keys, fig.pvar, ref, None, upper, fig.unit,
                                 stats.spread(per_session), shaping, sorted(fig.tests), set_by))
            continue
        direction = better(fig.unit, fig.pvar)
        median = stats.spread(per_session).median
        if _round_sig(median) <= 0:  # checked first: the bounds are fractions of it
            refused.append(f"{fig.name}: median {median:g} {fig.unit}: a relative bound "
                           "around it cannot fail")
            continue
        ref, lower, upper, sp, set_by = bound_and_reason(per_session, direction, factor, floor)
        bound = max(abs(lower or 0), abs(upper or 0))
        side, sign = {LOWER: ("upper", "+"), HIGHER: ("lower", "-"),
                      None: ("two-sided", "±")}[direction]
        if bound > max_bound or (lower is not None and lower <= -1):
            refused.append(
                f"{fig.name}: spread too wide: sessions {sp.low:.4g}-{sp.high:.4g} {fig.unit} "
                f"around {sp.median:.4g}, the {side} bound would be {sign}{100 * bound:.0f}% "
                f"(more than --max-bound {100 * max_bound:g}%"
                + (", and a lower bound of -100% cannot fail)" if bound >= 1 else ")"))
            continue
        entries.append(Entry(fig.cls, fig.keys, fig.pvar, ref, lower, upper, fig.unit, sp,
                             shaping, sorted(fig.tests), set_by))
    return Calibration(system, sessions, entries, refused)

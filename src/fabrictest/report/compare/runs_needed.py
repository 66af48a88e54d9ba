"""`fabric-report compare` with several sessions a side: the runs a side its measured noise
needs to see a given drop, said before the rows, and a drop judged only where it can be seen.

A side's value is the median of its sessions; its error is sqrt(pi / 2) x its relative
spread / sqrt(n) (the median of normal noise; the spread is compare's robust one). The
change's standard error is both sides' combined, and a drop of ``d`` is seen (one-sided, at
``ALPHA`` false alarms per figure, with ``POWER``) when

    d >= (t_ALPHA + t_POWER) x sqrt(pi / 2) x sqrt(s_base^2 / n_base + s_target^2 / n_target)

and the runs each side needs are the fewest n (at least ``MIN_RUNS``, 5) where the same holds with
n a side. The spreads are estimated from the sessions themselves, so z is Student's t at the
sessions' degrees of freedom (n_base + n_target - 2): 5 a side need 4.5 standard errors, 20
a side 3.3; with fewer than 5 a side the spread is no measure and nothing is seen. A figure that moved the bad way beyond the tolerance by more than that many
standard errors is REGRESSED ("beyond its standard error") even where compare's range rule (every target session outside the base's
range, 3 x the spreads) does not hold: that rule does not shrink with more runs, so no number
of runs would let it see a drop under 3 x the spreads. A figure that cannot see the drop is
named: "cannot see a 3.0% drop with 3 runs a side (sees 5.2%; run 8 each side)".

Pure: rows in, rows (amended) and lines out.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from fabrictest.report.compare.rows import CompareRow
from fabrictest.report.records import counts, stats
from fabrictest.report.records.direction import LOWER, better

#: the drop asked about by default (`--drop`)
DROP = 0.03
#: false alarms per figure of the one-sided test (a compare holds hundreds of figures)
ALPHA = 0.001
#: the chance a drop of the asked size is seen
POWER = 0.90
#: fewest sessions a side the test judges: the spread of 3 (the smaller of two deviations)
#: is too often tiny; on the vcluster sweep's recorded noise, 3 a side gave 9 false alarms in
#: 1,000 healthy comparisons, 5 a side 1
MIN_RUNS = 5
#: the most runs a side said ("more than 1000")
MAX_RUNS = 1000
#: a median's error over a mean's, on normal noise
MEDIAN_SE = math.sqrt(math.pi / 2)


@dataclass(frozen=True)
class Sight:
    seen: float  # the smallest drop seen with the runs given (relative; inf: too few runs)
    needed: int  # runs a side to see the asked drop
    z: float  # the change in the bad direction, in standard errors
    z_named: float  # the z a drop must pass to be named


def _sees(seen: float) -> str:
    return f"sees {_pct(seen)}; " if math.isfinite(seen) else ""


def _runs(n: int) -> str:
    return f"more than {MAX_RUNS}" if n > MAX_RUNS else str(n)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def sight(row: CompareRow, drop: float) -> Sight | None:
    """What a row's noise lets it see: None without 3 sessions and a measured spread on each
    side, a better direction, or a value on both sides (counts follow the count rule)."""
    if (row.n_base < stats.MIN_SESSIONS or row.n_target < stats.MIN_SESSIONS
            or row.noise_base is None or row.noise_target is None or row.change is None
            or not math.isfinite(row.change) or counts.is_count(row.unit)
            or better(row.unit, row.pvar) is None):
        return None
    var_b, var_t = row.noise_base ** 2, row.noise_target ** 2
    se = MEDIAN_SE * math.sqrt(var_b / row.n_base + var_t / row.n_target)
    need = MEDIAN_SE * math.sqrt(var_b + var_t)  # the standard error times sqrt(n a side)
    needed = next((n for n in range(MIN_RUNS, MAX_RUNS + 1)
                   if _k(2 * n - 2) * need / math.sqrt(n) <= drop), MAX_RUNS + 1)
    bad = row.change if better(row.unit, row.pvar) == LOWER else -row.change
    z = bad / se if se > 0 else (math.inf if bad > 0 else 0.0)
    df = row.n_base + row.n_target - 2
    few = min(row.n_base, row.n_target) < MIN_RUNS
    return Sight(math.inf if few else _k(df) * se, needed, z, math.inf if few else threshold(df))


@functools.lru_cache(maxsize=4096)
def threshold(df: int) -> float:
    """The one-sided test's threshold in standard errors: Student's t at 1 - ALPHA, the
    spreads being estimated from the sessions themselves (5 a side: 4.5; 20: 3.3)."""
    from scipy.stats import t as student_t  # 0.5 s to import: only when a side has runs

    return float(student_t.ppf(1 - ALPHA, df))


@functools.lru_cache(maxsize=4096)
def _k(df: int) -> float:
    from scipy.stats import t as student_t

    return threshold(df) + float(student_t.ppf(POWER, df))


def judge(rows: Sequence[CompareRow], drop: float, tolerance: float) -> list[CompareRow]:
    """Amend the rows compare judged: a drop beyond the tolerance and z_ALPHA standard errors
    that the range rule did not call is REGRESSED; a row not called that cannot see ``drop``
    with its runs says so. Returns those rows."""
    blind = []
    for row in rows:
        s = sight(row, drop)
        if s is None or row.status not in ("ok", "noise", "REGRESSED", "improved"):
            continue
        if row.status in ("ok", "noise") and s.z >= s.z_named and abs(row.change) > tolerance:
            row.status, row.beyond_noise = "REGRESSED", True
            row.note = (f"{100 * row.change:+.1f}% beyond its standard error ({s.z:.1f} x, "
                        f"one-sided at {ALPHA:g})")
        elif row.status != "REGRESSED" and s.seen > drop and min(row.n_base,
                                                                  row.n_target) >= MIN_RUNS:
            blind.append(row)
            words = (f"cannot see a {_pct(drop)} drop with {min(row.n_base, row.n_target)} "
                     f"runs a side ({_sees(s.seen)}run {_runs(s.needed)} each side)")
            row.note = f"{row.note}; {words}" if row.note else words
    return blind


def statement(rows: Sequence[CompareRow], drop: float, tolerance: float) -> str | None:
    """The line said before the rows: the runs a side the noisiest figure needs to see
    ``drop``; None when no figure has 3 sessions a side (the headline asks for them)."""
    seen = [(s, r) for r in rows if (s := sight(r, drop)) is not None]
    if not seen:
        return None
    worst, row = max(seen, key=lambda sr: sr[0].needed)
    runs = min(min(r.n_base, r.n_target) for _s, r in seen)
    blind = sum(s.seen > drop for s, _r in seen)
    line = (f"to see a {_pct(drop)} drop here, run {_runs(worst.needed)} times each side (the "
            f"noisiest figure, {row.test} {row.pvar}: ±{_pct(row.noise_base)} base, "
            f"±{_pct(row.noise_target)} target; one-sided, {ALPHA:g} false alarms a figure, "
            f"power {POWER:.0%})")
    if runs < MIN_RUNS:
        line += (f"; with {runs} runs a side the spread is no measure (fewer than {MIN_RUNS}): "
                 "drops are judged by the range rule alone")
    elif blind:
        line += (f"; with {runs} runs a side {blind} of {len(seen)} figures cannot see it and "
                 "are judged only beyond what they see")
    else:
        line += f"; the {runs} runs a side given see it in every figure ({len(seen)})"
    if tolerance > drop:
        line += (f"; the tolerance ({_pct(tolerance)}) is above it: --tolerance {drop:g} "
                 "calls such a drop")
    return line


def amend(line: str, status: int, blind: Sequence[CompareRow], drop: float, asked: bool
          ) -> tuple[str, int]:
    """The verdict with ``--drop`` given (``asked``): the figures that cannot see it counted,
    and failing the comparison (exit 1: not enough evidence for what was asked); without, the
    statement and the rows' notes say it."""
    if not asked or not blind or status == 2:
        return line, status
    n = len(blind)
    line += (f"; {n} figure{'s' if n > 1 else ''} cannot see a {_pct(drop)} drop with the "
             "runs given")
    return line, max(status, 1)

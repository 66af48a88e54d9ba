"""What `compare` says: the headline, the closing verdict line and its exit status, the rows
as a text table and each row's status in words (also the html's)."""

from __future__ import annotations

from collections.abc import Sequence

from fabrictest.report.compare.rows import CompareRow
from fabrictest.report.records import stats
from fabrictest.report.records.text_table import text_table
from fabrictest.report.records.units import fmt as _f
from fabrictest.report.records.words import counted


def noise_text(sigma: float | None, n: int) -> str:
    if sigma is None:
        return f"? ({n})" if n else "-"
    return f"±{100 * sigma:.1f}% ({n})"


def compared(rows: Sequence[CompareRow]) -> int:
    """Figures that had a value on both sides (or a value and a reference)."""
    return sum(r.base is not None and r.target is not None for r in rows)


def _failing(row: CompareRow, allow_missing: bool) -> bool:
    if row.status == "unreferenced":
        return row.test_failed
    return row.status in ("REGRESSED", "failed") or (row.status == "missing"
                                                      and not allow_missing)


def unjudged(rows: Sequence[CompareRow]) -> list[CompareRow]:
    """Rows that changed beyond the tolerance with the noise unknown (no evidence either
    way)."""
    return [r for r in rows if r.status == "changed" and r.beyond_noise is None
            and r.change is not None]


def headline(rows: Sequence[CompareRow], tolerance: float | None,
             against_references: bool = False) -> str:
    """What a person reads first: how many figures regressed (with evidence), or that there
    is no evidence of regression, and how many changed without the noise to judge them."""
    n = compared(rows)
    bad = sum(r.status == "REGRESSED" for r in rows)
    if against_references:
        where = ("their reference bands" if tolerance is None
                 else f"their references by more than {100 * tolerance:g}%")
        return (f"{bad} of {n} figures regressed beyond {where}" if bad
                else f"no figure regressed beyond {where}")
    head = (f"{bad} of {n} figures regressed beyond the noise or outside their reference "
            "band" if bad else "no evidence of regression")
    open_ = unjudged(rows)
    if open_:
        ones = all(r.n_base <= 1 and r.n_target <= 1 for r in open_)
        per = ("one session per side" if ones
               else f"fewer than {stats.MIN_SESSIONS} sessions on a side")
        tol = "" if tolerance is None else f" by more than {100 * tolerance:g}%"
        head += (f"; {len(open_)} figure{'s' if len(open_) > 1 else ''} changed{tol} with "
                 f"{per}: run {stats.MIN_SESSIONS} per side to judge")
    return head


def verdict(rows: Sequence[CompareRow], unreadable: int, tolerance: float | None,
            allow_missing: bool = False, against_references: bool = False
            ) -> tuple[str, int]:
    """The closing line and the exit status: 0 figures compared and none regressed, 1 a
    figure regressed, has no value in the target, (unless `allow_missing`) is missing from
    it, or (against references) has no reference and its test failed, 2 nothing could be
    compared. The line starts with the :func:`headline`; the figures that fail the
    comparison close it, after "failing:"."""
    n = compared(rows)
    count = {s: sum(r.status == s for r in rows) for s in
             ("failed", "new", "missing", "unreferenced", "noise")}
    parts = [f"compared {counted(n, 'figure')}"]
    if count["noise"]:
        parts.append(f"{count['noise']} moved within the noise")
    if count["failed"]:
        parts.append(f"{count['failed']} without a value"
                     + ("" if against_references else " in the target"))
    if count["unreferenced"]:
        in_failed = sum(r.status == "unreferenced" and r.test_failed for r in rows)
        parts.append(f"{count['unreferenced']} without a reference"
                     + (f" ({in_failed} of them in failed tests)" if in_failed else ""))
    if count["missing"]:
        parts.append(f"{count['missing']} missing from the target"
                     + (" (allowed)" if allow_missing else ""))
    if count["new"]:
        parts.append(f"{count['new']} not in the base")
    parts.append(f"{unreadable} unreadable entr{'y' if unreadable == 1 else 'ies'} in the "
                 "sources")
    head = headline(rows, tolerance, against_references)
    others = [r for r in rows if _failing(r, allow_missing) and r.status != "REGRESSED"]
    for status, words in (("failed", "without a value"), ("missing", "missing from the target"),
                          ("unreferenced", "without a reference in failed tests")):
        k = sum(r.status == status for r in others)
        if k:
            head += f"; {k} figure{'s' if k > 1 else ''} {words}"
    line = head + " (" + ", ".join(parts) + ")"
    bad = [_named(r) for r in rows if _failing(r, allow_missing)]
    if bad:
        shown = ", ".join(bad[:20]) + (f" and {len(bad) - 20} more" if len(bad) > 20 else "")
        line += "; failing: " + shown
    if n == 0:
        return line, 2
    return line, (1 if bad else 0)


def _named(r: CompareRow) -> str:
    what = {"failed": "no value", "missing": "missing",
            "unreferenced": "no reference"}.get(r.status)
    if what is None:
        what = "-" if r.change is None else f"{100 * r.change:+.1f}%"
    return f"{r.test} {r.pvar} ({what})"


def status_text(r: CompareRow) -> str:
    """`REGRESSED (beyond the noise)`; a note that already starts with the status word stands
    alone (`changed by -50.5% (noise unknown)`)."""
    if r.note and r.note.split(" ")[0] == r.status:
        return r.note
    return r.status + (f" ({r.note})" if r.note else "")


def table_order(rows: Sequence[CompareRow]) -> list[CompareRow]:
    """The judged rows first, then the informational ones (each in the comparison's order):
    a reader meets what decides the verdict before the figures that need no reference."""
    return sorted(rows, key=lambda r: r.informational)


def render_table(rows: Sequence[CompareRow], base_label: str, target_label: str) -> str:
    """The rows as a text table; with several sessions on a side, each side's noise (its
    sessions' relative spread, and how many sessions) and whether the change is beyond it."""
    with_noise = any(r.n_base > 1 or r.n_target > 1 for r in rows)
    head = ["test", "scenario", "system", "nodes", "figure", "unit", base_label, target_label,
            "change"]
    if with_noise:
        head += ["noise base (n)", "noise target (n)", "beyond noise"]
    head.append("status")
    body = []
    for r in table_order(rows):
        ch = "-" if r.change is None else f"{100 * r.change:+.1f}%"
        line = [r.test, r.scenario or "-", r.sysenv, r.nodes or "-", r.pvar, r.unit,
                _f(r.base), _f(r.target), ch]
        if with_noise:
            beyond = {True: "yes", False: "no", None: "?"}[r.beyond_noise]
            line += [noise_text(r.noise_base, r.n_base), noise_text(r.noise_target, r.n_target),
                     beyond if r.change is not None else "-"]
        line.append(status_text(r))
        body.append(line)
    return text_table(head, body)

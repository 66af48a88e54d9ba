"""The history page of `fabric-report history --html DIR`: a table of the change points and one
plot per figure (its value per session, each level's median, the change points as vertical
lines, lone outliers circled), offline like the rest of the report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from fabrictest.report.history import figures as hist  # noqa: E402
from fabrictest.report.history import summary, vanished  # noqa: E402
from fabrictest.report.history.figures import FigureHistory  # noqa: E402
from fabrictest.report.page.markup import CSS  # noqa: E402
from fabrictest.report.page.markup import escape as _e  # noqa: E402
from fabrictest.report.page.markup import img as _img  # noqa: E402
from fabrictest.report.page.plots import DPI, _slug  # noqa: E402
from fabrictest.report.records.outfiles import save_figure, write_text  # noqa: E402
from fabrictest.report.records.results import ResultsError  # noqa: E402
from fabrictest.report.records.sessions import stored_query  # noqa: E402
from fabrictest.report.records.sources import Source, read  # noqa: E402

#: plots beyond this many figures are left out (figures with change points come first)
MAX_PLOTS = 200
_COLOUR = {"REGRESSED": "#c62828", "improved": "#2e7d32", "moved": "#ef6c00",
           "changed": "#6a1b9a"}


def plot(h: FigureHistory, outdir: Path, name: str) -> str:
    xs = list(range(1, len(h.points) + 1))
    ys = [p.value for p in h.points]
    fig, ax = plt.subplots(figsize=(7.5, 2.8))
    ax.plot(xs, ys, "o-", color="#1565c0", ms=3.5, lw=1)
    bounds = [0, *[c.index for c in h.changes], len(ys)]
    levels = [h.changes[0].before] if h.changes else []
    levels += [c.after for c in h.changes]
    for k, level in enumerate(levels):
        ax.hlines(level, bounds[k] + 0.6, bounds[k + 1] + 0.4, colors="#555", lw=2)
    colour = _COLOUR.get(h.status, "#555")
    for k, c in enumerate(h.changes):
        last = k == len(h.changes) - 1
        ax.axvline(c.index + 0.5, color=colour if last else "#999", ls="--", lw=1.2)
        ax.annotate(f"{100 * c.step:+.1f}%", (c.index + 0.5, max(ys)), fontsize=7,
                    ha="left", va="top", color=colour if last else "#666")
    if h.outliers:
        ax.plot([i + 1 for i in h.outliers], [ys[i] for i in h.outliers], "o", ms=10,
                mfc="none", mec="#ef6c00", label="outlier")
        ax.legend(fontsize=7, loc="lower left")
    ax.set_xlabel("session (in the order they ran)", fontsize=8)
    ax.set_ylabel(h.unit or "value", fontsize=8)
    ax.set_title(f"{h.test} {h.pvar} ({h.sysenv}): {h.status}", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, outdir / name, dpi=DPI)
    plt.close(fig)
    return name


def _table(histories: Sequence[FigureHistory]) -> str:
    rows = []
    for h in histories:
        for c in h.changes:
            extras = ",".join(f"{k}={v}" for k, v in c.extras.items())
            cls = h.status if c is h.changes[-1] else ""
            rows.append(
                f'<tr class="{_e(cls)}"><td>{_e(h.test)}</td><td>{_e(h.sysenv)}</td>'
                f"<td>{_e(h.pvar)}</td><td class=num>#{c.index + 1}</td>"
                f"<td>{_e(c.session[:8])}</td><td>{_e(c.date[:19])}</td><td>{_e(extras)}</td>"
                f"<td class=num>{c.before:.4g}</td><td class=num>{c.after:.4g}</td>"
                f"<td class=num>{100 * c.step:+.1f}%</td>"
                f"<td class=num>{100 * c.confidence:.1f}%</td>"
                f"<td>{_e(h.status if cls else 'earlier')}</td></tr>")
    if not rows:
        return '<p class="note">No change point in any figure.</p>'
    return ("<table><tr><th>test</th><th>system</th><th>figure</th><th>at</th><th>session"
            "</th><th>date</th><th>extras</th><th>before</th><th>after</th><th>step</th>"
            "<th>sure</th><th>status</th></tr>" + "".join(rows) + "</table>")


def absent_table(histories: Sequence[FigureHistory]) -> str:
    """The judged figures absent from the latest sessions (:mod:`.vanished`), before the
    change points: their history ends where it was healthy, and the page says so."""
    absent = [h for h in histories if h.absent_latest]
    if not absent:
        return ""
    rows = "".join(
        f'<tr class="missing"><td>{_e(h.test)}</td><td>{_e(h.sysenv)}</td>'
        f"<td>{_e(h.pvar)}</td><td>{_e(h.points[-1].session[:8])}</td>"
        f"<td>{_e(h.points[-1].date[:19])}</td><td class=num>{h.absent_latest}</td></tr>"
        for h in absent)
    return (f"<p><b>{len(absent)} figure{'s' if len(absent) > 1 else ''} absent from the "
            "latest sessions</b> (measured before, not measured there: no verdict rests on "
            "them)</p><table><tr><th>test</th><th>system</th><th>figure</th><th>last "
            "measured in</th><th>date</th><th>sessions since</th></tr>" + rows + "</table>")


def section(histories: Sequence[FigureHistory], outdir: Path, embed: bool = False) -> str:
    """The figures absent from the latest sessions, the change points' table and a plot per
    figure (with a change point first)."""
    judged = [h for h in histories if h.status != "few"]
    judged.sort(key=lambda h: (not h.changes, h.status != "REGRESSED", h.test, h.pvar))
    body = [absent_table(judged), _table(judged),
            '<p class="note">Dots: one value per session; grey lines: the '
            "median of each level; dashed: the change points (coloured: the latest); circled: "
            "a lone outlier, not a change.</p>"]
    for i, h in enumerate(judged[:MAX_PLOTS]):
        name = plot(h, outdir, f"history-{i:03d}-{_slug(h.test + '-' + h.pvar)}.png")
        body.append(_img(outdir, name, embed, f"{h.test} {h.pvar}"))
    if len(judged) > MAX_PLOTS:
        body.append(f'<p class="note">{len(judged) - MAX_PLOTS} more figures left out.</p>')
    few = len(histories) - len(judged)
    if few:
        body.append(f'<p class="note">{few} figures with too few sessions to judge.</p>')
    return "\n".join(b for b in body if b)


def write_page(histories: Sequence[FigureHistory], outdir: Path, verdict: str,
               sources: Sequence[str], embed: bool = False) -> Path:
    body = ["<h1>fabrictest history</h1>",
            f'<p class="note">From: {_e(", ".join(sources))}. Everything on this page is '
            "local.</p>", f'<div class="verdict">{_e(verdict)}</div>',
            "<h2>Change points over the sessions</h2>", section(histories, outdir, embed)]
    index = outdir / "index.html"
    write_text(index, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               f"<title>fabrictest history</title><style>{CSS}</style></head><body>\n"
               + "\n".join(body) + "\n</body></html>\n", "--html")
    return index


def html_section(system: str | None, outdir, embed: bool) -> tuple[str, str]:
    """`fabric-report html --history`: (verdict line, section) of every stored session of
    `system`, or the reason there is none to show."""
    try:
        res = read(Source("session", stored_query(None, {})))
    except ResultsError as err:
        return f"no history: {err}", ""
    records = [r for r in res.records if system is None or r.system == system]
    if not records:
        return f"no history: no stored session of {system}", ""
    histories = [hist.judge(h) for h in hist.series(records, res.sessions)]
    ordered = vanished.latest_sessions(res.records, res.sessions, system, lambda _s: True)
    absent = vanished.mark(histories, ordered, res.records)
    line, status = summary.verdict(histories, res.unreadable, hist.TOLERANCE)
    line, _status = vanished.amend(line, status, absent, allowed=False)
    return line, section(histories, outdir, embed)

"""One self-contained HTML page: inline CSS, PNGs beside it (or embedded), no external URLs."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path

from fabrictest.report.attribute.impact import impact_section
from fabrictest.report.compare.ratios import RatioRow, per_node
from fabrictest.report.compare.rows import CompareRow
from fabrictest.report.compare.text import noise_text, status_text, table_order
from fabrictest.report.counters.figures import counter_section
from fabrictest.report.page.markup import CSS, escape
from fabrictest.report.page.markup import img as _img
from fabrictest.report.records.results import PerfRecord
from fabrictest.report.records.units import fmt

_e = escape

_n = fmt


def _records_table(records: Sequence[PerfRecord], limit: int = 400) -> str:
    rows = []
    for r in list(records)[:limit]:
        lo, hi = r.band()
        cls = "fail" if r.result == "fail" else ""
        rows.append(
            f'<tr class="{cls}"><td>{_e(r.test)}</td><td>{_e(r.sysenv)}</td>'
            f"<td>{_e(r.nodes_expr)}</td><td>{_e(r.pvar)}</td><td class=num>{_n(r.value)}</td>"
            f"<td>{_e(r.unit)}</td><td class=num>{_n(r.ref)}</td>"
            f"<td class=num>{_n(lo)} .. {_n(hi)}</td><td>{_e(r.result)}"
            f"{' (informational)' if r.informational else ''}</td></tr>"
        )
    more = (f'<p class="note">{len(records) - limit} more rows left out.</p>'
            if len(records) > limit else "")
    return (
        "<table><tr><th>test</th><th>system</th><th>nodes</th><th>figure</th><th>value</th>"
        "<th>unit</th><th>reference</th><th>band</th><th>result</th></tr>"
        + "".join(rows) + "</table>" + more
    )


def compare_table(rows: Sequence[CompareRow], base_label: str, target_label: str) -> str:
    with_noise = any(r.n_base > 1 or r.n_target > 1 for r in rows)
    noise_head = ("<th>noise base (n)</th><th>noise target (n)</th><th>beyond noise</th>"
                  if with_noise else "")
    out = [
        "<table><tr><th>test</th><th>scenario</th><th>system</th><th>nodes</th><th>figure</th>"
        f"<th>unit</th><th>{_e(base_label)}</th><th>{_e(target_label)}</th><th>change</th>"
        f"{noise_head}<th>status</th></tr>"
    ]
    for r in table_order(rows):
        ch = "-" if r.change is None else f"{100 * r.change:+.1f}%"
        noise = ""
        if with_noise:
            beyond = {True: "yes", False: "no", None: "?"}[r.beyond_noise]
            noise = (f"<td class=num>{_e(noise_text(r.noise_base, r.n_base))}</td>"
                     f"<td class=num>{_e(noise_text(r.noise_target, r.n_target))}</td>"
                     f"<td>{beyond if r.change is not None else '-'}</td>")
        out.append(
            f'<tr class="{_e(r.status)}"><td>{_e(r.test)}</td><td>{_e(r.scenario)}</td>'
            f"<td>{_e(r.sysenv)}</td><td>{_e(r.nodes)}</td><td>{_e(r.pvar)}</td>"
            f"<td>{_e(r.unit)}</td><td class=num>{_n(r.base)}</td>"
            f"<td class=num>{_n(r.target)}</td><td class=num>{ch}</td>{noise}"
            f"<td>{_e(status_text(r))}</td></tr>"
        )
    out.append("</table>")
    return "".join(out)


def _cls(text) -> str:
    return "-".join(str(text or "").split())


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * (v - 1):+.1f}%"


def ratio_section(rows: Sequence[RatioRow], images: list[dict], outdir: Path,
                  embed: bool, with_before: bool) -> str:
    """Every figure with a reference as figure / reference, the chart(s) and the table; and
    per node named in the figures, its worst ratio."""
    n_bad = sum(r.failing for r in rows)
    parts = [f"<p>{n_bad} of {len(rows)} figures with a reference are outside its band. "
             "Ratio = figure / reference: 1 is the reference, the band is "
             "[1 + lower, 1 + upper], whatever the figure's size or unit.</p>"]
    parts += [_img(outdir, im["png"], embed, im["title"]) for im in images]
    for im in images:
        if im.get("left_out"):
            parts.append(f'<p class="note">{im["left_out"]} more figures only in the '
                         "table.</p>")
    nodes = per_node(rows)
    if nodes:
        body = "".join(
            f'<tr class="{"fail" if n["failing"] else ""}"><td>{_e(n["node"])}</td>'
            f"<td class=num>{n['figures']}</td><td class=num>{n['failing']}</td>"
            f"<td>{_e(n['worst'].label)}</td><td class=num>{n['worst'].ratio:.3f}</td></tr>"
            for n in nodes)
        parts.append("<h3>Per node</h3><p class=note>The figures that name a node (its link's "
                     "streams, its own figure).</p><table><tr><th>node</th><th>figures</th>"
                     "<th>failing</th><th>worst figure</th><th>ratio</th></tr>" + body
                     + "</table>")
    head = "<th>before</th>" if with_before else ""
    out = []
    for r in rows:
        lo, hi = r.band
        before = (f"<td class=num>{_n(r.before)} ({_pct(r.before_ratio)})</td>"
                  if with_before else "")
        out.append(
            f'<tr class="{"fail" if r.failing else ""}"><td>{_e(r.test)}</td>'
            f"<td>{_e(r.sysenv)}</td><td>{_e(r.nodes)}</td><td>{_e(r.pvar)}</td>"
            f"<td>{_e(r.unit)}</td><td class=num>{_n(r.ref)}</td>"
            f"<td class=num>{_pct(lo)} .. {_pct(hi) if hi else '+inf'}</td>{before}"
            f"<td class=num>{_n(r.value)}</td><td class=num>{r.ratio:.3f} "
            f"({_pct(r.ratio)})</td><td>{'FAIL' if r.failing else 'ok'}</td></tr>")
    parts.append(
        '<table class="ratios"><tr><th>test</th><th>system</th><th>nodes</th><th>figure</th>'
        f"<th>unit</th><th>reference</th><th>band</th>{head}<th>value</th><th>ratio</th>"
        "<th>status</th></tr>" + "".join(out) + "</table>")
    return "\n".join(parts)


def sweep_section(sweep: dict, images: list[dict], outdir: Path, embed: bool) -> str:
    lv = sweep["level"]
    exp = sweep.get("expected")
    expected = (f" Expected {_n(exp['value'])} {_e(exp['unit'])} per run from "
                f"{_e(exp['source'])} (below {_n(exp['floor'])}: named)." if exp else
                " No expected rate (relative to the cluster only: a uniform drop is not seen;"
                " give fabric-sweep --expect-from).")
    parts = [
        f"<p>{len(sweep['nodes'])} nodes, {_e(sweep.get('measurement'))}, "
        f"{sweep['rounds_used']} rounds, {len(sweep['pairs'])} pair measurements; cluster "
        f"level {_n(lv.get('center'))} {_e(sweep['unit'])} (spread {_n(lv.get('sigma'))})."
        f"{expected}</p>",
        '<div class="verdict">' + _e("\n".join(sweep["verdict"])) + "</div>",
    ]
    for im in images:
        parts.append(_img(outdir, im["png"], embed, im["title"]))
    rows = []
    for row in sweep["nodes_table"]:
        sides = "".join(
            f'<td class="num st-{_cls(row.get(f"{d}_state"))}">{_n(row.get(f"{d}_figure"))} '
            f"{_e(row.get(f'{d}_state') or '-')}</td>" for d in ("send", "receive"))
        rows.append(
            f'<tr class="{_cls(row["status"])}"><td>{_e(row["node"])}</td>'
            f"<td class=num>{row['pairs']}</td><td class=num>{row['slow']}</td>"
            f"<td class=num>{row['failed']}</td><td class=num>{_n(row['median'])}</td>"
            f"<td class=num>{_n(row['ratio'])}</td>{sides}<td>{_e(row['status'])}</td>"
            f"<td>{_e(', '.join(row['partners']))}</td></tr>"
        )
    parts.append(
        "<table><tr><th>node</th><th>pairs</th><th>slow</th><th>failed</th><th>median</th>"
        "<th>ratio</th><th>send</th><th>receive</th><th>status</th><th>partners</th></tr>"
        + "".join(rows) + "</table>"
    )
    raw = []
    for p in sweep["pairs"]:
        raw.append(
            f"<tr><td class=num>{p['round']}</td><td>{_e(p['kind'])}</td><td>{_e(p['a'])}</td>"
            f"<td>{_e(p['b'])}</td><td class=num>{_n(p['value'])}</td><td>{_e(p['status'])}</td>"
            f"<td>{_e((p.get('detail') or '')[:160])}</td></tr>"
        )
    parts.append(
        "<details><summary>raw pair figures</summary><table><tr><th>round</th><th>kind</th>"
        "<th>a</th><th>b</th><th>figure</th><th>status</th><th>detail</th></tr>"
        + "".join(raw) + "</table></details>"
    )
    return "\n".join(parts)


def page(
    *,
    title: str,
    sources: Sequence[str],
    records: Sequence[PerfRecord],
    size_images: list[dict],
    stream_images: list[dict],
    sweeps: list[tuple[str, dict, list[dict]]],
    comparison: tuple[str, str, list[CompareRow], str] | None,
    outdir: Path,
    embed: bool = False,
    ratios: tuple[list[RatioRow], list[dict], bool] | None = None,
    history: tuple[str, str] | None = None,
    run_counters: str = "",
) -> str:
    now = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="note">Generated {now} from: {_e(", ".join(sources) or "nothing")}. '
            "Everything on this page is local: no fonts, scripts or styles are fetched.</p>"]
    verdicts = []
    if comparison:
        verdicts.append(comparison[3])
    if ratios and ratios[0]:
        n_out = sum(r.failing for r in ratios[0])
        verdicts.append(f"{n_out} of {len(ratios[0])} figures with a reference "
                        f"{'is' if n_out == 1 else 'are'} outside its band")
    if verdicts:
        body.append('<div class="verdict">' + "<br>".join(_e(v) for v in verdicts) + "</div>")
    if comparison:
        base_label, target_label, rows, head = comparison
        body.append("<h2>Regression table</h2>")
        body.append(f"<p>{_e(head)}: <b>{_e(base_label)}</b> (base) against "
                    f"<b>{_e(target_label)}</b>. A figure is called regressed only with "
                    "evidence: its change is beyond the noise measured over 3 or more sessions "
                    "on each side, or it is outside its reference band; with fewer sessions "
                    "a change is shown as changed, noise unknown, in no colour.</p>")
        body.append(compare_table(rows, base_label, target_label))
    body.append("<h2>Ratio to reference</h2>")
    if ratios and ratios[0]:
        body.append(ratio_section(ratios[0], ratios[1], outdir, embed, ratios[2]))
    else:
        body.append('<p class="note">No figure with a reference in these results.</p>')
    body.append(counter_section(records))
    body.append(run_counters)  # fabric-report counters' view: every node over the whole run
    body.append("<h2>Congestion impact factors</h2>")
    body.append(impact_section(records))
    body.append("<h2>Bandwidth and latency against message size</h2>")
    if size_images:
        body.append('<p class="note">Lines: measured figures; shaded: the reference band '
                    "(reference x (1+lower) .. x (1+upper)); dashed: the reference.</p>")
        body += [_img(outdir, im["png"], embed, im["title"]) for im in size_images]
    else:
        body.append('<p class="note">No per-size figures in these results.</p>')
    body.append("<h2>tx/rx per-stream rates</h2>")
    if stream_images:
        body += [_img(outdir, im["png"], embed, im["title"]) for im in stream_images]
        for im in stream_images:
            if im.get("left_out"):
                body.append(f'<p class="note">{im["left_out"]} more test cases left out.</p>')
    else:
        body.append('<p class="note">No per-stream tx/rx figures in these results.</p>')
    body.append("<h2>Node-pair sweep</h2>")
    if sweeps:
        for label, sweep, images in sweeps:
            body.append(f"<h3>{_e(label)}</h3>")
            body.append(sweep_section(sweep, images, outdir, embed))
    else:
        body.append('<p class="note">No sweep results given.</p>')
    if history:  # (verdict line, section) of `fabric-report html --history`
        body.append("<h2>History: change points over the stored sessions</h2>")
        body.append(f'<div class="verdict">{_e(history[0])}</div>')
        body.append(history[1])
    body.append("<h2>All figures</h2>")
    body.append(_records_table(records) if records else '<p class="note">No records.</p>')
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body) + "\n</body></html>\n"
    )

"""The acceptance page: one HTML file, verdict first, then the three stages and the context.

Offline like ``fabric-report html``: inline CSS, no scripts, fonts or external URLs; the ratio
chart is embedded (base64), so the one file can be mailed, and a print stylesheet lays it out
for a browser's "print to PDF" (A4, colours kept, no row split across pages).
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
from collections.abc import Sequence
from pathlib import Path

from .acceptance import TITLES, Verdict
from .units import fmt

CSS = """
body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;color:#222;line-height:1.35}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #ccc;
padding-bottom:.2em;margin-top:1.6em}h3{font-size:1em;margin:1.1em 0 .3em}
table{border-collapse:collapse;font-size:.8em;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.15em .45em;text-align:left;vertical-align:top}
th{background:#eee}td.num{text-align:right;font-family:monospace;white-space:nowrap}
tr.fail td{background:#fbe3e3}tr.incomplete td,tr.unjudged td{background:#f6f3de}
.banner{padding:.7em 1em;border-radius:4px;margin:.8em 0;border:2px solid}
.banner .word{font-size:2em;font-weight:bold;letter-spacing:.04em}
.accepted{background:#e3f4e3;border-color:#2e7d32;color:#1b5e20}
.rejected{background:#fbe3e3;border-color:#c62828;color:#8e0000}
.banner ul{margin:.4em 0 0 1.2em;padding:0;color:#222}.banner li{margin:.2em 0}
.st{font-weight:bold;padding:0 .4em;border-radius:3px;white-space:nowrap}
.st-pass{background:#c8e6c9}.st-fail{background:#f3b6b6}
.st-incomplete,.st-unjudged{background:#fbe0b0}
.note{color:#555;font-size:.85em}pre{font-size:.8em;background:#f4f4f4;padding:.5em;
white-space:pre-wrap}img{max-width:100%;border:1px solid #ddd}
@page{size:A4;margin:12mm}
@media print{body{max-width:none;margin:0;font-size:9pt}h2{break-after:avoid}
tr,img,.banner{break-inside:avoid}thead{display:table-header-group}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""

MAX_ROWS = 300


def _e(x) -> str:
    return html.escape("" if x is None else str(x))


def _st(status: str) -> str:
    return f'<span class="st st-{_e(status)}">{_e(status.upper())}</span>'


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = (),
           limit: int = MAX_ROWS) -> str:
    """``rows``: cells already escaped (a cell starting with ``<td`` is taken whole)."""
    body = []
    for i, row in enumerate(rows[:limit]):
        cls = classes[i] if i < len(classes) else ""
        cells = "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in row)
        body.append(f'<tr class="{cls}">{cells}</tr>')
    more = (f'<p class="note">{len(rows) - limit} more rows in the JSON twin.</p>'
            if len(rows) > limit else "")
    return ("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(body) + "</tbody></table>" + more)


def _num(v) -> str:
    return f"<td class=num>{_e(fmt(v))}</td>"


def _pct(ratio) -> str:
    return "-" if ratio is None else f"{100 * (ratio - 1):+.1f}%"


def _gaps(stage: dict) -> str:
    if not stage["gaps"]:
        return ""
    return ("<p><b>Not judged:</b></p><ul>" + "".join(f"<li>{_e(g)}</li>"
                                                      for g in stage["gaps"]) + "</ul>")


def _head(stage: dict) -> str:
    n = stage["stage"]
    return (f'<h2 id="stage{n}">Stage {n}: {_e(TITLES[n])} {_st(stage["status"])}</h2>'
            f"<p>{_e(stage['summary'])}</p>")


def banner(v: Verdict) -> str:
    word = "ACCEPTED" if v.accepted else "NOT ACCEPTED"
    items = [f"<li><b>{_e(el['label'])}</b>"
             f"{' (a weak suspect: also in passing cases)' if el['weak'] else ''}: "
             + "; ".join(_e(x) for x in el["evidence"][:2])
             + (f" (and {len(el['evidence']) - 2} more in the stages below)"
                if len(el["evidence"]) > 2 else "")
             + "</li>" for el in v.elements]
    for s in v.stages:
        if s.status in ("incomplete", "unjudged"):
            why = "; ".join(s.gaps[:3]) or s.summary
            items.append(f"<li>stage {s.number} ({_e(s.title)}) {_e(s.status)}: {_e(why)}</li>")
    lines = "<ul>" + "".join(items) + "</ul>" if items else ""
    rows = [[f"<a href=\"#stage{s.number}\">stage {s.number}</a>", _e(s.title), _st(s.status),
             _e(s.summary)] for s in v.stages]
    return (f'<div class="banner {"accepted" if v.accepted else "rejected"}">'
            f'<div class="word">{word}</div>{lines}</div>'
            + _table(["stage", "", "status", "what was judged"], rows))


def stage1_section(st: dict) -> str:
    rows, classes = [], []
    for r in sorted(st["rows"], key=lambda r: (r["ok"], r["node"], r["nic"], r["check"])):
        rows.append([_e(r["node"]), _e(r["nic"]), _e(r["check"]),
                     "PASS" if r["ok"] else "<b>FAIL</b>", _e(r["found"]), _e(r["expected"]),
                     _e(r["source"])])
        classes.append("" if r["ok"] else "fail")
    table = (_table(["node", "NIC/port", "check", "result", "found", "expected", "from"],
                    rows, classes) if rows else "")
    return (_head(st) + '<p class="note">One row per node and check (fabric-health, '
            "docs/health.md), failures first.</p>" + table + _gaps(st))


def _figure_rows(figs: list[dict]) -> tuple[list, list]:
    rows, classes = [], []
    for r in figs:
        lo, hi = r["band"]
        rows.append([_e(r["set"]), _e(r["test"]), _e(r["nodes"]), _e(r["figure"]),
                     _num(r["value"]), _e(r["unit"]), _num(r["reference"]),
                     f"<td class=num>{_pct(lo)} .. {_pct(hi) if hi else '+inf'}</td>",
                     f"<td class=num>{r['ratio']:.3f}</td>",
                     "<b>FAIL</b>" if r["failing"] else "ok"])
        classes.append("fail" if r["failing"] else "")
    return rows, classes


def stage2_section(st: dict, images: list[tuple[str, bytes]]) -> str:
    out = [_head(st)]
    if st["left_out"]:
        out.append("<p>Left out of the performance stage by stage 1: " + "; ".join(
            f"{_e(x['node'])} ({_e(x['why'])})" for x in st["left_out"]) + "</p>")
    if st["sets"]:
        out.append("<h3>Per node set</h3><p class=note>edge: one switch; local: one group; "
                   "global: across groups (the Slingshot acceptance notes' scopes); ratio = "
                   "figure / reference.</p>")
        out.append(_table(["set", "figures", "outside band", "lowest ratio", "highest ratio",
                           "farthest from 1"],
                          [[_e(s["set"]), _num(s["figures"]), _num(s["failing"]),
                            f"<td class=num>{s['min_ratio']:.3f}</td>",
                            f"<td class=num>{s['max_ratio']:.3f}</td>",
                            _e(f"{s['worst']} ({s['worst_ratio']:.3f})")] for s in st["sets"]],
                          ["fail" if s["failing"] else "" for s in st["sets"]]))
    for name, data in images:
        out.append(f'<img alt="{_e(name)}" src="data:image/png;base64,'
                   f'{base64.b64encode(data).decode()}">')
    if st["failed_cases"]:
        out.append("<h3>Failed test cases</h3>")
        out.append(_table(["test", "set", "nodes", "failing links", "ReFrame's reason"],
                          [[_e(c["test"]), _e(c["set"]), _e(", ".join(c["nodes"])),
                            _e(", ".join(c["failing_links"])), _e(c["reason"])]
                           for c in st["failed_cases"]], ["fail"] * len(st["failed_cases"])))
    if st["attribution"]:
        out.append("<p>What the failures share (fabric-report attribute):</p><pre>"
                   + _e("\n".join(st["attribution"])) + "</pre>")
    if st["impact"]:
        out.append("<h3>Congestion impact</h3><p class=note>Victim isolated and beside the "
                   "aggressors; impact above 1 is worse under load.</p>")
        out.append(_table(["test", "probe", "isolated", "loaded", "impact", "band", "status"],
                          [[_e(x["test"]), _e(x["probe"]), _num(x["isolated"]),
                            _num(x["loaded"]), _num(x["impact"]),
                            _e(f"{fmt(x['band'][0])} .. {fmt(x['band'][1])}"),
                            _e(x["status"])] for x in st["impact"]],
                          ["fail" if x["status"] == "fail" else "" for x in st["impact"]]))
    for sw in st["sweeps"]:
        out.append(f"<h3>Node-pair sweep: {_e(sw['label'])}</h3>")
        out.append("<pre>" + _e("\n".join(sw["verdict"]) or "no verdict lines") + "</pre>")
        if sw["drain"]:
            out.append("<p>Nodes <code>fabric-sweep --drain</code> takes out: "
                       + _e(", ".join(sw["drain"])) + "</p>")
    if st["figures"]:
        rows, classes = _figure_rows(st["figures"])
        out.append("<h3>Every figure against its reference</h3>")
        out.append(_table(["set", "test", "nodes", "figure", "value", "unit", "reference",
                           "band", "ratio", "result"], rows, classes))
    if st["informational"]:
        out.append(f"<p class=note>Informational (no reference needed): "
                   f"{_e(', '.join(st['informational'][:40]))}"
                   f"{' ...' if len(st['informational']) > 40 else ''}</p>")
    return "\n".join(out) + _gaps(st)


def stage3_section(st: dict) -> str:
    out = [_head(st), '<p class="note">Each node from its first counter snapshot (before any '
           "test) to its last (after the last test), and between two tests, when no test "
           "was looking (docs/counters.md).</p>"]
    if st["nodes"]:
        out.append(_table(["node", "tests", "changed over the run", "verdict"],
                          [[_e(f"{n['system']}:{n['node']}"), _num(n["tests"]),
                            _e(n["changed"] or "none"),
                            _e("; ".join(n["failures"] + n["unread"]) or "ok")]
                           for n in st["nodes"]],
                          ["fail" if n["failures"] else "incomplete" if n["unread"] else ""
                           for n in st["nodes"]]))
    if st["congestion"]:
        out.append("<h3>Congestion counters per node and test</h3>")
        out.append(_table(["node", "counter", "test", "increase", "at most"],
                          [[_e(c["node"]), _e(c["counter"]), _e(c["test"]), _num(c["value"]),
                            _num(c["limit"])] for c in st["congestion"]],
                          ["fail" if c["failing"] else "" for c in st["congestion"]]))
    return "\n".join(out) + _gaps(st)


def context_section(history: list[dict], prov: dict, history_note: str) -> str:
    out = ['<h2 id="context">Context (does not change the verdict)</h2>',
           "<h3>History of the headline figures</h3>", f"<p class=note>{_e(history_note)}</p>"]
    if history:
        out.append(_table(["test", "figure", "unit", "sessions", "first", "median", "latest",
                           "history"],
                          [[_e(h.get("test")), _e(h.get("figure")), _e(h.get("unit")),
                            _num(h.get("sessions")), _num(h.get("first")),
                            _num(h.get("median")), _num(h.get("latest")),
                            _e(f"not judged: {h.get('note') or 'too few sessions'}"
                                if h.get("status") == "few" else (h.get("status") or "")
                                + (f": {h['note']}" if h.get("note") else ""))]
                           for h in history],
                          ["fail" if h.get("status") == "REGRESSED" else "" for h in history]))
    out.append("<h3>Provenance</h3>")
    facts = [("suite commit", ", ".join(prov["suite_commit"]) or
              "not recorded (runs before the suite recorded it)"),
             ("MPI", ", ".join(prov["mpi"]) or "not recorded"),
             ("Spack environment lock (SHA-256)", ", ".join(prov.get("spack_lock", [])) or
              "none: no test case of these runs took its binaries from a Spack environment"),
             ("OSU", ", ".join(prov["benchmarks"].get("OSU", [])) or "not run"),
             ("IMB", ", ".join(prov["benchmarks"].get("IMB", [])) or "not run"),
             ("NIC driver and firmware", "; ".join(prov["nic"]) or
              "not recorded: the pre-flight checks of these runs print neither")]
    out.append(_table(["what", "value"], [[_e(k), _e(v)] for k, v in facts]))
    if prov["sessions"]:
        out.append(_table(["session", "started", "host", "ReFrame", "command"],
                          [[_e(s["session"]), _e(s["start"]), _e(s["host"]), _e(s["reframe"]),
                            _e(s["command"])] for s in prov["sessions"]]))
    for ref in prov["references"]:
        same = ref.get("same_as_run")
        said = ("the file the run loaded" if same else "CHANGED since the run" if same is False
                else "the run did not record which file it loaded")
        used = ", ".join(str(h)[:16] + "..." for h in ref.get("recorded_sha256") or [])
        out.append(f"<p>References the run was judged with on {_e(ref['system'])}: "
                   f"{_e('sha256 ' + used if used else 'not recorded')}; every figure on this "
                   "page is judged against the bounds recorded with it in the run report. "
                   f"Today's <code>{_e(ref['file'])}</code>: sha256 "
                   f"{_e(str(ref.get('sha256', '-'))[:16])}..., {_e(said)}"
                   f"{' ' + _e(ref['problem']) if ref.get('problem') else ''}</p>")
        if ref.get("provenance"):
            out.append(_table(["test", "document", "table", "measured by", "note"],
                              [[_e(p["test"]), _e(p.get("document")), _e(p.get("table")),
                                _e(p.get("measured_by")),
                                _e(p.get("loose") or p.get("note") or "")]
                               for p in ref["provenance"]]))
    return "\n".join(out)


def page(*, title: str, sources: Sequence[str], verdict: Verdict, history: list[dict],
         history_note: str, provenance: dict, images: list[tuple[str, bytes]]) -> str:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    stages = {s.number: s.to_dict() for s in verdict.stages}
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="note">Generated {now} from {_e(", ".join(sources))}. Everything on '
            "this page is in this file: no fonts, scripts or styles are fetched. The JSON twin "
            "(acceptance.json) holds the same.</p>",
            banner(verdict),
            stage1_section(stages[1]), stage2_section(stages[2], images),
            stage3_section(stages[3]), context_section(history, provenance, history_note),
            '<h2>How the verdict is made</h2><p class="note">ACCEPTED only when every stage '
            "passed: stage 1 every node's every check, stage 2 every figure within its "
            "reference band and every test case passed (nothing is called failed without "
            "evidence: a reference band or ReFrame's verdict), stage 3 no link down and no "
            "error counter over its threshold over the whole run. A stage with nothing to "
            "judge is unjudged, never a pass. Named elements: what the failures share "
            "(node, link, switch, uplink, group pair). docs/report.md, \"The acceptance "
            "page\".</p>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def image_files(outdir: Path, names: Sequence[str]) -> list[tuple[str, bytes]]:
    return [(n, (outdir / n).read_bytes()) for n in names]

"""The acceptance page: one HTML file, in the order a person signs it: the verdict; every
failure and everything missing, stage by stage; the counts per check and node set with one
compact chart; then every row, folded (``<details>``); then the context.

It is built for a centre's size: what comes before the failures does not grow with the nodes
(the chart is one image of a fixed size, a dot per figure, after the failures), each table
holds at most MAX_ROWS rows (the JSON twin holds them all) and failing rows are never among
those cut. Offline like ``fabric-report html``: inline CSS, no scripts, fonts or external
URLs, so the one file can be mailed; a print stylesheet lays it out for a browser's "print to
PDF" (A4, colours kept, no row split across pages; folded rows are not printed).
"""

from __future__ import annotations

import base64
import datetime as _dt
from collections import Counter
from collections.abc import Sequence

from fabrictest.report.acceptance.verdict import TITLES, Verdict
from fabrictest.report.page.markup import escape as _e
from fabrictest.report.page.plots import ratio_strip
from fabrictest.report.records.units import fmt

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
details{margin:.4em 0}summary{cursor:pointer;font-weight:bold}.ok{color:#1b5e20}
@page{size:A4;margin:12mm}
@media print{body{max-width:none;margin:0;font-size:9pt}h2{break-after:avoid}
tr,img,.banner{break-inside:avoid}thead{display:table-header-group}details{display:none}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
"""

MAX_ROWS = 300


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


def _int(n: int) -> str:
    return f"<td class=num>{n:,}</td>"


def _pct(ratio) -> str:
    return "-" if ratio is None else f"{100 * (ratio - 1):+.1f}%"


def _gaps(stage: dict) -> str:
    if not stage["gaps"]:
        return ""
    return ("<p><b>Not judged:</b></p><ul>" + "".join(f"<li>{_e(g)}</li>"
                                                      for g in stage["gaps"]) + "</ul>")


def _head(stage: dict) -> str:
    n = stage["stage"]
    return (f'<h3 id="stage{n}">Stage {n}: {_e(TITLES[n])} {_st(stage["status"])}</h3>'
            f"<p>{_e(stage['summary'])}</p>")


#: named elements listed in the banner; the rest are counted there and listed below it
BANNER_ITEMS = 40


def banner(v: Verdict) -> str:
    word = "ACCEPTED" if v.accepted else "NOT ACCEPTED"
    items = [f"<li><b>{_e(el['label'])}</b>"
             f"{' (a weak suspect: also in passing cases)' if el['weak'] else ''}: "
             + "; ".join(_e(x) for x in el["evidence"][:2])
             + (f" (and {len(el['evidence']) - 2} more in the stages below)"
                if len(el["evidence"]) > 2 else "")
             + "</li>" for el in v.elements[:BANNER_ITEMS]]
    if len(v.elements) > BANNER_ITEMS:
        items.append(f"<li>and {len(v.elements) - BANNER_ITEMS} more elements: "
                     '<a href="#failures">the failures below</a>, the JSON twin</li>')
    for s in v.stages:
        if s.status in ("incomplete", "unjudged"):
            why = "; ".join(s.gaps[:3]) or s.summary
            more = f" (and {len(s.gaps) - 3} more below)" if len(s.gaps) > 3 else ""
            items.append(f"<li>stage {s.number} ({_e(s.title)}) {_e(s.status)}: {_e(why)}"
                         f"{_e(more)}</li>")
    lines = "<ul>" + "".join(items) + "</ul>" if items else ""
    rows = [[f"<a href=\"#stage{s.number}\">stage {s.number}</a>", _e(s.title), _st(s.status),
             _e(s.summary)] for s in v.stages]
    return (f'<div class="banner {"accepted" if v.accepted else "rejected"}">'
            f'<div class="word">{word}</div>{lines}</div>'
            + _table(["stage", "", "status", "what was judged"], rows))


# --- failures and what is missing, per stage ----------------------------------------------

def _nothing(n: int) -> str:
    return f'<p class="ok">Stage {n}: nothing failed, nothing missing.</p>'


def _check_rows(rows: Sequence[dict]) -> list[list[str]]:
    return [[_e(r["node"]), _e(r["nic"]), _e(r["check"]),
             "PASS" if r["ok"] else "<b>FAIL</b>", _e(r["found"]), _e(r["expected"]),
             _e(r["source"])] for r in rows]


_CHECK_HEAD = ["node", "NIC/port", "check", "result", "found", "expected", "from"]


def stage1_failures(st: dict) -> str:
    bad = [r for r in st["rows"] if not r["ok"]]
    named = {r["node"] for r in bad}
    others = [f for f in st["findings"] if f["name"] not in named]  # no device, a crash
    if not bad and not others and not st["gaps"]:
        return _nothing(1)
    out = [_head(st)]
    if bad:
        out.append(_table(_CHECK_HEAD, _check_rows(bad), ["fail"] * len(bad)))
    if others:
        out.append("<ul>" + "".join(f"<li>{_e(f['evidence'])}</li>" for f in others)
                   + "</ul>")
    return "\n".join(out) + _gaps(st)


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


_FIGURE_HEAD = ["set", "test", "nodes", "figure", "value", "unit", "reference", "band",
                "ratio", "result"]


def _short_nodes(nodes: Sequence[str], at_most: int = 12) -> str:
    return ", ".join(nodes[:at_most]) + (f" and {len(nodes) - at_most} more"
                                         if len(nodes) > at_most else "")


def stage2_failures(st: dict) -> str:
    failing = [r for r in st["figures"] if r["failing"]]
    impact = [x for x in st["impact"] if x["status"] == "fail"]
    sweeps = [sw for sw in st["sweeps"] if sw["healthy"] is not True or sw["drain"]]
    if not (failing or st["failed_cases"] or impact or sweeps or st["left_out"]
            or st["gaps"] or st["findings"]):
        return _nothing(2)
    out = [_head(st)]
    if st["left_out"]:
        out.append("<p>Left out of the performance stage by stage 1: " + "; ".join(
            f"{_e(x['node'])} ({_e(x['why'])})" for x in st["left_out"]) + "</p>")
    for sw in sweeps:
        out.append(f"<p><b>Node-pair sweep {_e(sw['label'])}:</b></p><pre>"
                   + _e("\n".join(sw["verdict"]) or "no verdict lines") + "</pre>")
        if sw["drain"]:
            out.append("<p>Nodes <code>fabric-sweep --drain</code> takes out: "
                       + _e(", ".join(sw["drain"])) + "</p>")
    if st["failed_cases"]:
        out.append("<p><b>Failed test cases</b></p>")
        out.append(_table(["test", "set", "nodes", "failing links", "ReFrame's reason"],
                          [[_e(c["test"]), _e(c["set"]), _e(_short_nodes(c["nodes"])),
                            _e(", ".join(c["failing_links"])), _e(c["reason"])]
                           for c in st["failed_cases"]], ["fail"] * len(st["failed_cases"])))
    if st["attribution"]:
        out.append("<p>What the failures share (fabric-report attribute):</p><pre>"
                   + _e("\n".join(st["attribution"])) + "</pre>")
    if failing:
        rows, classes = _figure_rows(failing)
        out.append(f"<p><b>{len(failing)} figures outside their reference band</b></p>")
        out.append(_table(_FIGURE_HEAD, rows, classes))
    if impact:
        out.append(_impact_table(impact))
    return "\n".join(out) + _gaps(st)


def _node_rows(nodes: Sequence[dict]) -> tuple[list, list]:
    return ([[_e(f"{n['system']}:{n['node']}"), _num(n["tests"]), _e(n["changed"] or "none"),
              _e("; ".join(n["failures"] + n["unread"]) or "ok")] for n in nodes],
            ["fail" if n["failures"] else "incomplete" if n["unread"] else "" for n in nodes])


_NODE_HEAD = ["node", "tests", "changed over the run", "verdict"]


def stage3_failures(st: dict) -> str:
    bad = [n for n in st["nodes"] if n["failures"] or n["unread"]]
    cong = [c for c in st["congestion"] if c["failing"]]
    if not bad and not cong and not st["gaps"]:
        return _nothing(3)
    out = [_head(st)]
    if bad:
        out.append(_table(_NODE_HEAD, *_node_rows(bad)))
    if cong:
        out.append(_congestion_table(cong))
    return "\n".join(out) + _gaps(st)


# --- counts per check, node set and node ----------------------------------------------------

def stage1_counts(st: dict) -> str:
    by: dict[str, list[int]] = {}
    for r in st["rows"]:
        by.setdefault(r["check"], [0, 0])[0 if r["ok"] else 1] += 1
    if not by:
        return ""
    return ("<h3>Stage 1: per check</h3>"
            + _table(["check", "passed", "failed"],
                     [[_e(c), _int(p), _int(f)] for c, (p, f) in sorted(by.items())],
                     ["fail" if f else "" for _, (_p, f) in sorted(by.items())]))


def stage2_counts(st: dict) -> str:
    out = []
    if st["sets"]:
        out.append("<h3>Stage 2: per node set</h3><p class=note>edge: one switch; local: one "
                   "group; global: across groups (the Slingshot acceptance notes' scopes); "
                   "ratio = figure / reference.</p>")
        out.append(_table(["set", "figures", "outside band", "lowest ratio", "highest ratio",
                           "farthest from 1"],
                          [[_e(s["set"]), _int(s["figures"]), _int(s["failing"]),
                            f"<td class=num>{s['min_ratio']:.3f}</td>",
                            f"<td class=num>{s['max_ratio']:.3f}</td>",
                            _e(f"{s['worst']} ({s['worst_ratio']:.3f})")] for s in st["sets"]],
                          ["fail" if s["failing"] else "" for s in st["sets"]]))
    if st["figures"]:
        from fabrictest.report.acceptance.stage2 import SETS

        png = ratio_strip(st["figures"], SETS)
        out.append(f'<img alt="every figure\'s ratio to its reference, per node set" '
                   f'src="data:image/png;base64,{base64.b64encode(png).decode()}">')
    if st["impact"]:
        out.append(_impact_table(st["impact"]))
    for sw in st["sweeps"]:
        out.append(f"<p>Node-pair sweep {_e(sw['label'])}: {_e(sw['nodes'])} nodes; "
                   + _e("; ".join(sw["verdict"][:3]) or "no verdict lines") + "</p>")
    if st["informational"]:
        out.append(f"<p class=note>Informational (no reference needed): "
                   f"{_e(', '.join(st['informational'][:40]))}"
                   f"{' ...' if len(st['informational']) > 40 else ''}</p>")
    return "\n".join(out)


def stage3_counts(st: dict) -> str:
    if not st["nodes"]:
        return ""
    changed: Counter[str] = Counter()
    for n in st["nodes"]:
        for part in (n["changed"] or "").split(", "):
            if part:
                changed[part.rsplit(" +", 1)[0]] += 1
    failing = sum(bool(n["failures"]) for n in st["nodes"])
    unread = sum(bool(n["unread"]) for n in st["nodes"])
    return ("<h3>Stage 3: per node and counter</h3>"
            f"<p>{len(st['nodes'])} nodes read: {failing} failing, {unread} with a counter "
            "not read. Each node from its first counter snapshot (before any test) to its "
            "last (after the last test), and between two tests, when no test was looking "
            "(docs/counters.md).</p>"
            + (_table(["counter", "nodes where it changed"],
                      [[_e(k), _int(v)] for k, v in sorted(changed.items())])
               if changed else ""))


def _impact_table(impact: Sequence[dict]) -> str:
    return ("<p><b>Congestion impact</b> <span class=note>(victim isolated and beside the "
            "aggressors; impact above 1 is worse under load)</span></p>"
            + _table(["test", "probe", "isolated", "loaded", "impact", "band", "status"],
                     [[_e(x["test"]), _e(x["probe"]), _num(x["isolated"]),
                       _num(x["loaded"]), _num(x["impact"]),
                       _e(f"{fmt(x['band'][0])} .. {fmt(x['band'][1])}"),
                       _e(x["status"])] for x in impact],
                     ["fail" if x["status"] == "fail" else "" for x in impact]))


def _congestion_table(rows: Sequence[dict]) -> str:
    return ("<p><b>Congestion counters per node and test</b></p>"
            + _table(["node", "counter", "test", "increase", "at most"],
                     [[_e(c["node"]), _e(c["counter"]), _e(c["test"]), _num(c["value"]),
                       _num(c["limit"])] for c in rows],
                     ["fail" if c["failing"] else "" for c in rows]))


# --- every row, folded ----------------------------------------------------------------------

def _folded(title: str, n: int, body: str) -> str:
    if not n:
        return ""
    shown = f"the first {MAX_ROWS} of {n}" if n > MAX_ROWS else f"{n}"
    return f"<details><summary>{_e(title)}: {shown} rows</summary>{body}</details>"


def every_row(stages: dict[int, dict]) -> str:
    s1, s2, s3 = stages[1], stages[2], stages[3]
    rows1 = sorted(s1["rows"], key=lambda r: (r["ok"], r["node"], r["nic"], r["check"]))
    figs = sorted(s2["figures"], key=lambda r: not r["failing"])  # stable: sets kept
    nodes = sorted(s3["nodes"], key=lambda n: (not n["failures"], not n["unread"]))
    rows, classes = _figure_rows(figs[:MAX_ROWS])
    parts = [
        _folded("Stage 1, one row per node and check (fabric-health, docs/health.md)",
                len(rows1), _table(_CHECK_HEAD, _check_rows(rows1[:MAX_ROWS]),
                                   ["" if r["ok"] else "fail" for r in rows1])
                + _more(len(rows1))),
        _folded("Stage 2, every figure against its reference", len(figs),
                _table(_FIGURE_HEAD, rows, classes) + _more(len(figs))),
        _folded("Stage 3, every node's counters over the run", len(nodes),
                _table(_NODE_HEAD, *_node_rows(nodes[:MAX_ROWS])) + _more(len(nodes))),
        _folded("Stage 3, congestion counters per node and test", len(s3["congestion"]),
                _congestion_table(sorted(s3["congestion"], key=lambda c: not c["failing"])
                                  [:MAX_ROWS]) + _more(len(s3["congestion"]))),
    ]
    body = "".join(parts)
    return ('<h2 id="rows">Every row (folded; failing rows first)</h2>' + body) if body else ""


def _more(n: int) -> str:
    return (f'<p class="note">{n - MAX_ROWS} more rows in the JSON twin.</p>'
            if n > MAX_ROWS else "")


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
         history_note: str, provenance: dict) -> str:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    stages = {s.number: s.to_dict() for s in verdict.stages}
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="note">Generated {now} from {_e(", ".join(sources))}. Everything on '
            "this page is in this file: no fonts, scripts or styles are fetched. The JSON twin "
            "(acceptance.json) holds the same, every row.</p>",
            banner(verdict),
            '<h2 id="failures">Failures and what is missing</h2>',
            stage1_failures(stages[1]), stage2_failures(stages[2]),
            stage3_failures(stages[3]),
            '<h2 id="counts">Per check, node set and node</h2>',
            stage1_counts(stages[1]), stage2_counts(stages[2]), stage3_counts(stages[3]),
            every_row(stages),
            context_section(history, provenance, history_note),
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
            + "\n".join(b for b in body if b) + "\n</body></html>\n")

"""The acceptance page: one HTML file, in the order a person signs it: the verdict; every
failure and everything missing, stage by stage; how the verdict is made; the counts per check
and node set with one compact chart; then every row, folded (``<details>``); then the context.

It is built for a centre's size: what comes before the failures does not grow with the nodes
(the chart is one image of a fixed size, a dot per figure, after the failures), each table
holds at most MAX_ROWS rows (the JSON twin lists every failing one and counts the passing
ones) and failing rows are never among those cut. Offline like ``fabric-report html``: inline CSS, no scripts, fonts or external
URLs, so the one file can be mailed; a print stylesheet lays it out for a browser's "print to
PDF" (A4, colours kept, no row split across pages; folded rows are not printed).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

from fabrictest.report.acceptance.page_counts import (
    context_section,
    every_row,
    stage1_counts,
    stage2_counts,
    stage3_counts,
)
from fabrictest.report.acceptance.page_tables import CHECK_HEAD as _CHECK_HEAD
from fabrictest.report.acceptance.page_tables import FIGURE_HEAD as _FIGURE_HEAD
from fabrictest.report.acceptance.page_tables import NODE_HEAD as _NODE_HEAD
from fabrictest.report.acceptance.page_tables import check_rows as _check_rows
from fabrictest.report.acceptance.page_tables import congestion_table as _congestion_table
from fabrictest.report.acceptance.page_tables import figure_rows as _figure_rows
from fabrictest.report.acceptance.page_tables import impact_table as _impact_table
from fabrictest.report.acceptance.page_tables import node_rows as _node_rows
from fabrictest.report.acceptance.page_tables import short_nodes as _short_nodes
from fabrictest.report.acceptance.page_tables import status_word as _st
from fabrictest.report.acceptance.page_tables import table as _table
from fabrictest.report.acceptance.verdict import TITLES, Verdict
from fabrictest.report.page.markup import escape as _e

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


#: after the failures, before the tables: what each stage checks and what each word means
HOW = ('<h2 id="how">How the verdict is made</h2><p class="note">'
       "<b>Stage 1</b>, pre-flight health: every node's every fabric-health check (port state, "
       "rate, MTU, GIDs, MAC, address, names, LLDP neighbour, loopback). <b>Stage 2</b>, "
       "performance: this page judges every figure itself, against the band recorded with "
       "the run (the references' bounds when it ran, kept in the run report, not today's "
       "file); a figure outside it, a failed test case, or ReFrame's result disagreeing with "
       "the page's count fails; every node set the topology makes of the run's nodes must "
       "have figures, and the node-pair sweep names slow nodes. <b>Stage 3</b>, counters and "
       "flaps: every node's counters from before the first test to after the last: no link "
       "down, no error counter over its threshold. A stage <b>FAILS</b> when it names an "
       "element (node, link, switch, uplink, group pair, test): NOT ACCEPTED, naming it. It "
       "is <b>INCOMPLETE</b> when something it should judge is missing or could not be judged "
       "(a node without a check or counters, a test case without figures, a figure without a "
       "reference, a figure earlier sessions measured) and nothing failed, and "
       "<b>UNJUDGED</b> with nothing to judge: NOT ACCEPTED too, never a pass. ACCEPTED only "
       "when all three stages PASS. Nothing is called failed without evidence (a band or "
       "ReFrame's verdict). docs/report.md, \"The acceptance page\".</p>")


# --- counts per check, node set and node ----------------------------------------------------

def page(*, title: str, sources: Sequence[str], verdict: Verdict, history: list[dict],
         history_note: str, provenance: dict,
         absent: tuple[list[dict], bool] = ([], False)) -> str:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    stages = {s.number: s.to_dict() for s in verdict.stages}
    body = [f"<h1>{_e(title)}</h1>",
            f'<p class="note">Generated {now} from {_e(", ".join(sources))}. Everything on '
            "this page is in this file: no fonts, scripts or styles are fetched. The JSON twin "
            "(acceptance.json) holds every failure and everything missing in full and counts the "
            "passing rows.</p>",
            banner(verdict),
            '<h2 id="failures">Failures and what is missing</h2>',
            stage1_failures(stages[1]), stage2_failures(stages[2]),
            stage3_failures(stages[3]),
            HOW,
            '<h2 id="counts">Per check, node set and node</h2>',
            stage1_counts(stages[1]), stage2_counts(stages[2]), stage3_counts(stages[3]),
            every_row(stages),
            context_section(history, provenance, history_note, absent)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(b for b in body if b) + "\n</body></html>\n")

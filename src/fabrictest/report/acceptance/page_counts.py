"""The acceptance page below the failures: the counts per check and node set (with the one
compact chart), every row folded (``<details>``), and the context (history, provenance)."""

from __future__ import annotations

import base64
from collections import Counter

from fabrictest.report.acceptance.page_tables import CHECK_HEAD as _CHECK_HEAD
from fabrictest.report.acceptance.page_tables import FIGURE_HEAD as _FIGURE_HEAD
from fabrictest.report.acceptance.page_tables import MAX_ROWS
from fabrictest.report.acceptance.page_tables import NODE_HEAD as _NODE_HEAD
from fabrictest.report.acceptance.page_tables import check_rows as _check_rows
from fabrictest.report.acceptance.page_tables import congestion_table as _congestion_table
from fabrictest.report.acceptance.page_tables import figure_rows as _figure_rows
from fabrictest.report.acceptance.page_tables import impact_table as _impact_table
from fabrictest.report.acceptance.page_tables import int_cell as _int
from fabrictest.report.acceptance.page_tables import node_rows as _node_rows
from fabrictest.report.acceptance.page_tables import num_cell as _num
from fabrictest.report.acceptance.page_tables import table as _table
from fabrictest.report.page.markup import escape as _e


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
        from fabrictest.report.page.plots import ratio_strip  # matplotlib: only for a page

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
    return (f'<p class="note">{n - MAX_ROWS} more rows: the JSON twin lists every failing '
            "one and counts the passing ones.</p>" if n > MAX_ROWS else "")


def absent_table(absent: list[dict], allowed: bool) -> str:
    """The figures the history's sessions measured and the run did not (``.absent``)."""
    if not absent:
        return ""
    why = ("listed, allowed by --allow-missing" if allowed else
           "missing evidence: stage 2 is incomplete (--allow-missing accepts)")
    return (f"<h3>Measured before, not in this run</h3><p class=note>{len(absent)} figures of "
            f"earlier sessions that this run did not measure: {_e(why)}.</p>"
            + _table(["test", "figure", "unit", "sessions", "last measured in"],
                     [[_e(a["test"]), _e(a["figure"]), _e(a["unit"]), _int(a["sessions"]),
                       _e(str(a["last_session"])[:8])] for a in absent[:MAX_ROWS]],
                     ["" if allowed else "incomplete"] * min(len(absent), MAX_ROWS))
            + _more(len(absent)))


def context_section(history: list[dict], prov: dict, history_note: str,
                    absent: tuple[list[dict], bool] = ([], False)) -> str:
    out = ['<h2 id="context">Context (changes the verdict only by what it says is '
           "missing)</h2>",
           "<h3>History of the headline figures</h3>", f"<p class=note>{_e(history_note)}</p>",
           absent_table(*absent)]
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
    return "\n".join(b for b in out if b)

"""``fabric-report compare`` and ``history`` on run reports written here (the builder of
tests/report/_reports.py: one TxRxTest figure per session, an hour apart), each fed one
fault, in this process."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from report._reports import fabric_report, report

from .cell import Cell, failed, na, passed, quote

FIGURE = "stream_gbps"
LEVEL = 0.19
JITTER = (1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001)  # a quiet link's spread

NO_COUNTERS = ("it reads figures of run reports, no counter: a {what} fails the test that "
               "saw it (the families' and the counters verdict's cells), whose figures then "
               "are missing (the lost-records cell)")
NA_BOTH = {
    "link_down": NO_COUNTERS.format(what="link down"),
    "flap": NO_COUNTERS.format(what="flap"),
    "error_burst": NO_COUNTERS.format(what="burst of errors"),
    "saturated": NO_COUNTERS.format(what="saturated counter"),
    "hung_tool": "it runs no tool: it reads run reports and perflogs already written",
    "missing_tool": "it runs no tool: it reads run reports and perflogs already written",
}


def _sessions(values, test="TxRxTest %scenario=paired", prefix="0000", system="sys", start=0):
    """Sessions `start`, `start` + 1, ... (each its own UUID and hour)."""
    docs = []
    for i, v in enumerate(values, start):
        doc = report(i, {FIGURE: (v, "Gbps")}, prefix=prefix, test=test)
        for tc in doc["runs"][0]["testcases"]:
            tc["system"] = system
            tc["perfvalues"] = {k.replace("sys:", f"{system}:", 1): pv
                                for k, pv in tc["perfvalues"].items()}
        docs.append(doc)
    return docs


def _write(d: Path, name: str, docs: list[dict]) -> str:
    d.mkdir(parents=True, exist_ok=True)
    for i, doc in enumerate(docs):
        (d / f"{name}-{i:05d}.json").write_text(json.dumps(doc))
    return str(d / f"{name}-*.json")


def _said(rc: int, out: str, err: str) -> str:
    lines = [x for x in out.splitlines() if x.strip()]
    # notes (compare's runs a side, say) come before the verdict: the cell quotes the verdict
    err = "\n".join(x for x in err.splitlines() if not x.startswith("fabric-report: note: "))
    return f"exit {rc}: " + (quote(err) if err.strip() else quote(lines[-1] if lines else ""))


def _cell(rc, out, err, *names) -> Cell:
    said = _said(rc, out, err)
    if rc == 0:
        return passed(said)
    row = next((x for x in out.splitlines() if FIGURE in x and "status" not in x), "")
    if names and not any(n in said for n in names) and row:
        said += " | " + quote(" ".join(row.split()))
    return failed(said, *names)


def compare_cells() -> dict[str, Cell]:
    out = {f: na(why) for f, why in NA_BOTH.items()}
    with tempfile.TemporaryDirectory(prefix="fault-matrix-compare-") as tmp:
        d = Path(tmp)
        base = _write(d / "base", "base", _sessions([LEVEL * j for j in JITTER[:3]]))

        def against(name, docs, *names, glob=None):
            target = glob or _write(d / name, name, docs)
            out[name] = _cell(*fabric_report("compare", "--report", base, "--report", target),
                              *names)

        def target(factor=1.0, **kw):
            return _sessions([LEVEL * factor * j for j in JITTER[3:6]], prefix="1111", **kw)

        against("healthy", target())
        against("bw_0_5", target(0.5), FIGURE)
        against("bw_0_85", target(0.85), FIGURE)
        against("other_benchmark", target(test="OsuPt2PtTest %benchmark=osu_bw"))
        against("stale_foreign", target(system="cori"))
        lost = target()
        lost[0]["runs"][0]["testcases"][0]["perfvalues"] = {}
        for doc in lost[1:]:
            doc["runs"][0]["testcases"] = []
        against("lost_records", lost)
        docs = target()
        against("doubled", docs + [docs[0]])
        cut = d / "cut"
        cut.mkdir()
        (cut / "t-0.json").write_text(json.dumps(target()[0])[:200])
        against("truncated", [], glob=str(cut / "t-*.json"))
        against("empty_selection", [], glob=str(d / "none" / "t-*.json"))
        parts = {}
        for label, v in (("nan", math.nan), ("inf", math.inf), ("negative", -LEVEL)):
            docs = target()
            docs[1]["runs"][0]["testcases"][0]["perfvalues"][f"sys:default:{FIGURE}"][0] = v
            against(f"nonfinite:{label}", docs)
            parts[label] = out.pop(f"nonfinite:{label}")
    out["nonfinite"] = _joined(parts)
    return out


def _joined(parts: dict[str, Cell]) -> Cell:
    ok = [label for label, c in parts.items() if c.outcome != "FAIL"]
    if ok:
        return passed(f"{' and '.join(ok)}: {parts[ok[0]].text}")
    return failed("; ".join(f"{label}: {c.text}" for label, c in parts.items()))


def history_cells() -> dict[str, Cell]:
    out = {f: na(why) for f, why in NA_BOTH.items()}
    steady = [LEVEL * JITTER[i % len(JITTER)] for i in range(20)]
    with tempfile.TemporaryDirectory(prefix="fault-matrix-history-") as tmp:
        d = Path(tmp)

        def run(name, docs, *names, glob=None):
            out[name] = _cell(*fabric_report("history", "--report",
                                             glob or _write(d / name, "run", docs)), *names)

        run("healthy", _sessions(steady))
        run("bw_0_5", _sessions(steady[:12] + [v * 0.5 for v in steady[12:]]), FIGURE)
        run("bw_0_85", _sessions(steady[:12] + [v * 0.85 for v in steady[12:]]), FIGURE)
        docs = _sessions(steady)
        run("doubled", docs + [docs[5]])
        docs = _sessions(steady)
        for doc in docs[12:]:
            doc["runs"][0]["testcases"] = []
        run("lost_records", docs, FIGURE)
        docs = _sessions(steady)
        docs[12:] = _sessions(steady[12:], system="cori", start=12)
        run("stale_foreign", docs, FIGURE)
        docs = _sessions(steady)
        docs[12:] = _sessions(steady[12:], test="OsuPt2PtTest %benchmark=osu_bw", start=12)
        run("other_benchmark", docs, FIGURE)
        cut = d / "cut"
        cut.mkdir()
        for i, doc in enumerate(_sessions(steady)):
            text = json.dumps(doc)
            (cut / f"run-{i:05d}.json").write_text(text[:200] if i == 7 else text)
        run("truncated", [], glob=str(cut / "run-*.json"))
        run("empty_selection", [], glob=str(d / "none" / "run-*.json"))
        parts = {}
        for label, v in (("nan", math.nan), ("inf", math.inf), ("negative", -LEVEL)):
            docs = _sessions(steady)
            docs[3]["runs"][0]["testcases"][0]["perfvalues"][f"sys:default:{FIGURE}"][0] = v
            run(f"nonfinite:{label}", docs)
            parts[label] = out.pop(f"nonfinite:{label}")
    out["nonfinite"] = _joined(parts)
    return out


__all__ = ["compare_cells", "history_cells"]

"""The context of an acceptance verdict, which does not change it: the history of the headline
figures, and where the run came from (the sessions, the suite's commit, the references file and
its provenance, the MPI, OSU and IMB versions, the NIC driver and firmware where recorded).

Headline figures are the stage-2 figures with a reference of their own (not the per-link or
per-node figures judged by a headline's reference). Their history is every session given as
history (stored sessions, or run reports), the acceptance run's own included, as ``fabric-report
history`` reads it (:mod:`fabrictest.report.history.figures`): with 10 sessions or more a figure gets its verdict on
levels and change points; with fewer it is shown and not judged.

The suite records what it can in every test case of the run report (the ReFrame plugin
``reframe_tests/fabric_provenance.py``): ``suite_commit`` (the checkout's commit, ``-dirty``
with local changes), ``mpi_version`` (the MPI compiler wrapper's version on the host ReFrame
ran from), ``reference_sha256`` (the references file the test loaded) and
``spack_lock_sha256`` (the Spack environment's lock on ``+spack`` partitions). OSU and IMB print
their own versions in their outputs. The NICs' driver and firmware are read from the pre-flight
output where its checks print them (``driver``/``firmware``/``fw_ver`` checks); the suite's own
checks do not yet, and the page says so.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from fabrictest import references
from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.imb import parse_imb
from fabrictest.parsers.osu import parse_osu
from fabrictest.report.acceptance.cases import read_output
from fabrictest.report.history import figures as hist
from fabrictest.report.records.node_names import NodeIndex
from fabrictest.report.records.results import PerfRecord, ResultsError
from fabrictest.report.records.units import UnitError

#: at most this many headline figures in the history table
MAX_HEADLINES = 60
_NIC_CHECKS = re.compile(r"^(driver|firmware|fw_ver|fw_version|nic_driver|nic_firmware)$")


def headline_keys(figure_rows: Sequence[dict], records: Sequence[PerfRecord]) -> list[tuple]:
    """(test, system, figure) of the stage-2 figures with a reference that name no node."""
    index = NodeIndex({n for r in records for n in r.nodes})
    keys: dict[tuple, None] = {}  # a set that keeps the figures' order
    for row in figure_rows:
        key = (row["test"], row["system"], row["figure"])
        if key not in keys and not index.names_any(row["figure"]):
            keys[key] = None
            if len(keys) == MAX_HEADLINES:
                break
    return list(keys)


def history_rows(keys: list[tuple], current: Sequence[PerfRecord],
                 past: Sequence[PerfRecord], sessions: Mapping[str, dict]) -> list[dict]:
    """One row per headline figure: its sessions, first, median and latest value, and
    history's verdict (``few`` under 10 sessions)."""
    wanted = set(keys)
    recs = [r for r in (*past, *current) if (r.test, r.sysenv, r.pvar) in wanted]
    if not recs:
        return []
    try:
        series = hist.series(recs, sessions)
    except (ResultsError, UnitError) as err:
        return [{"figure": "", "test": "", "note": f"history not read: {err}"}]
    out = []
    for h in series:
        h = hist.judge(h)
        vals = sorted(p.value for p in h.points)
        out.append({"test": h.test, "system": h.sysenv, "figure": h.pvar, "unit": h.unit,
                    "sessions": len(h.points), "first": h.points[0].value,
                    "median": vals[len(vals) // 2], "latest": h.points[-1].value,
                    "status": h.status, "note": h.note})
    order = {k: i for i, k in enumerate(keys)}
    return sorted(out, key=lambda r: order.get((r["test"], r["system"], r["figure"]), 0))


def _distinct(testcases: Sequence[dict], key: str) -> list[str]:
    return sorted({str(tc[key]) for tc in testcases if isinstance(tc.get(key), str)
                   and tc[key]})


def _versions(testcases: Sequence[dict]) -> dict[str, list[str]]:
    """OSU's and IMB's versions as their outputs print them."""
    found: dict[str, set[str]] = {"OSU": set(), "IMB": set()}
    for tc in testcases:
        name = str(tc.get("name") or "")
        parse, suite = ((parse_osu, "OSU") if name.startswith("Osu") else
                        (parse_imb, "IMB") if name.startswith("Imb") else (None, ""))
        if parse is None or tc.get("result") not in ("pass", "fail"):
            continue
        text, _why = read_output(tc)
        if text is None:
            continue
        try:
            version = parse(text).version
        except (ParseError, ValueError):
            continue
        if version:
            found[suite].add(version)
    return {k: sorted(v) for k, v in found.items()}


def _references(systems: Sequence[str], classes: Sequence[str], ref_option: str | None,
                recorded: Sequence[str]) -> list[dict]:
    out = []
    for system in systems:
        path = references.reference_file(system, "", ref_option)
        entry: dict = {"system": system, "file": str(path), "recorded_sha256": list(recorded)}
        try:
            data = Path(path).read_bytes()
        except OSError as err:
            entry["problem"] = f"cannot read {path}: {err.strerror or err}"
            out.append(entry)
            continue
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        if recorded:
            entry["same_as_run"] = entry["sha256"] in recorded
        try:
            ref = references.load(path, False, system=system)
        except (references.ReferenceError, OSError, ValueError) as err:
            entry["problem"] = f"{path}: {err}"
            out.append(entry)
            continue
        prov = []
        for name in classes:
            cls = ref.classes.get(name)
            block = cls.provenance.get(system) if cls else None
            if isinstance(block, Mapping):
                prov.append({"test": name, **{k: " ".join(str(block[k]).split())[:400]
                                              for k in ("document", "table", "measured_by",
                                                        "note", "loose", "informational")
                                              if block.get(k)}})
            else:
                prov.append({"test": name, "document": "no entry for this system"})
        entry["provenance"] = prov
        out.append(entry)
    return out


def nic_facts(stage1_rows: Sequence[dict]) -> list[str]:
    """Driver and firmware lines of the pre-flight output, where its checks print them."""
    return [f"{r['node']} {r['nic']} {r['check']}: {r['detail']}" for r in stage1_rows
            if _NIC_CHECKS.match(str(r.get("check") or ""))]


def provenance(sessions: Mapping[str, dict], testcases: Sequence[dict],
               records: Sequence[PerfRecord], stage1_rows: Sequence[dict],
               ref_option: str | None) -> dict:
    runs = []
    for uuid, info in sessions.items():
        runs.append({"session": uuid, "start": info.get("time_start"),
                     "host": info.get("hostname"), "reframe": info.get("version"),
                     "command": " ".join(str(info.get("cmdline") or "").split())[:300],
                     "workdir": info.get("workdir"),
                     "cases": info.get("num_cases"), "failures": info.get("num_failures")})
    systems = sorted({str(tc.get("system")) for tc in testcases if tc.get("system")})
    classes = sorted({r.base for r in records})
    return {
        "sessions": runs,
        "suite_commit": _distinct(testcases, "suite_commit"),
        "mpi": _distinct(testcases, "mpi_version"),
        "spack_lock": _distinct(testcases, "spack_lock_sha256"),
        "benchmarks": _versions(testcases),
        "references": _references(systems, classes, ref_option,
                                  _distinct(testcases, "reference_sha256")),
        "nic": nic_facts(stage1_rows),
    }

"""The output faults of every family, in-process: a recorded real output as the family's
benchmark printed it, then cut, doubled, replaced by another benchmark's, or with one figure
made NaN, infinite or negative, read by the family's parser with its ``missing()`` and
identity rules (the very calls the family's sanity makes; the parser plugins of
tests/variants.py hold them, with what the family asks of the whole output)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from parsers.test_nccl_variants import Nccl
from parsers.test_variants import Imb, Osu, Perftest, Txrx
from parsers.test_variants_gpcnet import Gpcnet
from parsers.test_variants_programs import AllToMany, Bisection, Congestion
from recordings import recordings
from variants import Accepted, Plugin, Refused

from fabrictest.parsers import ParseError
from fabrictest.parsers import health as health_parser

from .cell import UNTESTED, Cell, failed, na, passed

OUTPUT_FAULTS = ("healthy", "nonfinite", "truncated", "doubled", "other_benchmark")
HEALTH_LINES = "".join(
    f"HEALTH {n} hsn0/- mac: PASS found 02:00:00:00:00:0{i}, expected 02:00:00:00:00:0{i}\n"
    f"HEALTH {n} hsn0/- ip: PASS found 10.200.1.1{i}/24, expected an address in "
    f"10.200.1.0/24\nHEALTH summary: 2 checks, 0 failed\n" for i, n in enumerate(
        ("node01", "node02"), 1))


class Health(Plugin):
    """NicHealthTest's reading: every node's ``fabric-health`` lines and its summary."""

    name = "health"

    def context(self, text):
        return {"nodes": len(health_parser.parse_health(text).nodes())}

    def read(self, text, ctx):
        try:
            report = health_parser.parse_health(text)
        except ParseError as err:
            return Refused(str(err))
        problems = health_parser.missing(report, ctx["nodes"])
        return Refused("; ".join(problems)) if problems else Accepted({})


@dataclass(frozen=True)
class Output:
    plugin: Plugin
    recording: str  # its healthy output (a file of tests/recordings.py), or text itself
    other: str  # another benchmark's output, in its place
    figure: str = ""  # a regex of the line whose figure is made NaN (default: a table row)


OSU_BW, OSU_LAT = "osu_bw-7.4-ompi4.1-local.txt", "osu_latency-7.4-ompi4.1-local.txt"
A2M = "alltomany-cuda-device-ompi4.1-h100.txt"
BIS = "bisection_bw-cuda-device-ompi4.1-h100.txt"
NT = "gpcnet-network_test-1.3-ompi4.1-vcluster-2-nodes.txt"
NLT = "gpcnet-network_load_test-1.3-ompi4.1-vcluster-10-nodes.txt"

#: family -> its output; a family missing here has no output row of its own (OUTPUT_NA)
OUTPUTS: dict[str, Output] = {
    "AllToManyTest": Output(AllToMany(), A2M, BIS),
    "AllToManyScalingTest": Output(AllToMany(), "seed004-alltomany-4runs.txt", BIS),
    "BisectionTest": Output(Bisection(), BIS, A2M),
    "CongestionTest": Output(Congestion(), "congestion-incast-vcluster.txt",
                             "congestion-all-to-all-vcluster.txt", r"^phase isolated"),
    "GpcnetNetworkTest": Output(Gpcnet(), NT, NLT),
    "GpcnetLoadTest": Output(Gpcnet(), NLT, NT),
    "GpuExchangeTest": Output(AllToMany(), A2M, "txrx-cuda-ompi4.1-h100.txt"),
    "NicHealthTest": Output(Health(), HEALTH_LINES, OSU_BW),
    "ImbTest": Output(Imb(), "imb-2021.7-pingpong-ompi4.1-local.txt",
                      "imb-2021.7-uniband-ompi4.1-local.txt"),
    "NcclTest": Output(Nccl(), "nccl-all_reduce_perf-2nodes-16xh100-a3mega.txt",
                       "nccl-alltoall_perf-1rank-rtx5090-one-size.txt"),
    "OsuPt2PtTest": Output(Osu(), OSU_BW, OSU_LAT),
    "OsuMbwMrTest": Output(Osu(), "osu_mbw_mr-7.4-ompi4.1-local.txt", OSU_BW),
    "OsuGpuAwareTest": Output(Osu(), "osu_bw-7.4-cuda-DD-ompi4.1-h100.txt",
                              "osu_bibw-7.4-cuda-DD-ompi4.1-h100.txt"),
    "OsuCollectiveTest": Output(Osu(), "osu_allreduce-7.4-validation-float-ompi4.1-local.txt",
                                "osu_alltoall-7.4-validation-ompi4.1-local.txt"),
    "PerftestWriteBwTest": Output(Perftest(), "ib_write_bw-roce-uc-qp2-gbits.txt",
                                  "ib_send_bw-roce-cx4lx-mbsec-client.txt"),
    "TxRxTest": Output(Txrx(), "seed000-txrx-1pair.txt", OSU_BW, r"data rate is"),
}

#: families whose figures come from no tool output of their own, and why
OUTPUT_NA = {
    "SweepTest": "its figures are fabric-sweep's own verdict, read from the sweep's JSON: the "
                 "tools' outputs reach it through fabric-sweep (that row)",
}


def _text(name: str) -> str:
    if "\n" in name:
        return name
    (path,) = [p for p in recordings(name) if p.name == name]
    return path.read_text()


def _figure_line(plugin: Plugin, text: str, pattern: str = "") -> tuple[int, int, int] | None:
    """(line, start, end) of a figure half-way through the rows that print the most figures
    (a table's rows, not a count in a header), or the first figure of the first row whose
    line matches ``pattern``."""
    rows = [r for t in plugin.layout(text) for r in t.rows if r.figures]
    if not rows:
        return None
    lines = text.splitlines()
    if pattern:
        row = next(r for r in rows if re.search(pattern, lines[r.line]))
        return row.line, row.figures[0].start, row.figures[0].end
    widest = max(len(r.figures) for r in rows)
    rows = [r for r in rows if len(r.figures) == widest]
    row = rows[len(rows) // 2]
    fig = row.figures[-1]
    return row.line, fig.start, fig.end


def _edit(text: str, where: tuple[int, int, int], new: str) -> str:
    lines = text.splitlines(keepends=True)
    line, a, b = where
    lines[line] = lines[line][:a] + new + lines[line][b:]
    return "".join(lines)


def _cut(plugin: Plugin, text: str) -> str:
    """The output cut in the middle of a line half-way through its rows (a job killed at its
    time limit, a full disk)."""
    where = _figure_line(plugin, text)
    lines = text.splitlines(keepends=True)
    if where is None:
        return text[: len(text) // 2]
    line, start, _ = where
    return "".join(lines[:line]) + lines[line][:start]


def _judge(plugin, text, ctx, names=()) -> Cell:
    got = plugin.read(text, ctx)
    if isinstance(got, Refused):
        return failed(got.why, *names)
    return passed(f"read whole: {len(got.values)} figures")


def cells(family: str) -> dict[str, Cell]:
    """The family's cells of OUTPUT_FAULTS."""
    if family in OUTPUT_NA:  # (its healthy cell is its command's: build.py)
        return {f: na(OUTPUT_NA[family]) for f in OUTPUT_FAULTS}
    if family not in OUTPUTS:  # a new family: no evidence until its output is registered
        return {f: Cell(UNTESTED, f"no recorded output of {family} in tests/matrix/outputs.py "
                                  "OUTPUTS") for f in OUTPUT_FAULTS}
    out = OUTPUTS[family]
    text = _text(out.recording)
    ctx = out.plugin.context(text)
    cells = {"healthy": _judge(out.plugin, text, ctx),
             "truncated": _judge(out.plugin, _cut(out.plugin, text), ctx),
             "doubled": _judge(out.plugin, text + text, ctx),
             "other_benchmark": _judge(out.plugin, _text(out.other), ctx)}
    where = _figure_line(out.plugin, text, out.figure)
    if where is None:
        cells["nonfinite"] = na("its output has no figures: PASS/FAIL words per check")
        return cells
    line, a, b = where
    token = text.splitlines()[line][a:b]
    results = [(new, _judge(out.plugin, _edit(text, where, new), ctx))
               for new in ("nan", "inf", f"-{token}")]
    passing = [new for new, c in results if c.outcome != "FAIL"]
    if passing:
        cells["nonfinite"] = passed(f"{token} printed as {' and '.join(passing)}: read whole")
    else:
        cells["nonfinite"] = failed("; ".join(f"{new}: {c.text}" for new, c in results))
    return cells

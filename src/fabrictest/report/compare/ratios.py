"""The regression view: every figure with a reference as its ratio to that reference.

A ratio puts a 0.19 Gbps shaped link and a 20 Gbps shared-memory stream on one axis: 1 is the
reference, the band is [1 + lower, 1 + upper] (ReFrame's thresholds), a figure outside it is
failing. One row per test case, node set and figure (a per-stream figure names its link, a
per-node figure its node); with two sources each row also has the base's ratio (before) to
the same reference. Several sessions on a side: the median of their values.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fabrictest.references.model import band
from fabrictest.report.compare.rows import newest, unit_of
from fabrictest.report.records import units
from fabrictest.report.records.direction import HIGHER, LOWER, better
from fabrictest.report.records.node_names import NodeIndex
from fabrictest.report.records.outfiles import save_figure
from fabrictest.report.records.results import PerfRecord
from fabrictest.report.records.stats import spread

_PARAM_RE = re.compile(r"%(\w+=\S+)")


@dataclass
class RatioRow:
    test: str
    sysenv: str
    nodes: str
    pvar: str
    unit: str
    value: float
    ref: float
    lower: float | None
    upper: float | None
    before: float | None = None  # the base's value (two sources)
    result: str = ""  # ReFrame's verdict on the figure, when it gave one

    @property
    def ratio(self) -> float:
        return self.value / self.ref

    @property
    def before_ratio(self) -> float | None:
        return None if self.before is None else self.before / self.ref

    @property
    def band(self) -> tuple[float | None, float | None]:
        return band(1.0, self.lower, self.upper)

    @property
    def failing(self) -> bool:
        lo, hi = self.band
        return (lo is not None and self.ratio < lo) or (hi is not None and self.ratio > hi) \
            or self.result == "fail"

    @property
    def label(self) -> str:
        params = " ".join(_PARAM_RE.findall(self.test))
        head = self.test.split(" ")[0] + (f" {params}" if params else "")
        return f"{head} [{self.nodes}] {self.pvar}" if self.nodes else f"{head} {self.pvar}"


def _median(rs: Sequence[PerfRecord], unit: str) -> float | None:
    vals = [units.convert(r.value, r.unit, unit) for r in rs if r.value is not None]
    return spread(vals).median if vals else None


def ratio_rows(target: Sequence[PerfRecord], base: Sequence[PerfRecord] = ()) -> list[RatioRow]:
    """Rows for the target's figures that have a (non-zero) reference, in test order."""
    groups: dict[tuple, list[PerfRecord]] = defaultdict(list)
    for r in target:
        if r.ref and r.value is not None:
            groups[(r.test, r.sysenv, r.nodes_expr, r.pvar)].append(r)
    before: dict[tuple, list[PerfRecord]] = defaultdict(list)
    before_any: dict[tuple, list[PerfRecord]] = defaultdict(list)
    for r in base:
        before[(r.test, r.sysenv, r.nodes_expr, r.pvar)].append(r)
        before_any[(r.test, r.sysenv, r.pvar)].append(r)
    rows = []
    for key, rs in sorted(groups.items()):
        last = newest(rs)
        b = before.get(key) or before_any.get((key[0], key[1], key[3])) or []
        unit = unit_of(b, rs)  # the newest target record's; refused across dimensions
        rows.append(RatioRow(
            test=key[0], sysenv=key[1], nodes=key[2], pvar=key[3], unit=unit,
            value=_median(rs, unit), ref=units.convert(last.ref, last.unit, unit),
            lower=last.lower, upper=last.upper, before=_median(b, unit),
            result="fail" if any(r.result == "fail" for r in rs) else "",
        ))
    return rows


#: band edges farther than this from 1 do not widen the axis: a loose band (a lower bound of
#: -99 %, an upper one of +999x) would squash every healthy point into one pixel at 1. Such a
#: band is drawn to the axis edge, with an arrow saying it goes on.
BAND_VIEW = (0.25, 4.0)
#: ticks by importance: 1 first, then the ones a person reads a drop or a rise against
TICKS = (1, 0.5, 2, 0.1, 10, 0.01, 100, 0.9, 1.1, 0.2, 5, 0.8, 1.25, 0.05, 20, 0.02, 50,
         0.95, 1.05, 0.3, 3, 1.5, 0.7, 0.001, 1000)
#: the nearest two tick labels may be, as a fraction of the axis width (log scale)
TICK_GAP = 0.07


def _axis_limits(rows: Sequence[RatioRow]) -> tuple[float, float]:
    """The x range: every point (clamped to 1e-3..1e3), 0.8..1.25 at least, and the band
    edges within BAND_VIEW."""
    vals = [r.ratio for r in rows] + [r.before_ratio for r in rows if r.before_ratio]
    vals += [v for r in rows for v in r.band if v and BAND_VIEW[0] <= v <= BAND_VIEW[1]]
    vals = [v for v in vals if v > 0 and math.isfinite(v)]
    lo, hi = min(vals + [0.8]), max(vals + [1.25])
    return max(lo / 1.3, 1e-3), min(hi * 1.3, 1e3)


def ticks_for(lo: float, hi: float) -> list[float]:
    """Tick positions on a log axis from `lo` to `hi` whose labels do not run into each
    other: by importance (TICKS), each at least TICK_GAP of the axis width from the others."""
    width = math.log10(hi / lo)
    chosen: list[float] = []
    for t in TICKS:
        if lo <= t <= hi and all(abs(math.log10(t / c)) >= TICK_GAP * width for c in chosen):
            chosen.append(t)
    return sorted(chosen)


def ratio_plot(rows: Sequence[RatioRow], outdir: Path, per_image: int = 45,
               max_images: int = 6) -> list[dict]:
    """Horizontal ratio charts (log axis), failing test cases first: per row the reference
    band (shaded; an arrow at the edge where it goes on past the axis), the figure's ratio
    (red when failing) and the base's (hollow)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullFormatter

    if not rows:
        return []
    bad_cases = {(r.test, r.sysenv, r.nodes) for r in rows if r.failing}
    ordered = sorted(rows, key=lambda r: ((r.test, r.sysenv, r.nodes) not in bad_cases,
                                          r.test, r.sysenv, r.nodes, r.pvar))
    chunks = [ordered[i:i + per_image] for i in range(0, len(ordered), per_image)]
    out = []
    for n, chunk in enumerate(chunks[:max_images]):
        lo, hi = _axis_limits(chunk)
        fig, ax = plt.subplots(figsize=(11, 1.3 + 0.27 * len(chunk)))
        for y, r in enumerate(chunk):
            b_lo, b_hi = r.band
            left = lo if b_lo is None else min(max(b_lo, lo), hi)
            right = hi if b_hi is None else min(max(b_hi, lo), hi)
            ax.barh(y, right - left, left=left, height=0.7, color="#cfe8cf", lw=0)
            for edge, beyond, mark in ((lo, b_lo is not None and b_lo < lo, "<"),
                                       (hi, b_hi is not None and b_hi > hi, ">")):
                if beyond:  # a loose band: it goes on past the axis
                    ax.plot([edge], [y], mark, color="#5a9a5a", ms=4, clip_on=False)
            if r.before_ratio is not None:
                ax.plot([min(max(r.before_ratio, lo), hi)], [y], "o", mfc="white", mec="#555",
                        ms=5)
                ax.annotate("", (min(max(r.ratio, lo), hi), y),
                            (min(max(r.before_ratio, lo), hi), y),
                            arrowprops={"arrowstyle": "->", "color": "#888", "lw": 0.8})
            colour = "#c0392b" if r.failing else "#1f5fa8"
            ax.plot([min(max(r.ratio, lo), hi)], [y], "D" if r.failing else "o", color=colour,
                    ms=5, clip_on=False)
            ax.text(hi * 1.04, y, f" {r.value:.4g} / {r.ref:.4g} {r.unit}", va="center",
                    fontsize=7, color=colour)
        ax.axvline(1.0, color="black", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        ticks = ticks_for(lo, hi)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticklabels([f"{t:g}" for t in ticks], fontsize=7)
        ax.set_yticks(range(len(chunk)), [r.label for r in chunk], fontsize=7)
        ax.set_ylim(len(chunk) - 0.5, -0.5)
        ax.set_xlabel("figure / reference (log scale; green: the reference band, an arrow where "
                      "it goes on past the axis; red: failing; hollow -> filled: base -> "
                      "target)", fontsize=8)
        ax.grid(True, axis="x", alpha=0.3)
        fig.tight_layout()
        name = f"ratios-{n}.png"
        save_figure(fig, outdir / name, dpi=110, bbox_inches="tight")
        plt.close(fig)
        out.append({"png": name, "title": f"ratio to reference ({n + 1}/{len(chunks)})"})
    if len(chunks) > max_images:
        out[-1]["left_out"] = sum(len(c) for c in chunks[max_images:])
    return out


def per_node(rows: Sequence[RatioRow]) -> list[dict]:
    """Per node named in a figure (a link's or a node's figure, e.g. `node03->node01`,
    `node_node03_rx_gbps`, a sweep's `node03_send`): how many such figures, how many failing,
    and the worst ratio: the lowest for a figure better higher (a rate), the highest for one
    better lower (a time), the farthest from 1 either way for one with no better direction."""
    names = sorted({n for r in rows for n in _nodes_of(r)})
    index = NodeIndex(names)
    by_node: dict[str, list[RatioRow]] = {}
    for r in rows:
        for node in index.named(r.pvar):
            by_node.setdefault(node, []).append(r)
    out = []
    for node in names:
        mine = by_node.get(node)
        if not mine:
            continue
        worst = max(mine, key=_badness)
        out.append({"node": node, "figures": len(mine),
                    "failing": sum(r.failing for r in mine), "worst": worst})
    return out


def _badness(r: RatioRow) -> float:
    """How far a ratio is on its figure's bad side (log scale; the larger the worse)."""
    if r.ratio <= 0:
        return math.inf
    log = math.log(r.ratio)
    direction = better(r.unit, r.pvar)
    return -log if direction == HIGHER else log if direction == LOWER else abs(log)


def _nodes_of(r: RatioRow) -> list[str]:
    from fabrictest.parsers.errors import ParseError
    from fabrictest.parsers.hostlists import expand

    try:
        return expand(r.nodes, "node list") if r.nodes else []
    except ParseError:  # a node list we cannot expand: its parts, as written
        return r.nodes.split(",")


"""PNG plots (matplotlib, Agg backend: no display, no network, no web fonts)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import LinearSegmentedColormap  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from .direction import is_time  # noqa: E402
from .results import PerfRecord  # noqa: E402

SIZE_PARAMS = ("msg_size", "message_size", "size", "msgsize")
_SIZE_IN_NAME = re.compile(r"^(?P<metric>.*?)[_-](?P<size>\d+)(?P<suffix>[kKmM]?)[bB]?$")
_STREAM = re.compile(r"^rx(?P<rx>\d+)_tx(?P<tx>\d+)_gbps$")
_NODE = re.compile(r"^node(?P<n>\d+)_gbps$")
_PARAM_RE = re.compile(r"%(\w+=\S+)")
_SCALE = {"": 1, "k": 1024, "m": 1024 * 1024}
DPI = 110


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:80] or "plot"


def size_of(r: PerfRecord) -> tuple[int, str] | None:
    """(message size in bytes, metric name) when the record is one point of a size curve."""
    for p in SIZE_PARAMS:
        if p in r.params:
            try:
                return int(float(r.params[p])), r.pvar
            except ValueError:
                return None
    m = _SIZE_IN_NAME.match(r.pvar)
    if m and not _STREAM.match(r.pvar) and not _NODE.match(r.pvar):
        return int(m.group("size")) * _SCALE[m.group("suffix").lower()], m.group("metric")
    return None


def _other_params(r: PerfRecord) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(r.params.items()) if k not in SIZE_PARAMS)


def size_curves(records: Sequence[PerfRecord], outdir: Path) -> list[dict]:
    """Bandwidth and latency against message size, with the reference band; one PNG per
    test and system. Returns [{'png', 'title', 'series'}]."""
    groups: dict[tuple, dict[tuple, list[tuple[int, PerfRecord]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in records:
        s = size_of(r)
        if s is None or r.value is None:
            continue
        size, metric = s
        groups[(r.base, r.sysenv)][(_other_params(r), metric, r.unit)].append((size, r))
    out = []
    for (base, sysenv), series in sorted(groups.items()):
        series = {k: v for k, v in series.items() if len({s for s, _ in v}) >= 2}
        if not series:
            continue
        kinds = sorted({"latency" if is_time(u) else "bandwidth" for _p, _m, u in series})
        fig, axes = plt.subplots(1, len(kinds), figsize=(6.2 * len(kinds), 4.2), squeeze=False)
        for ax, kind in zip(axes[0], kinds, strict=True):
            for (params, metric, unit), pts in sorted(series.items()):
                if ("latency" if is_time(unit) else "bandwidth") != kind:
                    continue
                pts.sort(key=lambda p: p[0])
                xs = [p[0] for p in pts]
                ys = [p[1].value for p in pts]
                label = f"{metric} {params}".strip()
                (line,) = ax.plot(xs, ys, marker="o", ms=3, lw=1.4, label=label)
                lo = [p[1].band()[0] for p in pts]
                hi = [p[1].band()[1] for p in pts]
                if any(v is not None for v in lo + hi):
                    lo2 = [v if v is not None else y for v, y in zip(lo, ys, strict=True)]
                    hi2 = [v if v is not None else y for v, y in zip(hi, ys, strict=True)]
                    ax.fill_between(xs, lo2, hi2, color=line.get_color(), alpha=0.18, lw=0,
                                    label=f"reference band ({metric})")
                    refs = [p[1].ref for p in pts]
                    if all(x is not None for x in refs):
                        ax.plot(xs, refs, ls="--", lw=0.8, color=line.get_color())
                ax.set_ylabel(f"{kind} ({unit})")
            ax.set_xscale("log", base=2)
            if kind == "latency":
                ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_title(f"{kind} vs message size")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, loc="best")
        fig.suptitle(f"{base} on {sysenv}", fontsize=10)
        fig.tight_layout()
        name = f"size-{_slug(base)}-{_slug(sysenv)}.png"
        fig.savefig(outdir / name, dpi=DPI, bbox_inches="tight")
        plt.close(fig)
        out.append({"png": name, "title": f"{base} on {sysenv}", "series": len(series)})
    return out


def stream_rates(records: Sequence[PerfRecord], outdir: Path, max_cases: int = 16) -> list[dict]:
    """Per-stream receive rates of the tx/rx scenarios (rxR_txT_gbps), one bar per stream,
    grouped by test case, with each case's reference band for a stream if it has one."""
    cases: dict[tuple, list[tuple[str, PerfRecord]]] = defaultdict(list)
    for r in records:
        m = _STREAM.match(r.pvar)
        if m and r.value is not None:
            cases[(r.test, r.sysenv, r.nodes_expr)].append((f"rx{m['rx']}<-tx{m['tx']}", r))
    if not cases:
        return []
    items = sorted(cases.items())[:max_cases]
    n = len(items)

    def short(test: str, nodes: str, stream: str) -> str:
        params = " ".join(_PARAM_RE.findall(test)) or test
        return f"{params} [{nodes}] {stream}" if nodes else f"{params} {stream}"

    longest = max(len(short(t, nd, s)) for (t, _se, nd), v in items for s, _r in v)
    width = min(18.0, 6.0 + 0.062 * longest)
    fig, ax = plt.subplots(figsize=(width, 1.2 + 0.42 * sum(len(v) for _k, v in items) + 0.3 * n))
    y = 0.0
    ticks, labels = [], []
    cmap = plt.get_cmap("tab10")
    for i, ((test, _sysenv, nodes), streams) in enumerate(items):
        streams.sort(key=lambda s: s[0])
        for label, r in streams:
            ax.barh(y, r.value, color=cmap(i % 10), height=0.8)
            lo, _hi = r.band()
            if lo is not None:
                ax.plot([lo, lo], [y - 0.45, y + 0.45], color="black", lw=1.2)
            ax.text(r.value, y, f" {r.value:.3g}", va="center", fontsize=7)
            ticks.append(y)
            labels.append(short(test, nodes, label))
            y += 1
        y += 0.6
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("receive rate (Gbps); black tick = lower end of the reference band")
    classes = sorted({t.split(" ")[0] for (t, _s, _n), _v in items})
    ax.set_title(f"tx/rx per-stream rates ({', '.join(classes)})")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(outdir / "streams.png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return [{"png": "streams.png", "title": "tx/rx per-stream rates", "cases": n,
             "left_out": max(0, len(cases) - n)}]


_STATUS_COLOUR = {"ok": "#4c9a2a", "cleared": "#9bbf5a", "suspect": "#c0392b",
                  "unreachable": "#6c3483", "unmeasured": "#999999"}


def sweep_views(sweep: dict, outdir: Path, tag: str = "sweep", max_matrix: int = 64) -> list[dict]:
    """The sweep's pair matrix (heatmap of pair figure / cluster level; failed pairs marked
    with x) and per-node medians coloured by verdict."""
    out = []
    nodes = list(sweep["nodes"])
    level = sweep["level"].get("center") or 1.0
    unit = sweep.get("unit", "")
    cut = sweep["level"].get("screen_cut")
    if len(nodes) <= max_matrix:
        idx = {n: i for i, n in enumerate(nodes)}
        vals: dict[tuple[int, int], list[float]] = defaultdict(list)
        failed: set[tuple[int, int]] = set()
        for p in sweep["pairs"]:
            i, j = idx[p["a"]], idx[p["b"]]
            for key in ((i, j), (j, i)):
                if p["status"] == "ok" and p["value"] is not None:
                    vals[key].append(p["value"] / level)
                else:
                    failed.add(key)
        n = len(nodes)
        grid = [[math.nan] * n for _ in range(n)]
        for (i, j), v in vals.items():
            grid[i][j] = sorted(v)[len(v) // 2]
        size = min(11.0, max(5.0, 2.8 + 0.32 * n))
        fig, ax = plt.subplots(figsize=(size + 1.4, size))
        cmap = LinearSegmentedColormap.from_list(
            "rg", ["#b2182b", "#f4a582", "#a6dba0", "#92c5de", "#2166ac"]
        ).with_extremes(bad="#ffffff")
        im = ax.imshow(grid, cmap=cmap, vmin=0.0, vmax=2.0, interpolation="nearest")
        for i, j in failed:
            if (i, j) not in vals:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color="#7f7f7f"))
            ax.text(j, i, "x", ha="center", va="center", color="white", fontsize=10,
                    fontweight="bold")
        if n <= 24:
            for (i, j), v in vals.items():
                ax.text(j, i, f"{sorted(v)[len(v) // 2]:.2f}", ha="center", va="center",
                        fontsize=6 if n > 12 else 8)
        ax.set_xticks(range(n), nodes, rotation=90, fontsize=7 if n > 24 else 8)
        ax.set_yticks(range(n), nodes, fontsize=7 if n > 24 else 8)
        cb = fig.colorbar(im, ax=ax, shrink=0.8)
        cb.set_label(f"pair figure / cluster level ({level:.3g} {unit})")
        ax.set_title(f"sweep pair matrix: {len(sweep['pairs'])} pairs in "
                     f"{sweep['rounds_used']} rounds\n(grey x = failed or timed out; blank = not paired)",
                     fontsize=9)
        fig.tight_layout()
        name = f"{tag}-matrix.png"
        fig.savefig(outdir / name, dpi=DPI, bbox_inches="tight")
        plt.close(fig)
        out.append({"png": name, "title": "sweep pair matrix"})

    table = sweep["nodes_table"]
    width = min(14.0, max(6.5, 3 + 0.28 * len(table))) if len(table) <= 64 else 12
    fig, ax = plt.subplots(figsize=(width, 3.8))
    xs = list(range(len(table)))
    ratios = [row["ratio"] if row["ratio"] is not None else 0.0 for row in table]
    colours = [_STATUS_COLOUR.get(row["status"], "#999999") for row in table]
    if len(table) <= 64:
        ax.bar(xs, ratios, color=colours)
        ax.set_xticks(xs, [row["node"] for row in table], rotation=90, fontsize=7)
        for x, row in zip(xs, table, strict=True):
            if row["status"] in ("suspect", "unreachable"):
                ax.text(x, max(ratios[x], 0.02), row["status"], rotation=90, ha="center",
                        va="bottom", fontsize=7)
    else:
        ax.scatter(xs, ratios, c=colours, s=4)
        ax.set_xlabel("node index")
    ax.axhline(1.0, color="black", lw=0.8)
    if cut:
        ax.axhline(cut, color="#c0392b", lw=0.8, ls="--", label=f"slow below {cut:.2f}x")
        ax.legend(fontsize=7, loc="upper right")
    ax.set_ylabel("node figure / cluster level")
    ax.set_title("per-node figure: median of pairs with non-suspect partners\n(green ok, red suspect, purple unreachable)",
                 fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    name = f"{tag}-nodes.png"
    fig.savefig(outdir / name, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    out.append({"png": name, "title": "sweep per-node medians"})
    return out

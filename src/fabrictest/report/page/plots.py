"""PNG plots (matplotlib, Agg backend: no display, no network, no web fonts)."""

from __future__ import annotations

import io
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

from fabrictest.report.records.direction import is_time  # noqa: E402
from fabrictest.report.records.outfiles import save_figure  # noqa: E402
from fabrictest.report.records.results import PerfRecord  # noqa: E402

SIZE_PARAMS = ("msg_size", "message_size", "size", "msgsize")
_SIZE_IN_NAME = re.compile(r"^(?P<metric>.*?)[_-](?P<size>\d+)(?P<suffix>[kKmM]?)[bB]?$")
# per-stream figures: by link (`stream_node03_to_node01_gbps`, `_tx1` where ranks share a
# host, `sim_` over the simulated verbs provider); perflogs before that numbered a
# receiver's streams (`rx0_tx1_gbps`)
_STREAM = re.compile(
    r"^(?:sim_)?(?:stream_(?P<tx>\w+?)_to_(?P<rx>\w+?)(?:_tx(?P<t>\d+))?"
    r"|rx(?P<rxn>\d+)_tx(?P<txn>\d+))_gbps$"
)
_NODE = re.compile(r"^(?:sim_)?node(?:_(?P<host>\w+)_rx|(?P<n>\d+))_gbps$")
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
        save_figure(fig, outdir / name, dpi=DPI, bbox_inches="tight")
        plt.close(fig)
        out.append({"png": name, "title": f"{base} on {sysenv}", "series": len(series)})
    return out


def _stream_label(m: re.Match[str]) -> str:
    if m["tx"] is not None:
        return f"{m['tx']}->{m['rx']}" + (f" (tx{m['t']})" if m["t"] else "")
    return f"rx{m['rxn']}<-tx{m['txn']}"


def stream_rates(records: Sequence[PerfRecord], outdir: Path, max_cases: int = 16) -> list[dict]:
    """Per-stream receive rates of the tx/rx scenarios (per link), one bar per stream,
    grouped by test case, with each case's reference band for a stream if it has one."""
    cases: dict[tuple, list[tuple[str, PerfRecord]]] = defaultdict(list)
    for r in records:
        m = _STREAM.match(r.pvar)
        if m and r.value is not None:
            cases[(r.test, r.sysenv, r.nodes_expr)].append((_stream_label(m), r))
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
    save_figure(fig, outdir / "streams.png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return [{"png": "streams.png", "title": "tx/rx per-stream rates", "cases": n,
             "left_out": max(0, len(cases) - n)}]


#: colours of a node-direction's state (the sweep's per-side states; `below`: under the
#: expected rate of a reference) and of a node's status
_STATE_COLOUR = {"ok": "#4c9a2a", "cleared": "#9bbf5a", "slow": "#c0392b", "below": "#e67e22",
                 "unreachable": "#6c3483", "borderline": "#f1c40f", "ambiguous": "#f1c40f",
                 "noise": "#f5cba7", "undecided": "#8e9fc9", "unmeasured": "#999999"}


def _pair_matrix(sweep: dict, norm: float) -> tuple[list, set, set]:
    """Directed: row = sender, column = receiver, the median of that direction's OK runs /
    `norm`; and the cells whose runs all failed, and those with a failure among OK runs."""
    nodes = list(sweep["nodes"])
    idx = {n: i for i, n in enumerate(nodes)}
    vals: dict[tuple[int, int], list[float]] = defaultdict(list)
    failed: set[tuple[int, int]] = set()
    for p in sweep["pairs"]:
        key = (idx[p["a"]], idx[p["b"]])
        if p["status"] == "ok" and p["value"] is not None:
            vals[key].append(p["value"] / norm)
        else:
            failed.add(key)
    n = len(nodes)
    grid = [[math.nan] * n for _ in range(n)]
    for (i, j), v in vals.items():
        grid[i][j] = sorted(v)[len(v) // 2]
    return grid, {k for k in failed if k not in vals}, {k for k in failed if k in vals}


def sweep_views(sweep: dict, outdir: Path, tag: str = "sweep", max_matrix: int = 64) -> list[dict]:
    """The sweep's directed pair matrix (heatmap of each direction's figure / the expected
    rate, or / the cluster level without one; a pair slow one way shows in one cell) and
    per-node send and receive figures coloured by their state."""
    out = []
    nodes = list(sweep["nodes"])
    level = sweep["level"].get("center") or 1.0
    exp = sweep.get("expected") or None
    norm = exp["value"] if exp else level
    what = (f"expected {norm:.3g} {sweep.get('unit', '')} ({exp['source']})" if exp
            else f"cluster level {norm:.3g} {sweep.get('unit', '')}")
    cut = sweep["level"].get("screen_cut")
    if len(nodes) <= max_matrix:
        grid, dead, some_failed = _pair_matrix(sweep, norm)
        n = len(nodes)
        size = min(11.0, max(5.0, 2.8 + 0.32 * n))
        fig, ax = plt.subplots(figsize=(size + 1.4, size))
        cmap = LinearSegmentedColormap.from_list(
            "rg", ["#b2182b", "#f4a582", "#a6dba0", "#92c5de", "#2166ac"]
        ).with_extremes(bad="#ffffff")
        im = ax.imshow(grid, cmap=cmap, vmin=0.0, vmax=2.0, interpolation="nearest")
        for i in range(n):
            ax.add_patch(Rectangle((i - 0.5, i - 0.5), 1, 1, color="#e6e6e6"))
        for i, j in dead:
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color="#7f7f7f"))
        for i, j in dead | some_failed:
            ax.text(j, i, "x", ha="center", va="center", color="white", fontsize=10,
                    fontweight="bold")
        if n <= 24:
            for i in range(n):
                for j in range(n):
                    if grid[i][j] == grid[i][j] and (i, j) not in some_failed:
                        ax.text(j, i, f"{grid[i][j]:.2f}", ha="center", va="center",
                                fontsize=6 if n > 12 else 8)
        ax.set_xticks(range(n), nodes, rotation=90, fontsize=7 if n > 24 else 8)
        ax.set_yticks(range(n), nodes, fontsize=7 if n > 24 else 8)
        ax.set_xlabel("receiver")
        ax.set_ylabel("sender")
        cb = fig.colorbar(im, ax=ax, shrink=0.8)
        cb.set_label(f"run figure / {what}")
        ax.set_title(f"sweep pair matrix, one cell per direction: {len(sweep['pairs'])} runs in "
                     f"{sweep['rounds_used']} rounds\n(grey x = failed or timed out; "
                     "blank = not measured)", fontsize=9)
        fig.tight_layout()
        name = f"{tag}-matrix.png"
        save_figure(fig, outdir / name, dpi=DPI, bbox_inches="tight")
        plt.close(fig)
        out.append({"png": name, "title": "sweep pair matrix"})

    table = sweep["nodes_table"]
    width = min(14.0, max(6.5, 3 + 0.4 * len(table))) if len(table) <= 64 else 12
    fig, ax = plt.subplots(figsize=(width, 3.8))
    xs = list(range(len(table)))

    def side(row, d):
        fig_ = row.get(f"{d}_figure")
        state = row.get(f"{d}_state") or row["status"]
        return (fig_ / norm if fig_ else 0.0), _STATE_COLOUR.get(state, "#999999"), state

    if len(table) <= 64:
        for k, d in enumerate(("send", "receive")):
            vals = [side(row, d) for row in table]
            ax.bar([x + (k - 0.5) * 0.4 for x in xs], [v[0] for v in vals], width=0.38,
                   color=[v[1] for v in vals], edgecolor="black" if k else "none", lw=0.4)
            for x, (v, _c, state) in zip(xs, vals, strict=True):
                if state not in ("ok", "cleared"):
                    ax.text(x + (k - 0.5) * 0.4, max(v, 0.02), f"{d} {state}", rotation=90,
                            ha="center", va="bottom", fontsize=6)
        ax.set_xticks(xs, [row["node"] for row in table], rotation=90, fontsize=7)
    else:
        vals = [side(row, "send") if (row.get("send_figure") or 0) <= (
            row.get("receive_figure") or 0) else side(row, "receive") for row in table]
        ax.scatter(xs, [v[0] for v in vals], c=[v[1] for v in vals], s=4)
        ax.set_xlabel("node index")
    ax.axhline(1.0, color="black", lw=0.8)
    if exp:
        ax.axhline(exp["floor"] / norm, color="#e67e22", lw=0.8, ls="--",
                   label=f"reference lower bound {100 * exp['lower']:+.0f}%")
    elif cut:
        ax.axhline(cut, color="#c0392b", lw=0.8, ls="--", label=f"slow below {cut:.2f}x")
    if exp or cut:
        ax.legend(fontsize=7, loc="upper right")
    ax.set_ylabel(f"figure / {'expected' if exp else 'cluster level'}")
    ax.set_title("per node: send (left) and receive (right, outlined), coloured by state\n"
                 "(green ok, red slow, orange below reference, yellow borderline, purple "
                 "unreachable, blue-grey undecided)", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    name = f"{tag}-nodes.png"
    save_figure(fig, outdir / name, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    out.append({"png": name, "title": "sweep per-node send and receive"})
    return out


#: labelled points of the acceptance chart: the failing figures farthest from 1
STRIP_LABELS = 8


def ratio_strip(figures: Sequence[dict], sets: Sequence[str]) -> bytes:
    """One compact chart of every stage-2 figure, whatever their number: a row per node set
    (``sets``, in order), each figure a dot at its ratio to its reference (log scale), red
    where outside its band, the farthest failing ones labelled. Its size does not grow with
    the figures (one scatter per row), so 30,000 figures are one small PNG (bytes)."""
    names = [s for s in sets if any(f["set"] == s for f in figures)]
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.45 * len(names)))
    ratios = [f["ratio"] for f in figures if f["ratio"] > 0 and math.isfinite(f["ratio"])]
    lo = max(min(ratios + [0.8]) / 1.2, 1e-3)
    hi = min(max(ratios + [1.25]) * 1.2, 1e3)
    for y, name in enumerate(names):
        mine = [f for f in figures if f["set"] == name]
        for failing, colour, size in ((False, "#1f5fa8", 6), (True, "#c0392b", 22)):
            xs = [min(max(f["ratio"], lo), hi) for f in mine if f["failing"] == failing]
            # a deterministic spread within the row, so that equal ratios do not hide
            ys = [y + 0.6 * ((i * 0.618034) % 1 - 0.5) for i in range(len(xs))]
            ax.scatter(xs, ys, s=size, c=colour, marker="D" if failing else "o",
                       linewidths=0, alpha=0.9 if failing else 0.35)
    worst = sorted((f for f in figures if f["failing"]),
                   key=lambda f: -abs(math.log(f["ratio"])) if f["ratio"] > 0 else -math.inf)
    for f in worst[:STRIP_LABELS]:
        ax.annotate(f"{f['figure']} {f['ratio']:.3f}", (min(max(f["ratio"], lo), hi),
                                                        names.index(f["set"])),
                    xytext=(4, 6), textcoords="offset points", fontsize=7, color="#c0392b")
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.set_yticks(range(len(names)), [f"{n} ({sum(f['set'] == n for f in figures)})"
                                      for n in names], fontsize=8)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlabel("figure / reference (log scale); red: outside its reference band",
                  fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return buf.getvalue()

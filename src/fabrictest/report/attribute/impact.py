"""The congestion impact-factor view of the html report: per test case and probe, the victim's
isolated and loaded figures, the impact factor (GPCNeT's sense: above 1 is worse under load)
and its reference band, from CongestionTest's and GpcnetLoadTest's records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fabrictest.references.model import band
from fabrictest.report.page.markup import escape as _e
from fabrictest.report.records.results import PerfRecord


def _gpcnet(test: str, stat: str) -> tuple[str, str]:
    return f"gpcnet_isolated_{test}_{stat}", f"gpcnet_loaded_{test}_{stat}"


#: impact figure -> (probe, its isolated figure, its loaded figure)
PROBES = {
    "lat_impact": ("latency (average)", "lat_isolated_us", "lat_loaded_us"),
    "bw_impact": ("bandwidth", "bw_isolated_gbps", "bw_loaded_gbps"),
    "lat_p99_impact": ("latency (99 %)", "lat_p99_isolated_us", "lat_p99_loaded_us"),
    "lat_impact_avg": ("RR two-sided latency (average)", *_gpcnet("rr_two_sided_lat", "avg")),
    "lat_impact_p99": ("RR two-sided latency (99 %)", *_gpcnet("rr_two_sided_lat", "p99")),
    "bw_impact_avg": ("RR two-sided BW+Sync (average)", *_gpcnet("rr_two_sided_bw_sync", "avg")),
    "bw_impact_p99": ("RR two-sided BW+Sync (99 %)", *_gpcnet("rr_two_sided_bw_sync", "p99")),
    "allreduce_impact_avg": ("allreduce (average)", *_gpcnet("multiple_allreduce", "avg")),
    "allreduce_impact_p99": ("allreduce (99 %)", *_gpcnet("multiple_allreduce", "p99")),
}


@dataclass(frozen=True)
class ImpactRow:
    test: str
    system: str
    probe: str
    isolated: PerfRecord | None
    loaded: PerfRecord | None
    impact: PerfRecord

    def band(self) -> tuple[float | None, float | None]:
        """The impact factor's accepted range (reference x (1 + lower) .. x (1 + upper))."""
        r = self.impact
        if r.ref is None:
            return None, None
        return band(r.ref, r.lower, r.upper)

    def status(self) -> str:
        value = self.impact.value
        lo, hi = self.band()
        if value is None:
            return "unmeasured"
        if self.impact.ref is None:
            return "unreferenced"
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return "fail"
        return "within"


def impact_rows(records: Sequence[PerfRecord]) -> list[ImpactRow]:
    """One row per impact figure of each test case (the last record of each figure)."""
    by_case: dict[tuple, dict[str, PerfRecord]] = {}
    for rec in records:
        by_case.setdefault((rec.test, rec.system, rec.partition), {})[rec.pvar] = rec
    rows = []
    for (test, system, partition), figures in sorted(by_case.items()):
        for pvar, (probe, iso, load) in PROBES.items():
            if pvar in figures:
                rows.append(ImpactRow(test, f"{system}:{partition}", probe, figures.get(iso),
                                      figures.get(load), figures[pvar]))
    return rows


def _n(rec: PerfRecord | None) -> str:
    if rec is None or rec.value is None:
        return "-"
    return _e(f"{rec.value:.4g} {rec.unit}".strip())


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


def impact_section(records: Sequence[PerfRecord]) -> str:
    rows = impact_rows(records)
    if not rows:
        return '<p class="note">No congestion impact factors in these results.</p>'
    out = ['<p class="note">The victim measured isolated and beside the aggressors '
           "(congestors). Impact factor: loaded / isolated for latency, isolated / loaded for "
           "bandwidth, so above 1 is worse under load; the band is the reference's accepted "
           "range (docs/reframe.md, \"Congestion\").</p>",
           "<table><tr><th>test</th><th>system</th><th>probe</th><th>isolated</th>"
           "<th>loaded</th><th>impact factor</th><th>reference band</th><th>status</th></tr>"]
    for row in rows:
        lo, hi = row.band()
        edges = "-" if row.impact.ref is None else f"{_f(lo)} .. {_f(hi)} (ref {_f(row.impact.ref)})"
        cls = {"fail": "fail", "unreferenced": "unreferenced"}.get(row.status(), "")
        out.append(
            f'<tr class="{cls}"><td>{_e(row.test)}</td><td>{_e(row.system)}'
            f"</td><td>{_e(row.probe)}</td><td class=\"num\">{_n(row.isolated)}</td>"
            f'<td class="num">{_n(row.loaded)}</td><td class="num">'
            f"{_f(row.impact.value)}x</td><td class=\"num\">{edges}</td>"
            f"<td>{row.status()}</td></tr>")
    out.append("</table>")
    return "\n".join(out)

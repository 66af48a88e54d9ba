"""The whole matrix: every row's cells, from the modules that compute them, and the cells
known to be wrong today (KNOWN_GAPS)."""

from __future__ import annotations

from functools import cache

from . import acceptance, bands, counter_faults, health, outputs, processes, report_cmds, sweep
from .axes import FAULTS, families, rows
from .cell import FAIL, PASS, Cell, cited, na
from .known_gaps import KNOWN_GAPS

__all__ = ["KNOWN_GAPS", "matrix"]


def _family(name: str, counters: dict[str, Cell], sweep_row: dict[str, Cell]) -> dict[str, Cell]:
    out = {**outputs.cells(name), **bands.cells(name), **processes.cells(name)}
    if name in outputs.OUTPUT_NA:  # its figures are fabric-sweep's: that row's healthy run
        sweep_healthy = sweep_row["healthy"]
        out["healthy"] = Cell(sweep_healthy.outcome, f"fabric-sweep's verdict on a healthy "
                                                     f"simulation: {sweep_healthy.text}")
    said = {f: Cell(c.outcome, f"the counters plugin (CounterChecks, every multi-node case): "
                               f"{c.text}", c.names) for f, c in counters.items()}
    healthy = [out["healthy"], said.pop("healthy")]  # its output and its counters, both
    out.update(said)
    out["healthy"] = Cell(PASS if all(c.outcome == PASS for c in healthy) else FAIL,
                          "; ".join(c.text for c in healthy))
    return out


def _counters_verdict() -> dict[str, Cell]:
    out = {**counter_faults.verdict_cells(), **counter_faults.verdict_input_cells()}
    why = ("the verdict judges counts (links down, errors over a threshold); rates are the "
           "families' and the sweep's")
    out.update(bw_0_5=na(why), bw_0_85=na(why),
               hung_tool=na("it reads snapshot files; reading a node (with its timeouts) is "
                            "fabric-health counters' (the fabric-health row)"),
               missing_tool=cited("FAIL", "fabric-health missing on a node: 'counters not "
                                  "read: counters of 1 of 2 nodes', quoting 'fabric-health: "
                                  "command not found'", "tests/reframe/test_counters_plugin.py"
                                  "::test_unknown_node_list_counts_the_files_and_quotes_the_log"))
    return out


@cache
def matrix() -> dict[str, dict[str, Cell]]:
    """{row: {fault: Cell}} for every row of axes.rows() and every fault of axes.FAULTS."""
    counters = counter_faults.plugin_cells()
    sweep_row = sweep.cells()
    out = {name: _family(name, counters, sweep_row) for name in families()}
    out["reframe run"] = processes.run_cells()
    out["acceptance"] = acceptance.cells()
    out["counters verdict"] = _counters_verdict()
    out["fabric-health"] = health.cells()
    out["fabric-sweep"] = sweep_row
    out["fabric-report compare"] = report_cmds.compare_cells()
    out["fabric-report history"] = report_cmds.history_cells()
    sweep_row = out["fabric-sweep"]
    sweep_row.setdefault("hung_tool", cited(
        "FAIL", "pairs that never answer end at --pair-timeout; no round hangs",
        "tests/sweep/test_cli.py::test_concurrent_pairs_and_timeouts_never_hang"))
    sweep_row.setdefault("missing_tool", cited(
        "FAIL", "--test osu_bw without osu_bw (not on PATH, or a --osu-bw that is not there): "
        "'fabric-sweep: error: osu_bw not found (...)', exit 2, before any pair runs",
        "tests/matrix/test_missing_tools.py::test_a_sweep_without_osu_bw_is_refused_naming_it"))
    sweep_row.setdefault("lost_records", na("the sweep keeps what it measured in memory and "
                                            "its --json; a failed write is one line, exit 2"))
    for family in bands.UNMOVED:
        for fault, catchers in bands.CAUGHT_BY.items():
            out[family][fault] = bands.confirmed(family, fault, out[family][fault],
                                                 {r: out[r][fault] for r in catchers})
    missing = [(r, f) for r in rows() for f in FAULTS if f not in out.get(r, {})]
    if missing:
        raise AssertionError(f"cells with no computation: {missing}")
    return {r: {f: out[r][f] for f in FAULTS} for r in rows()}

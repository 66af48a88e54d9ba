"""The counter faults (a link down, a flap, an error burst, a saturated 32-bit counter), as
snapshots before and after a test on node01 and node03, the fault on node03: judged by the
counters room (``fabrictest.counters``: the ``counters verdict`` row) and by the plugin every
multi-node family carries (``reframe_tests/fabric_counters.py``, ``CounterChecks``, on a stage
directory as the job leaves it: the families' rows)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

from fabrictest.counters.difference import difference
from fabrictest.counters.judge import judge
from fabrictest.counters.kinds import maximum
from fabrictest.counters.snapshot import SNAPSHOT_DIR, Counter, Snapshot
from fabrictest.counters.thresholds import Thresholds

from .axes import FAMILIES_DIR
from .cell import Cell, failed, passed

COUNTER_FAULTS = ("healthy", "link_down", "flap", "error_burst", "saturated")
NODES = ("node01", "node03")
FAULTY = "node03"
TOP32 = maximum(32)


def _counters(fault: str | None, after: bool) -> list[Counter]:
    """The counters of one node: a netdev link, an InfiniBand port's error and wait counters
    (port_xmit_wait is 32 bits in PortCounters and stops at its maximum) and TCP's
    retransmissions."""
    carrier = {"link_down": 18, "flap": 21}.get(fault, 17) if after else 17
    symbol = 500 if after and fault == "error_burst" else 3
    wait = (TOP32 if after else TOP32 - 10) if fault == "saturated" else (9000 if after else 10)
    return [Counter("netdev", "eth0", "-", "carrier_changes", carrier),
            Counter("ib", "mlx5_0", "1", "symbol_error", symbol),
            Counter("ib", "mlx5_0", "1", "port_xmit_wait", wait),
            Counter("tcp", "tcp", "-", "RetransSegs", 9 if after else 5)]


def snapshots(fault: str) -> dict[str, dict[str, Snapshot]]:
    """{phase: {node: Snapshot}}: the fault on FAULTY only."""
    return {phase: {n: Snapshot(n, _counters(fault if n == FAULTY else None, phase == "after"),
                                [], 100.0 + 5 * (phase == "after"))
                    for n in NODES} for phase in ("before", "after")}


def _cell(problems: list[str]) -> Cell:
    if not problems:
        return passed("no counter problem: the test passes on its counters")
    return failed("; ".join(problems), FAULTY)


def verdict_cells() -> dict[str, Cell]:
    """The counters room's verdict (judge) on each fault, with a threshold of 0 errors."""
    out = {}
    for fault in COUNTER_FAULTS:
        snaps = snapshots(fault)
        diffs = [difference(snaps["before"][n], snaps["after"][n]) for n in NODES]
        v = judge(diffs, Thresholds(), list(NODES))
        out[fault] = _cell(v.failures + [f"counters not read: {u}" for u in v.unread])
    return out


def _plugin():
    if str(FAMILIES_DIR) not in sys.path:
        sys.path.insert(0, str(FAMILIES_DIR))
    from fabric_counters import CounterChecks
    return CounterChecks


def plugin_cells() -> dict[str, Cell]:
    """``CounterChecks.counter_problems`` (what fails a family's test) on each fault, with
    the vcluster's thresholds file (reference/counters/vcluster.yaml)."""
    checks = _plugin()
    out = {}
    for fault in COUNTER_FAULTS:
        with tempfile.TemporaryDirectory(prefix="fault-matrix-") as stage:
            for phase, snaps in snapshots(fault).items():
                d = Path(stage) / SNAPSHOT_DIR / phase
                d.mkdir(parents=True)
                for node, snap in snaps.items():
                    (d / f"{node}.json").write_text(snap.to_json())
            fake = SimpleNamespace(counter_launch_nodes=len(NODES), stagedir=stage,
                                   job=SimpleNamespace(nodelist=list(NODES)),
                                   current_system=SimpleNamespace(name="vcluster"),
                                   placed_hosts=lambda: [])
            for name in ("counter_verdict", "expected_counter_nodes", "snapshot_log_tail",
                         "counter_problems"):
                setattr(fake, name, getattr(checks, name).__get__(fake))
            out[fault] = _cell(fake.counter_problems())
    return out


def _refused(text: str) -> Cell:
    from fabrictest.counters.snapshot import parse_snapshot
    from fabrictest.parsers import ParseError

    try:
        snap = parse_snapshot(text)
    except (ParseError, ValueError) as err:
        return failed(f"snapshot refused: {err}")
    return passed(f"read: {len(snap.counters)} counters of {snap.node}")


def _judged(diffs, expected) -> Cell:
    v = judge(diffs, Thresholds(), expected)
    return _cell(v.failures + [f"counters not read: {u}" for u in v.unread])


def verdict_input_cells() -> dict[str, Cell]:
    """The counters verdict's inputs gone wrong: snapshot files cut, doubled, of another
    tool, with impossible values; a node's snapshots lost; snapshots of another node."""
    snaps = snapshots("healthy")
    text = snaps["after"][FAULTY].to_json()
    doc = snaps["after"][FAULTY].as_dict()
    doubled = dict(doc, counters=doc["counters"] + doc["counters"][:1])
    import json

    bad = []
    for value in ("NaN", "Infinity", "-5"):
        d = json.loads(text)
        d["counters"][0]["value"] = "VALUE"
        bad.append((value, _refused(json.dumps(d).replace('"VALUE"', value))))
    passing = [v for v, c in bad if c.outcome != "FAIL"]
    diffs = [difference(snaps["before"][n], snaps["after"][n]) for n in NODES if n != FAULTY]
    try:
        difference(snaps["before"][FAULTY], snaps["after"]["node01"])
        foreign = passed("compared")
    except ValueError as err:
        foreign = failed(str(err), FAULTY)
    return {
        "truncated": _refused(text[: len(text) // 2]),
        "doubled": _refused(json.dumps(doubled)),
        "other_benchmark": _refused("# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth "
                                    "(MB/s)\n1048576   10000.00\n"),
        "nonfinite": passed(f"a value of {passing[0]} read") if passing else failed(
            "; ".join(f"{v}: {c.text}" for v, c in bad)),
        "lost_records": _judged(diffs, list(NODES)),
        "empty_selection": _judged([], list(NODES)),
        "stale_foreign": foreign,
    }

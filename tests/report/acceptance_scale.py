"""A synthetic acceptance run at a centre's size, scaled from the recorded vcluster run
(tests/report/data/acceptance/healthy): the same test cases, figures, references, health lines,
counter snapshots and sweep, every family run over the whole partition of N nodes in leaves of
64 under ``groups`` groups, with three planted faults:

* ``SLOW`` (a node about a third of the way in): its links 15 % below their reference, so the
  paired test over the partition fails on it and the sweep names it (stage 2);
* ``FLAPPING`` (about half way): eth0 and its macvlan hsn0 go down twice between the paired
  test and bisection, while no test ran (stage 3);
* ``BAD_MAC`` (about two thirds of the way): its fabric NIC's MAC is not its switch port's
  (stage 1).

    python tests/report/acceptance_scale.py DIR 10000   # writes DIR/run{0,1,2}.json, topology

Used by ``bench/bench_acceptance.py`` and ``tests/report/test_acceptance_scale.py``.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "acceptance" / "healthy"
LEAF = 64
#: the recorded run's test cases, by the name their display name starts with
PAIRED = "TxRxTest %scenario=paired %span=many"
TRIPLES = "TxRxTest %scenario=pairs-of-three %span=one"
T0 = 1795740000.0


def node_names(n: int) -> list[str]:
    width = max(2, len(str(n)))
    return [f"nid{i:0{width}d}" for i in range(1, n + 1)]


def faults(nodes: list[str]) -> dict[str, str]:
    n = len(nodes)
    return {"slow": nodes[n // 3], "flapping": nodes[n // 2], "bad_mac": nodes[2 * n // 3]}


def topology(nodes: list[str], groups: int) -> str:
    """Our topology format: leaves of LEAF nodes, spread over ``groups`` groups."""
    leaves = [nodes[i:i + LEAF] for i in range(0, len(nodes), LEAF)]
    groups = max(1, min(groups, len(leaves)))
    lines = [f"g{g + 1}: parent=top" for g in range(groups)]
    for i, leaf in enumerate(leaves):
        lines.append(f"sw{i + 1}: {','.join(leaf)} parent=g{i * groups // len(leaves) + 1}")
    return "\n".join(lines) + "\n"


def _recorded() -> dict[str, tuple[dict, dict]]:
    """display name -> (session_info, test case) of the recorded healthy run."""
    out = {}
    for part in ("run0", "run1", "run2"):
        doc = json.loads((DATA / f"{part}.json").read_text())
        for tc in doc["runs"][0]["testcases"]:
            out[tc["display_name"]] = (doc["session_info"], tc)
    return out


def _pv(tc: dict, name: str) -> list:
    return next(v for k, v in tc["perfvalues"].items() if k.endswith(":" + name))


def _figure(template: list, value: float | None = None) -> list:
    out = list(template)
    if value is not None:
        out[0] = value
        ref, lo = out[1], out[2]
        out[5] = "fail" if lo is not None and ref and value < ref * (1 + lo) else "pass"
    return out


def _health(nodes: list[str], bad: str, template: str) -> str:
    """The recorded node04's 8 checks, for every node (``bad``: a MAC that is not its port's)."""
    block = [ln for ln in template.splitlines() if ln.startswith("HEALTH node04 ")]
    out = []
    for node in nodes:
        for ln in block:
            ln = ln.replace("node04", node)
            if node == bad and " mac: " in ln:
                ln = ln.replace("mac: PASS found 02:00:00:00:00:82", "mac: FAIL found "
                                "02:00:00:00:00:7c")
            out.append(ln)
        failed = int(node == bad)
        out.append(f"HEALTH summary: {len(block)} checks, {failed} failed")
    return "\n".join(out) + "\n"


class _Writer:
    def __init__(self, root: Path, nodes: list[str], snapshots: bool):
        self.root, self.nodes, self.snapshots = root, nodes, snapshots
        snap = DATA / "rfm-run2/output/vcluster/nodes/openmpi/BisectionTest/counters/before"
        self.snap = json.loads((snap / "node01.json").read_text())
        self.t = T0
        self.bad = faults(nodes)

    def counters(self, out: Path, carrier: dict[str, tuple[int, int]]) -> None:
        """Before and after snapshots of every node; ``carrier``: node -> (eth0 and hsn0
        carrier_changes before, after) where they are not the usual 2 and 0."""
        if not self.snapshots:
            return
        for phase, i in (("before", 0), ("after", 1)):
            d = out / "counters" / phase
            d.mkdir(parents=True, exist_ok=True)
            for node in self.nodes:
                doc = copy.deepcopy(self.snap)
                doc["node"], doc["taken"] = node, self.t + 30 * i
                eth0, hsn0 = carrier.get(node, ((2, 0), (2, 0)))[i]
                for c in doc["counters"]:
                    if c["name"] == "carrier_changes":
                        c["value"] = eth0 if c["device"] == "eth0" else hsn0
                (d / f"{node}.json").write_text(json.dumps(doc) + "\n")
        self.t += 60

    def case(self, tc: dict, part: str, perfvalues: dict, result: str = "pass",
             reason: str | None = None, carrier=None, stdout: str = "") -> dict:
        tc = copy.deepcopy(tc)
        rel = Path(part) / "output" / tc["short_name"]
        out = self.root / rel
        out.mkdir(parents=True, exist_ok=True)
        if stdout:
            (out / "rfm_job.out").write_text(stdout)
        self.counters(out, carrier or {})
        tc.update(outputdir=str(rel), stagedir=str(Path(part) / "stage" / tc["short_name"]),
                  job_nodelist=list(self.nodes), num_tasks=len(self.nodes), result=result,
                  fail_reason=reason, job_completion_time_unix=self.t,
                  perfvalues={f"vcluster:nodes:{k}": v for k, v in perfvalues.items()})
        return tc


def _retrans(tc: dict, nodes: list[str]) -> dict:
    t = _pv(tc, "counters_node01_RetransSegs")
    return {f"counters_{n}_RetransSegs": _figure(t, 0) for n in nodes}


def generate(root: Path, n: int, groups: int = 10, snapshots: bool = True) -> list[Path]:
    """The run's three reports under ``root`` (their directories relative to it) and
    ``root/topology.txt``; returns the reports."""
    rec = _recorded()
    nodes = node_names(n)
    w = _Writer(root, nodes, snapshots)
    bad = w.bad
    (root / "topology.txt").write_text(topology(nodes, groups))
    by = {name.split(" %method")[0]: v for name, v in rec.items()}
    half = n // 2
    reports = []

    # run0: stage 1
    info0, health = rec["NicHealthTest"]
    text = (DATA / "rfm-run0/output/vcluster/nodes/openmpi/NicHealthTest/rfm_job.out")
    cases0 = [w.case(health, "run0", _retrans(health, nodes), result="fail",
                     reason=f"sanity error: {bad['bad_mac']} hsn0 mac failed",
                     stdout=_health(nodes, bad["bad_mac"], text.read_text()))]
    (root / "run0" / "output").mkdir(parents=True, exist_ok=True)
    (root / "run0" / "stage1.json").write_text(json.dumps({
        "format": "fabrictest-stage1/1", "test": "NicHealthTest", "time": T0,
        "system": "vcluster", "partition": "nodes",
        "nodes": {x: "fail" if x == bad["bad_mac"] else "pass" for x in nodes}}))

    # run1: the paired test over the partition: the second half sends to the first
    info1, paired = by[PAIRED]
    stream, tx, rx = (_pv(paired, k) for k in ("stream_node03_to_node01_gbps",
                                               "tx_node03_gbps", "node_node01_rx_gbps"))
    pv = {k: _figure(_pv(paired, k)) for k in ("stream_gbps", "node_gbps", "tx_gbps")}
    pv.update(_retrans(paired, nodes))
    slow = 0.85 * stream[1]
    for a, b in zip(nodes[half:], nodes[:half], strict=False):
        v = slow if bad["slow"] in (a, b) else None
        pv[f"stream_{a}_to_{b}_gbps"] = _figure(stream, v)
        pv[f"tx_{a}_gbps"] = _figure(tx, v)
        pv[f"node_{b}_rx_gbps"] = _figure(rx, v)
    pv["stream_gbps"] = _figure(pv["stream_gbps"], slow)
    flap = {bad["flapping"]: ((2, 0), (2, 0))}
    cases1 = [w.case(paired, "run1", pv, "fail", f"performance: stream_gbps {slow:.4f} "
                     f"below its reference ({bad['slow']})", carrier=flap)]
    w.t += 120  # the flap: eth0 and hsn0 down twice, no test running
    flapped = {bad["flapping"]: ((6, 4), (6, 4))}

    # run2: triples, bisection, congestion, the sweep
    info2, triples = by[TRIPLES]
    pv = {k: _figure(_pv(triples, k)) for k in ("stream_gbps", "node_gbps", "tx_gbps")}
    pv.update(_retrans(triples, nodes))
    s3, t3, r3 = (_pv(triples, k) for k in ("stream_node02_to_node01_gbps", "tx_node02_gbps",
                                            "node_node01_rx_gbps"))
    for i in range(0, n - 2, 3):
        a, b, c = nodes[i:i + 3]
        for src in (b, c):
            pv[f"stream_{src}_to_{a}_gbps"] = _figure(s3)
            pv[f"tx_{src}_gbps"] = _figure(t3)
        pv[f"node_{a}_rx_gbps"] = _figure(r3)
    cases2 = [w.case(triples, "run2", pv, carrier=flapped)]
    _, bis = rec["BisectionTest"]
    pv = {k.split(":")[-1]: _figure(v) for k, v in bis["perfvalues"].items()
          if "counters_" not in k}
    pv.update(_retrans(bis, nodes))
    cases2.append(w.case(bis, "run2", pv, carrier=flapped))
    _, cong = rec["CongestionTest %aggressors=incast"]
    pv = {k.split(":")[-1]: _figure(v) for k, v in cong["perfvalues"].items()
          if "counters_" not in k}
    pv.update(_retrans(cong, nodes))
    cases2.append(w.case(cong, "run2", pv, carrier=flapped))
    _, sweep = by["SweepTest"]
    cases2.append(_sweep(w, sweep, nodes, bad["slow"], flapped))

    for part, info, cases in (("run0", info0, cases0), ("run1", info1, cases1),
                              ("run2", info2, cases2)):
        path = root / f"{part}.json"
        info = dict(info, num_cases=len(cases),
                    num_failures=sum(tc["result"] == "fail" for tc in cases))
        path.write_text(json.dumps({"session_info": info, "runs": [{"testcases": cases}]}))
        reports.append(path)
    return reports


def _sweep(w: _Writer, tc: dict, nodes: list[str], slow: str, carrier) -> dict:
    recorded = DATA / "rfm-run2/output/vcluster/nodes/openmpi" / tc["short_name"] / "sweep.json"
    doc = json.loads(recorded.read_text())
    ref = doc["expected"]["value"]
    rows, pv = [], {"cluster_level": _figure(_pv(tc, "cluster_level"))}
    t = _pv(tc, "node01")
    for i, node in enumerate(nodes):
        v = 0.85 * ref if node == slow else ref
        rows.append({"node": node, "pairs": 2, "ok": 4 - 2 * (node == slow),
                     "slow": 2 * (node == slow), "failed": 0, "median": v, "min": v, "max": v,
                     "figure": v, "ratio": v / ref,
                     "status": "below reference" if node == slow else "ok",
                     "partners": [nodes[i - 1], nodes[(i + 1) % len(nodes)]]})
        for k in ("", "_send", "_recv"):
            pv[f"{node}{k}"] = _figure(t, v)
    line = f"suspect: {slow} send {0.85 * ref:.3f}, receive {0.85 * ref:.3f} Gbps: 15% below"
    doc.update(nodes=nodes, nodes_table=rows, pairs=[], healthy=False, verdict=[line],
               suspects=[{"node": slow, "kind": "both", "line": line}])
    out = w.case(tc, "run2", pv, "fail", f"sanity error: the sweep names {slow}",
                 carrier=carrier)
    (w.root / out["outputdir"] / "sweep.json").write_text(json.dumps(doc))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        sys.exit("usage: acceptance_scale.py DIR NODES")
    dest = Path(sys.argv[1])
    dest.mkdir(parents=True, exist_ok=True)
    for p in generate(dest, int(sys.argv[2])):
        print(p)

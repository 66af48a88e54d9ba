"""``fabric-report acceptance`` on constructed run reports (the builders of
tests/report/test_acceptance.py: four nodes, a pre-flight, pair tests and a bisection with
counter snapshots), each fed one fault, judged in this process."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from recordings import read
from report._reports import fabric_report
from report.test_acceptance import HEALTHY_LINES, THRESHOLDS, TOPOLOGY, Run, healthy

from fabrictest.counters.snapshot import Counter, parse_snapshot

from .cell import FAIL, Cell, failed, na, passed, quote

SLOW = "node03"  # the node a fault is planted on (the pair-b case holds node03 and node04)


def _judge(env: Path, *reports: Path) -> tuple[int, str]:
    argv = ["acceptance"]
    for rep in reports:
        argv += ["--report", rep]
    page = env / "page"
    rc, out, err = fabric_report(*argv, "--topology", env / "topo.txt", "--reference-dir",
                                 env / "ref", "-o", page)
    if rc not in (0, 1):
        return rc, err
    twin = json.loads((page / "acceptance.json").read_text())
    gaps = [f"acceptance.json: stage {s['stage']} gap: {g}" for s in twin["stages"]
            for g in s.get("gaps", [])]
    return rc, "\n".join([out, *gaps])


def _cell(rc: int, said: str, *names: str) -> Cell:
    """The verdict's first line; where it does not name the faulty element, the first line
    of the page's text that does follows it."""
    lines = [x.strip() for x in said.splitlines() if x.strip()] or [""]
    text = quote(lines[0])
    for name in names if rc != 0 else ():
        if name not in text:
            text += " | " + quote(next((x for x in lines if name in x), "(not named)"))
    if rc == 0:
        return passed(text)
    return Cell(FAIL, text, names)


def _pair_b(run: Run) -> dict:
    return next(tc for tc in run.cases if "%pair=b" in tc["name"])


def _last(run: Run) -> dict:
    """The run's last case with counter snapshots (the bisection, on every node)."""
    return [tc for tc in run.cases if (Path(tc["outputdir"]) / "counters").is_dir()][-1]


def _counter_jump(run: Run, node: str, counter: str, steady: int, after: int) -> None:
    """``counter`` read at ``steady`` on ``node`` around every case, rising to ``after``
    during the last one."""
    cases = [tc for tc in run.cases if (Path(tc["outputdir"]) / "counters").is_dir()]
    for tc in cases:
        for phase in ("before", "after"):
            path = Path(tc["outputdir"]) / "counters" / phase / f"{node}.json"
            if not path.is_file():
                continue
            snap = parse_snapshot(path.read_text())
            value = after if tc is cases[-1] and phase == "after" else steady
            snap.counters = [c for c in snap.counters if c.name != counter]
            source, device, port = ("netdev", "eth0", "-") if counter == "carrier_changes" \
                else ("ib", "mlx5_0", "1")
            snap.counters.append(Counter(source, device, port, counter, value))
            path.write_text(snap.to_json())


def _faults(env: Path) -> dict[str, tuple]:
    """fault -> (run reports, names the verdict must give), written under env."""
    def fresh(name: str, **kw) -> Run:
        root = env / name
        root.mkdir()
        return healthy(Run(root), **kw)

    out = {"healthy": ([fresh("healthy").write()], ())}
    for fault, after in (("link_down", 5), ("flap", 8)):
        run = fresh(fault)
        _counter_jump(run, SLOW, "carrier_changes", 4, after)
        out[fault] = ([run.write()], (SLOW,))
    out["bw_0_5"] = ([fresh("half", slow=0.19 * 0.5).write()], (SLOW,))
    out["bw_0_85"] = ([fresh("085", slow=0.19 * 0.85).write()], (SLOW,))
    run = fresh("burst")
    _counter_jump(run, SLOW, "symbol_error", 3, 500)
    out["error_burst"] = ([run.write()], (SLOW,))
    run = fresh("saturated")
    _counter_jump(run, SLOW, "port_xmit_wait", 2**32 - 11, 2**32 - 1)
    out["saturated"] = ([run.write()], (SLOW,))
    # a figure no run can measure, with ReFrame's word left at pass (the page's own check)
    for label, value in (("nan", math.nan), ("inf", math.inf), ("negative", -0.19)):
        run = fresh(f"nonfinite-{label}")
        pv = _pair_b(run)["perfvalues"]
        key = next(k for k in pv if k.endswith(":stream_gbps"))
        pv[key] = [value, 0.19, -0.05, None, "Gbps", "pass"]
        out[f"nonfinite:{label}"] = ([run.write()], ())
    cut = HEALTHY_LINES[: HEALTHY_LINES.index("HEALTH node03") + 30]
    out["truncated"] = ([fresh("cut", health=cut).write()], ())
    out["doubled"] = ([fresh("doubled", health=HEALTHY_LINES * 2).write()], ())
    out["other_benchmark"] = ([fresh("other", health=read("osu_bw-7.4-ompi4.1-local.txt"))
                               .write()], ())
    run = fresh("skipped")
    bis = next(tc for tc in run.cases if tc["name"] == "BisectionTest")
    bis.update(result="skip", perfvalues={},
               fail_reason="no osu/bisection_bw binary: the fixture skipped it")
    out["missing_tool"] = ([run.write()], ("BisectionTest",))
    run = fresh("hung")
    bis = next(tc for tc in run.cases if tc["name"] == "BisectionTest")
    bis.update(result="fail", fail_phase="run", perfvalues={},
               fail_reason="job timed out: one rank stopped (SIGSTOP), the job's time limit "
                           "ended it")
    out["hung_tool"] = ([run.write()], ("BisectionTest",))
    run = Run(env / "empty")
    (env / "empty").mkdir()
    out["empty_selection"] = ([run.write()], ())
    lost = HEALTHY_LINES.split("HEALTH node03")[0]
    out["lost_records"] = ([fresh("lost", health=lost).write()], (SLOW,))
    run = fresh("foreign")
    for tc in run.cases:
        if tc["name"] == "BisectionTest":
            tc["system"] = "cori"
    out["stale_foreign"] = ([run.write()], ("cori",))
    return out


NA: dict[str, str] = {}


def cells() -> dict[str, Cell]:
    with tempfile.TemporaryDirectory(prefix="fault-matrix-acceptance-") as tmp:
        env = Path(tmp)
        (env / "ref" / "counters").mkdir(parents=True)
        (env / "ref" / "counters" / "vcluster.yaml").write_text(THRESHOLDS)
        (env / "topo.txt").write_text(TOPOLOGY)
        results = {}
        for fault, (reports, names) in _faults(env).items():
            rc, line = _judge(env, *reports)
            results[fault] = (rc, line, names)
    out = {f: na(why) for f, why in NA.items()}
    for fault, (rc, line, names) in results.items():
        if not fault.startswith("nonfinite:"):
            out[fault] = _cell(rc, line, *names)
    parts = {f.split(":")[1]: v for f, v in results.items() if f.startswith("nonfinite:")}
    ok = [label for label, (rc, _, _) in parts.items() if rc == 0]
    if ok:
        out["nonfinite"] = passed(f"a {' and '.join(ok)} stream_gbps with ReFrame's pass: "
                                  f"{quote(parts[ok[0]][1])}")
    else:
            out["nonfinite"] = failed("; ".join(f"{label}: {quote(said)}"
                                            for label, (_, said, _) in parts.items()))
    return out




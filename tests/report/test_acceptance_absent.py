"""A figure the history's sessions measured and the acceptance run did not is missing
evidence: stage 2 is incomplete, naming it, unless --allow-missing (then it is listed and the
run is accepted); figures of other systems or that name nodes do not count
(report/acceptance/absent.py)."""

from __future__ import annotations

import json

from report._reports import report
from report.test_acceptance import Run, accept, env, healthy

__all__ = ["env"]  # the fixture, used by name

OSU = "OsuPt2PtTest %benchmark=osu_bw"


def _history(env, figures: dict, test: str = OSU, system: str = "vcluster",
             sessions: int = 3) -> str:
    """Earlier sessions (run reports) of `test` on `system` with `figures`."""
    d = env / "history"
    d.mkdir(exist_ok=True)
    for i in range(sessions):
        doc = report(i, figures, prefix=f"{len(system):04d}", test=test)  # a system's own
        for tc in doc["runs"][0]["testcases"]:
            tc["system"], tc["partition"], tc["environ"] = system, "nodes", "openmpi"
            tc["perfvalues"] = {k.replace("sys:default:", f"{system}:nodes:"): v
                                for k, v in tc["perfvalues"].items()}
        (d / f"{test.split()[0]}-{system}-{i}.json").write_text(json.dumps(doc))
    return str(d / "*.json")


def test_a_figure_of_earlier_sessions_missing_from_the_run_leaves_stage2_incomplete(env):
    glob = _history(env, {"bw_1048576": (11000.0, "MB/s")})
    rc, out, _err, twin = accept(env, "--report", healthy(Run(env)).write(),
                                 "--history-report", glob)
    st = twin["stages"][1]
    assert rc == 1 and st["status"] == "incomplete", out
    assert st["gaps"] == ["1 figure measured in earlier sessions and not in this run "
                          f"(--allow-missing accepts): {OSU} bw_1048576"], st["gaps"]
    assert out.startswith("NOT ACCEPTED: stage 2 (performance) incomplete: 1 figure measured "
                          "in earlier sessions and not in this run"), out
    (row,) = twin["absent"]
    assert (row["test"], row["figure"], row["system"], row["sessions"]) == (
        OSU, "bw_1048576", "vcluster:nodes+openmpi", 3)
    page = (env / "page" / "index.html").read_text()
    assert "Measured before, not in this run" in page
    assert page.find("bw_1048576") < page.find('id="counts"')  # among the failures


def test_allow_missing_lists_it_and_accepts(env):
    glob = _history(env, {"bw_1048576": (11000.0, "MB/s")})
    rc, out, _err, twin = accept(env, "--report", healthy(Run(env)).write(),
                                 "--history-report", glob, "--allow-missing")
    assert rc == 0 and out.startswith("ACCEPTED"), out
    assert [r["figure"] for r in twin["absent"]] == ["bw_1048576"] and twin["absent_allowed"]
    page = (env / "page" / "index.html").read_text()
    assert "listed, allowed by --allow-missing" in page


def test_figures_the_run_measured_of_other_systems_or_naming_nodes_are_not_missing(env):
    glob = _history(env, {"stream_gbps": (0.19, "Gbps"),
                          "stream_node03_to_node02_gbps": (0.19, "Gbps")},
                    test="TxRxTest %scenario=paired %span=one")
    _history(env, {"bw_1048576": (11000.0, "MB/s")}, system="cori")
    rc, out, _err, twin = accept(env, "--report", healthy(Run(env)).write(),
                                 "--history-report", glob)
    assert rc == 0 and twin["absent"] == [], out + json.dumps(twin["absent"])

"""`fabric-report html` shows the regression: every figure as its ratio to its reference (before
and after with two sources), failing figures marked, per node; the sweep's directed heatmap
and per-side states, also for a failing SweepTest whose sweep.json stayed in its stage
directory. Black-box: the command on real ReFrame run reports and real sweep output."""

from __future__ import annotations

import html
import json
import re

from fabrictest.report.cli import main
from fabrictest.sweep.core import run_sweep
from fabrictest.sweep.simulate import SimulatedRunner


def _rows(page: str) -> list[str]:
    table = page.split('<table class="ratios">', 1)[1].split("</table>", 1)[0]
    return table.split("<tr")[2:]


def test_ratio_table_before_after_and_failing_figures(stored, tmp_path, capsys):
    tmp, _env, _uuids = stored
    out = tmp_path / "r"
    rc = main(["html", "--report", str(tmp / "pre-upgrade.json"), "--report",
               str(tmp / "post-upgrade.json"), "-o", str(out)])
    assert rc == 0, capsys.readouterr()
    page = (out / "index.html").read_text()
    assert "<h2>Ratio to reference</h2>" in page
    assert 'src="ratios-0.png"' in page
    assert (out / "ratios-0.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = _rows(page)
    assert "<th>before</th>" in page  # two sources: the base's value and ratio too
    by = {}
    for r in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", r)
        by[(html.unescape(cells[0]), cells[3])] = (r, cells)
    # the degraded stream: half its reference, failing, with the base at its reference
    row, cells = by[("TinyFabric %scenario=paired", "rx1_tx1_gbps")]
    assert 'class="fail"' in row and cells[-1] == "FAIL"
    assert cells[-2].startswith("0.5")  # ratio 0.5 (-50.0%)
    assert cells[7].startswith("0.19 (")  # before: 0.19, at its reference
    # a figure of 0.001 MB/s and one of 100 MB/s both read as ratios on one axis
    small = by[("TinyFabric %scenario=paired", "bw_1")][1]
    big = by[("TinyFabric %scenario=paired", "bw_1048576")][1]
    assert small[5] == "0.001" and big[5] == "100"
    assert small[-2].startswith("0.5") and big[-2].startswith("0.5")
    # the untouched stream is within its band
    row, cells = by[("TinyFabric %scenario=paired", "rx0_tx0_gbps")]
    assert 'class="fail"' not in row and cells[-1] == "ok"
    n_fail = sum('class="fail"' in r for r in rows)
    assert f"{n_fail} of {len(rows)} figures with a reference are outside its band" in page


def test_ratio_table_of_one_healthy_session_has_no_failure(stored, tmp_path):
    tmp, _env, _uuids = stored
    out = tmp_path / "r"
    assert main(["html", "--report", str(tmp / "pre-upgrade.json"), "-o", str(out)]) == 0
    page = (out / "index.html").read_text()
    rows = _rows(page)
    assert rows and not any('class="fail"' in r for r in rows)
    assert "<th>before</th>" not in page
    assert f"0 of {len(rows)} figures with a reference are outside its band" in page


def _sweep(tmp_path, name, **sim):
    nodes = [f"node{i:02d}" for i in range(1, 9)]
    res = run_sweep(nodes, SimulatedRunner(nodes, base=0.19, sigma=0.03, seed=2, **sim),
                    seed=2)
    path = tmp_path / name
    res.write_json(str(path))
    return path, res


def test_heatmap_is_directed_and_side_states_are_coloured(tmp_path):
    """node03 slow sending only: its send side is marked slow, its receive side ok; the
    matrix is drawn per direction."""
    path, res = _sweep(tmp_path, "oneway.json", slow={"node03": (0.3, 1.0)})
    assert ("node03", "send") in res.suspect_sides()
    out = tmp_path / "r"
    assert main(["html", "--sweep", str(path), "-o", str(out)]) == 0
    page = (out / "index.html").read_text()
    assert "sweep0-matrix.png" in page and "sweep0-nodes.png" in page
    row = next(r for r in page.split("<tr") if "<td>node03</td>" in r)
    assert 'class="num st-slow"' in row and "slow</td>" in row
    assert 'class="num st-ok"' in row  # receiving ok
    assert "No expected rate (relative to the cluster only" in page


def test_sweep_json_found_in_a_failing_tests_stage_directory(tmp_path, capsys):
    """ReFrame copies keep_files to the output directory only for passing tests: a failing
    SweepTest's sweep.json is in its (kept) stage directory."""
    path, _res = _sweep(tmp_path, "sweep.json", slow={"node05": 0.3})
    stage, output = tmp_path / "stage", tmp_path / "output"
    stage.mkdir()
    output.mkdir()
    path.rename(stage / "sweep.json")
    report = {"session_info": {"uuid": "u1"}, "runs": [{"testcases": [{
        "name": "SweepTest_1", "display_name": "SweepTest %method=mpi", "system": "vc",
        "partition": "nodes", "environ": "openmpi", "result": "fail",
        "fail_phase": "performance", "stagedir": str(stage), "outputdir": str(output),
        "perfvalues": {"vc:nodes:cluster_level": [0.19, 0.19, -0.05, None, "Gbps", "pass"]},
    }]}]}
    (tmp_path / "report.json").write_text(json.dumps(report))
    out = tmp_path / "r"
    assert main(["html", "--report", str(tmp_path / "report.json"), "-o", str(out)]) == 0
    assert "1 sweep, " in capsys.readouterr().out
    page = (out / "index.html").read_text()
    assert "sweep0-matrix.png" in page and "suspect: node05" in page
    assert "SweepTest %method=mpi on vc:nodes" in page


def test_sweep_held_against_a_reference_colours_the_sides_below_it(tmp_path):
    nodes = [f"node{i:02d}" for i in range(1, 9)]
    from fabrictest.sweep.expectation import Expectation

    exp = Expectation(value=0.19, lower=-0.1, unit="Gbps", source="vcluster.yaml test")
    res = run_sweep(nodes, SimulatedRunner(nodes, base=0.15, sigma=0.03, seed=2), seed=2,
                    expected=exp)
    path = tmp_path / "uniform.json"
    res.write_json(str(path))
    out = tmp_path / "r"
    assert main(["html", "--sweep", str(path), "-o", str(out)]) == 0
    page = (out / "index.html").read_text()
    assert "Expected 0.19 Gbps per run from vcluster.yaml test" in page
    assert page.count('class="below-reference"') == 8
    assert "below reference: cluster level" in page

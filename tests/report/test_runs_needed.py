"""`fabric-report compare` with several sessions a side says how many runs a side its noise
needs to see a drop, and judges by the standard error (report/compare/runs_needed.py), on the
vcluster sweep's recorded healthy noise resampled (tests/data/topology/vcluster-sweeps:
±1.7 %, heavy tails)."""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path

import numpy as np
import pytest
from report._reports import fabric_report, write

from fabrictest.report.compare import runs_needed as rn
from fabrictest.report.compare.rows import compare
from fabrictest.report.history import operating as oc
from fabrictest.report.records.results import PerfRecord

SWEEPS = Path(__file__).resolve().parents[1] / "data/topology/vcluster-sweeps"


@pytest.fixture(scope="module")
def pool() -> np.ndarray:
    docs = [(Path(f).name.split("-healthy")[0], json.loads(Path(f).read_text()))
            for f in sorted(glob.glob(str(SWEEPS / "*-healthy-*.json")))]
    out = np.array(oc.pools(oc.sweep_series(docs))["fabric-sweep"])
    assert len(out) >= 400 and 0.01 < oc.spread(out) < 0.03
    return out


def _recs(values, side: str) -> list[PerfRecord]:
    return [PerfRecord("SweepTest", "SweepTest", "s", "p", "e", "pair_gbps", float(v), "Gbps",
                       session=f"{side}{i}", time=float(i)) for i, v in enumerate(values)]


def _compare(base, target, tolerance=0.02, drop=rn.DROP):
    rows = compare(_recs(base, "b"), _recs(target, "t"), tolerance)
    blind = rn.judge(rows, drop, tolerance)
    return rows[0], blind, rn.statement(rows, drop, tolerance)


def _draw(rng, pool, n):
    return 10.0 * (1 + rng.choice(pool, n))


def test_the_runs_stated_see_a_3_percent_drop(pool):
    rng = np.random.default_rng(7)
    stated = []
    for _ in range(20):
        row, _blind, line = _compare(_draw(rng, pool, 5), _draw(rng, pool, 5) * 0.97)
        stated.append(int(re.search(r"run (\d+) times each side", line).group(1)))
    runs = int(np.median(stated))
    assert 10 <= runs <= 40  # ±1.7 % noise: about 20 a side for 3 %
    notes = []
    for _ in range(40):
        row, _blind, _line = _compare(_draw(rng, pool, runs), _draw(rng, pool, runs) * 0.97)
        notes.append(row.note if row.status == "REGRESSED" else None)
    named = [n for n in notes if n]
    assert len(named) >= 32, len(named)  # power 90 %: 36 of 40 expected
    assert any("beyond its standard error" in n for n in named)  # the range rule alone fails


def test_too_few_runs_say_how_many_are_needed(pool):
    rng = np.random.default_rng(3)
    missed = None
    for _ in range(20):
        row, blind, line = _compare(_draw(rng, pool, 5), _draw(rng, pool, 5) * 0.97)
        if row.status != "REGRESSED":
            missed = (row, blind, line)
            break
    assert missed, "a 3 % drop at 5 runs a side is not always seen"
    row, blind, line = missed
    m = re.search(r"cannot see a 3\.0% drop with 5 runs a side \(sees (\d+\.\d)%; run (\d+) "
                  r"each side\)", row.note)
    assert m and float(m.group(1)) > 3.0 and int(m.group(2)) > 5, row.note
    assert blind == [row]
    assert line.startswith("to see a 3.0% drop here, run ") and "power 90%" in line
    assert "with 5 runs a side 1 of 1 figures cannot see it" in line


def test_identical_and_healthy_sides_raise_no_false_call(pool):
    rng = np.random.default_rng(11)
    calls = 0
    for _ in range(300):
        row, _blind, _line = _compare(_draw(rng, pool, 20), _draw(rng, pool, 20))
        calls += row.status == "REGRESSED"
    assert calls == 0
    same = _draw(rng, pool, 8)
    row, _blind, _line = _compare(same, same)
    assert row.status == "ok" and row.change == 0


def test_fewer_than_5_a_side_is_no_measure_of_the_spread(pool):
    rng = np.random.default_rng(5)
    row, blind, line = _compare(_draw(rng, pool, 3), _draw(rng, pool, 3))
    assert "with 3 runs a side the spread is no measure (fewer than 5)" in line
    assert blind == [] and "cannot see" not in row.note


def _sessions(tmp_path, name, values, prefix):
    return write(tmp_path / name, [{"bw": (v, "Gbps")} for v in values], name=name,
                 prefix=prefix)


def test_the_command_says_it_first_and_drop_given_fails_what_it_cannot_see(tmp_path):
    base = _sessions(tmp_path, "base", [100, 104, 96, 102, 98], "0000")
    target = _sessions(tmp_path, "target", [99, 103, 95, 101, 97], "1111")
    rc, out, err = fabric_report("compare", "--report", base, "--report", target)
    assert rc == 0, out + err
    assert err.startswith("fabric-report: note: to see a 3.0% drop here, run ")
    assert "cannot see a 3.0% drop with 5 runs a side" in out
    rc, out, err = fabric_report("compare", "--report", base, "--report", target,
                                 "--drop", "0.03")
    assert rc == 1, out + err
    assert out.splitlines()[-1].endswith("; 1 figure cannot see a 3.0% drop with the runs "
                                         "given")
    rc, out, err = fabric_report("compare", "--report", base, "--report", target,
                                 "--drop", "0.2")
    assert rc == 0 and "cannot see" not in out, out + err
    rc, out, err = fabric_report("compare", "--report", base, "--report", target,
                                 "--drop", "3")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err

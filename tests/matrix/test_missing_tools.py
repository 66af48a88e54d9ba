"""fabric-sweep without the program it pairs the nodes with (the fault matrix's "missing tool"
column, the fabric-sweep row): refused before any pair runs, one line naming the program,
exit 2. (txrx is the suite's own console script, found next to the interpreter; osu_bw is a
third-party program that may be absent.)"""

from __future__ import annotations

import pytest

from fabrictest.sweep.cli import main


@pytest.mark.proc  # a sweep over real launches (refused before the first one)
@pytest.mark.parametrize("where", ["not on PATH", "--osu-bw"])
def test_a_sweep_without_osu_bw_is_refused_naming_it(tmp_path, monkeypatch, capsys, where):
    monkeypatch.setenv("PATH", str(tmp_path))  # no osu_bw, and no mpirun either
    monkeypatch.setenv("OSU_HOME", "")
    extra = ["--osu-bw", str(tmp_path / "osu" / "osu_bw")] if where == "--osu-bw" else []
    rc = main(["n[1-4]", "--launcher", "mpirun", "--all-local", "--test", "osu_bw",
               "--max-rounds", "2", *extra])
    cap = capsys.readouterr()
    assert rc == 2 and cap.out == "", cap.out
    [line] = cap.err.splitlines()
    assert line.startswith("fabric-sweep: error: osu_bw not found ("), line
    assert "set OSU_HOME, put it on PATH or give --osu-bw" in line, line

"""The stage prefix's lock (reframe_tests/fabric_records.py): one run per stage directory,
whatever TMPDIR each run has (the lock lived in the temporary directory, so a run with another
TMPDIR took a lock of its own and wiped the first run's stage directories)."""

from __future__ import annotations

import fcntl
import os
import tempfile

import fabric_records
import pytest
from reframe.core.exceptions import ForceExitError


@pytest.fixture
def fresh(monkeypatch):
    """hold_stage as a process that holds no lock yet."""
    monkeypatch.setattr(fabric_records, "_held", {})
    yield
    for fp in fabric_records._held.values():
        fp.close()


def _with_tmpdir(monkeypatch, tmpdir) -> None:
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again


def test_the_lock_does_not_move_with_tmpdir(tmp_path, monkeypatch):
    stage = tmp_path / "prefix" / "stage"
    paths = set()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        _with_tmpdir(monkeypatch, tmp_path / name)
        paths.add(fabric_records.lock_path(str(stage)))
    assert paths == {stage.resolve() / fabric_records.LOCK_NAME}


def test_a_run_with_another_tmpdir_is_refused(tmp_path, monkeypatch, fresh):
    stage = tmp_path / "prefix" / "stage"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _with_tmpdir(monkeypatch, tmp_path / "a")
    fabric_records.hold_stage(str(stage))  # the first run, TMPDIR=a
    # the second run (another open file description, as another process has), TMPDIR=b
    _with_tmpdir(monkeypatch, tmp_path / "b")
    monkeypatch.setattr(fabric_records, "_held", {})
    with pytest.raises(ForceExitError, match=rf"another ReFrame run \(pid {os.getpid()}\) is "
                                             r"using the stage directory"):
        fabric_records.hold_stage(str(stage))


def test_the_lock_is_taken_through_another_spelling_of_the_directory(tmp_path, fresh):
    real = tmp_path / "stage"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with open(fabric_records.lock_path(str(real)), "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(ForceExitError, match="is using the stage directory"):
            fabric_records.hold_stage(str(link))


def test_a_lock_file_that_is_a_symbolic_link_is_refused_in_one_line(tmp_path, fresh):
    stage = tmp_path / "stage"
    stage.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("a user's file\n")
    (stage / fabric_records.LOCK_NAME).symlink_to(victim)
    with pytest.raises(ForceExitError, match=r"cannot lock the stage directory .*--prefix DIR"):
        fabric_records.hold_stage(str(stage))
    assert victim.read_text() == "a user's file\n"

"""`--json PATH` is written only to a new or regular file (issue 27, records): a symbolic link,
a directory or a special file is refused before any traffic, and one that appears at PATH
during the run is left alone (the run fails instead of replacing it). The runs through mpirun
are in test_refusals.py; these are the checks themselves (pure, milliseconds)."""

from __future__ import annotations

import os

import pytest

from fabrictest.txrx.errors import Fault
from fabrictest.txrx.output import json_path_problem, write_json


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_character_device_is_refused_and_nothing_is_created_beside_it(device):
    if not os.path.exists(device):
        pytest.skip(f"{device} absent")
    before = os.listdir("/dev")
    problem = json_path_problem(device)
    assert problem == (
        f"--json {device} is a character device: txrx writes its results only to a new or "
        "regular file, never over a link, directory or special file; give another path"
    )
    assert os.listdir("/dev") == before  # no probe file was made in /dev


def test_symlink_to_a_regular_file_is_refused(tmp_path):
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "r.json").symlink_to(tmp_path / "real.json")
    assert "is a symbolic link" in json_path_problem(str(tmp_path / "r.json"))


def test_new_and_regular_files_are_accepted_and_replaced(tmp_path):
    new, old = tmp_path / "new.json", tmp_path / "old.json"
    old.write_text("previous run\n")
    for path in (new, old):
        assert json_path_problem(str(path)) is None
        write_json(str(path), {"tool": "fabrictest.txrx"})
        assert path.read_text().startswith("{") and not path.is_symlink()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["new.json", "old.json"]


def test_a_link_that_appears_during_the_run_is_left_alone(tmp_path):
    path, target = tmp_path / "r.json", tmp_path / "target"
    assert json_path_problem(str(path)) is None  # checked before the run: absent, fine
    target.write_text("not ours\n")
    path.symlink_to(target)  # then someone links PATH elsewhere
    with pytest.raises(Fault, match="is a symbolic link.*changed during the run"):
        write_json(str(path), {"tool": "fabrictest.txrx"})
    assert path.is_symlink() and target.read_text() == "not ours\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.json", "target"]


def test_a_link_planted_at_the_temporary_name_is_not_followed(tmp_path):
    path, target = tmp_path / "r.json", tmp_path / "target"
    target.write_text("not ours\n")
    (tmp_path / f"r.json.tmp{os.getpid()}").symlink_to(target)
    with pytest.raises(Fault, match="could not be written"):
        write_json(str(path), {"tool": "fabrictest.txrx"})
    assert target.read_text() == "not ours\n" and not path.exists()

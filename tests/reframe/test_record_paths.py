"""Records a run could not write are found before it measures anything (reframe_tests/
fabric_record_paths.py): the results database (a directory, a corrupt file, one not writable) and
the performance log directory; ReFrame itself only warned at the end, and the run ended
PASSED, exit 0 (issue 40)."""

from __future__ import annotations

import os
import sqlite3

import pytest
from fabric_record_paths import database_problem, perflog_problem, record_problems


def _sqlite(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (id TEXT)")
    conn.commit()
    conn.close()
    return path


def test_healthy_records_have_no_problem(tmp_path):
    assert database_problem(_sqlite(tmp_path / "results.db")) is None
    (tmp_path / "empty.db").write_bytes(b"")  # sqlite makes a database of an empty file
    assert database_problem(tmp_path / "empty.db") is None
    assert database_problem(tmp_path / "new" / "deeper" / "results.db") is None  # made
    assert perflog_problem(tmp_path / "perflogs" / "local") is None
    assert record_problems(None, []) == []  # storage off, no filelog


def test_a_database_that_is_a_directory_is_named(tmp_path):
    (tmp_path / "results.db").mkdir()
    assert database_problem(tmp_path / "results.db") == (
        f"the results database {tmp_path / 'results.db'} is not a file")
    (tmp_path / "link.db").symlink_to(tmp_path / "results.db")
    assert "is not a file" in database_problem(tmp_path / "link.db")


@pytest.mark.parametrize("content", [b"\x00" * 4096, b"not a database\n" * 100,
                                     os.urandom(4096)])
def test_a_corrupt_database_is_named(tmp_path, content):
    db = tmp_path / "results.db"
    db.write_bytes(content)
    assert "is not an SQLite database" in database_problem(db)


def test_a_database_with_a_good_header_and_a_broken_body_is_named(tmp_path):
    db = _sqlite(tmp_path / "results.db")
    data = bytearray(db.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)  # the header kept, the pages overwritten
    db.write_bytes(bytes(data))
    assert "cannot be read" in (database_problem(db) or ""), database_problem(db)


def test_a_database_that_cannot_be_written_is_named(tmp_path, monkeypatch):
    db = _sqlite(tmp_path / "results.db")
    real = os.access

    def access(path, mode):  # as a read-only file or mount answers (root ignores modes)
        return False if str(path) == str(db) and mode & os.W_OK else real(path, mode)

    monkeypatch.setattr(os, "access", access)
    assert database_problem(db) == f"the results database {db} is not writable"


def test_a_database_under_a_file_is_named(tmp_path):
    (tmp_path / "afile").write_text("x")
    assert database_problem(tmp_path / "afile" / "results.db") == (
        f"the results database's directory {tmp_path / 'afile'} is not a directory")


def test_a_perflog_directory_that_is_a_file_or_unwritable_is_named(tmp_path, monkeypatch):
    (tmp_path / "perflogs").write_text("x")
    assert perflog_problem(tmp_path / "perflogs") == (
        f"the performance log directory {tmp_path / 'perflogs'} is not a directory")
    assert "cannot be made" in perflog_problem(tmp_path / "perflogs" / "local")
    ok = tmp_path / "ro"
    ok.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if str(p) == str(ok) and m & os.W_OK
                        else real(p, m))
    assert perflog_problem(ok) == f"the performance log directory {ok} is not writable"


def test_every_record_is_named_at_once(tmp_path):
    (tmp_path / "results.db").mkdir()
    (tmp_path / "perflogs").write_text("x")
    problems = record_problems(tmp_path / "results.db", [tmp_path / "perflogs"])
    assert len(problems) == 2 and "results database" in problems[0], problems
    assert "performance log directory" in problems[1], problems

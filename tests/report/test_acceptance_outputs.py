"""`fabric-report acceptance` never writes over a file it did not create (issue 40, item 5):
an input of the run, a user's own page or JSON, a symlink; its own page and twin are
replaced; `--force` replaces a user's regular file, never an input."""

from __future__ import annotations

from report._reports import fabric_report
from report.test_acceptance import Run, env, healthy

__all__ = ["env"]  # the fixture, used by name


def _run(env, *argv):
    return fabric_report("acceptance", *argv, "--reference-dir", env / "ref")


def test_json_onto_an_input_report_is_refused_even_with_force(env):
    rep = healthy(Run(env)).write()
    before = rep.read_bytes()
    for force in ((), ("--force",)):
        rc, _, err = _run(env, "--report", rep, "-o", env / "page", "--json", rep, *force)
        assert rc == 2 and err.count("\n") == 1, err
        assert "an input of this run: not replaced" in err, err
        assert rep.read_bytes() == before
    assert not (env / "page" / "index.html").exists()


def test_a_users_own_index_html_is_refused_unless_force(env):
    rep = healthy(Run(env)).write()
    (env / "site").mkdir()
    mine = env / "site" / "index.html"
    mine.write_text("<html>my own page</html>\n")
    rc, _, err = _run(env, "--report", rep, "-o", env / "site")
    assert rc == 2 and "was not written by fabric-report acceptance" in err, err
    assert mine.read_text() == "<html>my own page</html>\n"
    rc, out, err = _run(env, "--report", rep, "-o", env / "site", "--force")
    assert rc == 0, err
    assert "my own page" not in mine.read_text()


def test_its_own_page_and_twin_are_replaced(env):
    rep = healthy(Run(env)).write()
    for _ in range(2):
        rc, out, err = _run(env, "--report", rep, "-o", env / "page", "--json",
                            env / "twin.json")
        assert rc == 0, err


def test_a_users_json_file_is_refused_unless_force(env):
    rep = healthy(Run(env)).write()
    theirs = env / "notes.json"
    theirs.write_text('{"mine": true}\n')
    rc, _, err = _run(env, "--report", rep, "-o", env / "page", "--json", theirs)
    assert rc == 2 and "--json" in err and "not replaced" in err, err
    assert theirs.read_text() == '{"mine": true}\n'


def test_a_symlinked_page_is_refused_even_with_force(env):
    rep = healthy(Run(env)).write()
    (env / "page").mkdir()
    target = env / "elsewhere.html"
    target.write_text("x")
    (env / "page" / "index.html").symlink_to(target)
    rc, _, err = _run(env, "--report", rep, "-o", env / "page", "--force")
    assert rc == 2 and "symlink" in err, err
    assert target.read_text() == "x"

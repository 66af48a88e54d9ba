"""Every command of the suite, and every subcommand, answers ``--help`` with its usage and exit
status 0: a help string with a bare ``%`` makes argparse raise while formatting (``vcluster
--help`` once ended in a TypeError traceback)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def run_help(entry: str, *args: str) -> subprocess.CompletedProcess:
    module, func = entry.split(":")
    code = f"import sys; from {module} import {func} as m; sys.exit(m())"
    return subprocess.run([sys.executable, "-c", code, *args, "--help"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)


def subcommands(help_text: str) -> list[str]:
    """The subcommands listed under "positional arguments": argparse's ``{a,b,c}`` choice
    list, or (with a ``metavar``) the names indented by four spaces below it."""
    section = help_text.partition("positional arguments:")[2].partition("options:")[0]
    m = re.search(r"\{([\w,-]+)\}", section)
    if m:
        return m.group(1).split(",")
    return re.findall(r"^ {4}([a-z][\w-]*)(?:\s|$)", section, flags=re.M)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_help_of_every_command_and_subcommand(name):
    top = run_help(SCRIPTS[name])
    assert top.returncode == 0, f"{name} --help: {top.stderr[-500:]}"
    assert "Traceback" not in top.stdout + top.stderr
    assert "usage:" in top.stdout
    for sub in subcommands(top.stdout):
        res = run_help(SCRIPTS[name], sub)
        assert res.returncode == 0, f"{name} {sub} --help: {res.stderr[-500:]}"
        assert "Traceback" not in res.stdout + res.stderr
        assert "usage:" in res.stdout


def test_subcommands_are_found():
    """The check above walks vcluster's subcommands (so it can fail on one of them)."""
    assert "degrade" in subcommands(run_help(SCRIPTS["vcluster"]).stdout)

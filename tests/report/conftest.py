"""Real ReFrame sessions for the report tests, made here in a temporary directory."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _rfm_sessions import SETTINGS, isolated_env, reframe  # noqa: E402


@pytest.fixture(scope="session")
def stored(tmp_path_factory):
    """Two real stored sessions: stack=pre-upgrade (healthy) and stack=post-upgrade (link
    degraded to 50%), each with a JSON run report."""
    tmp = tmp_path_factory.mktemp("rfm")
    (tmp / "settings.py").write_text(
        SETTINGS % {"db": tmp / "results.db", "perflogs": tmp / "perflogs"})
    env = isolated_env(tmp, tmp / "settings.py")
    uuids = {}
    for tag, degrade in (("pre-upgrade", 1.0), ("post-upgrade", 0.5)):
        proc = reframe(env, tmp, "-c", str(HERE / "tiny_check.py"), "-r",
                       "--session-extras", f"stack={tag}", "-S", f"degrade={degrade}",
                       "--prefix", str(tmp / "out"), "--report-file", str(tmp / f"{tag}.json"),
                       "--nocolor")
        m = re.search(r"stored with UUID: (\S+)", proc.stdout)
        assert m, proc.stdout + proc.stderr
        uuids[tag] = m.group(1)
    return tmp, env, uuids


@pytest.fixture(scope="session")
def unreferenced_run(tmp_path_factory):
    """The run report of a real run whose `same-node` test ran without references and failed
    for it (as the suite's missing-reference policy fails a test), stored apart."""
    tmp = tmp_path_factory.mktemp("rfm-unreferenced")
    (tmp / "settings.py").write_text(
        SETTINGS % {"db": tmp / "results.db", "perflogs": tmp / "perflogs"})
    env = isolated_env(tmp, tmp / "settings.py")
    report = tmp / "unreferenced.json"
    proc = reframe(env, tmp, "-c", str(HERE / "tiny_check.py"), "-r",
                   "-S", "no_reference_for=same-node", "--prefix", str(tmp / "out"),
                   "--report-file", str(report), "--nocolor")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no reference for bw_1," in proc.stdout, proc.stdout
    return report


@pytest.fixture
def rfm_env(stored, monkeypatch):
    tmp, env, uuids = stored
    for k in [k for k in os.environ if k.startswith("RFM_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("RFM_CONFIG_FILES", env["RFM_CONFIG_FILES"])
    monkeypatch.setenv("HOME", env["HOME"])
    return tmp, uuids



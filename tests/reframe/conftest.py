"""Fixtures for the ReFrame suite's tests (see _rfm.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# the helpers beside this file and the suite's shared base (reframe_tests/fabric_base.py)
for p in (HERE, ROOT / "reframe_tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from _rfm import SYSTEMS, run_reframe  # noqa: E402


@pytest.fixture(scope="session")
def dry_runs(tmp_path_factory):
    """`reframe --dry-run` for every system but local, once per session (lazy, cached)."""
    cache = {}

    def get(system: str):
        if system not in cache:
            tmp = tmp_path_factory.mktemp(f"dry-{system}")
            cache[system] = run_reframe(["--system", system, "--dry-run"], tmp, timeout=300)
        return cache[system]

    return get


@pytest.fixture(scope="session")
def systems():
    return SYSTEMS

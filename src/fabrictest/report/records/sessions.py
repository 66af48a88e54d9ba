"""Stored sessions, read through ReFrame's own command line (``reframe
--describe-stored-sessions QUERY``, JSON), not by poking its database schema; and where they
ran from (a results database shared between checkouts)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from fabrictest.report.records.results import PerfRecord, ResultsError, ResultSet, read_report


def checkout_of(info: dict) -> str:
    """The checkout (or host) a session ran from: the directory holding the suite's ReFrame
    settings it was run with (``<checkout>/config/reframe/settings.py``), with its host."""
    host = info.get("hostname") or "?"
    for path in info.get("config_files") or []:
        p = Path(str(path))
        if p.name == "settings.py" and p.parent.name == "reframe":
            return f"{host}:{p.parents[2]}"
    return f"{host}:{info.get('workdir') or '?'}"


def mixed_checkouts(sessions: dict[str, dict]) -> str | None:
    """One line when ``sessions`` (uuid -> session_info) ran from more than one checkout or
    host (a results database shared with ``$FABRICTEST_RESULTS_DB``), else None."""
    by: dict[str, list[str]] = {}
    for uuid, info in sessions.items():
        by.setdefault(checkout_of(info), []).append(uuid[:8])
    if len(by) < 2:
        return None
    parts = [f"{where} ({len(ids)} session{'s' if len(ids) > 1 else ''})"
             for where, ids in sorted(by.items())]
    return f"the sessions come from {len(by)} checkouts: {'; '.join(parts)}"


def reframe_exe() -> str:
    cand = Path(sys.executable).parent / "reframe"
    return str(cand) if cand.exists() else (shutil.which("reframe") or "reframe")


def tag_query(tags: Iterable[str]) -> str:
    """`stack=post-upgrade` (and more, all required) -> ReFrame's session filter."""
    terms = []
    for t in tags:
        k, sep, v = t.partition("=")
        if not sep or not k:
            raise ResultsError(f"bad tag {t!r}: use KEY=VALUE, e.g. stack=pre-upgrade")
        terms.append(f"{k}=={v!r}")
    return "?" + " and ".join(terms)


def describe_sessions(query: str, env: dict[str, str] | None = None) -> list:
    """`reframe --describe-stored-sessions QUERY` as JSON (a list of sessions).

    The query writes its log to a temporary file: it must never truncate the log of a run
    in progress (the configuration's log file), nor need that file's directory to exist.
    """
    cmd = [reframe_exe(), "--describe-stored-sessions", query, "--nocolor"]
    env = dict(os.environ if env is None else env)
    with tempfile.TemporaryDirectory(prefix="fabric-report-") as tmp:
        env["FABRICTEST_RFM_LOG"] = os.path.join(tmp, "reframe-query.log")
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise ResultsError(f"{' '.join(cmd)}: {err}") from err
    text = proc.stdout
    start = text.find("[")
    if proc.returncode != 0 or start < 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()
        raise ResultsError(
            f"{' '.join(cmd)} failed (exit {proc.returncode}): {last[-1] if last else ''}"
        )
    try:
        data = json.loads(text[start:])
    except ValueError as err:
        raise ResultsError(f"{' '.join(cmd)}: output is not JSON ({err})") from err
    if not data:
        raise ResultsError(f"no stored session matches {query!r}")
    return data


def read_session(query: str, env: dict[str, str] | None = None) -> ResultSet:
    return read_report(describe_sessions(query, env), source=query)


def load_session(query: str, env: dict[str, str] | None = None) -> list[PerfRecord]:
    """Records of the stored session(s) a UUID or a `?filter` query selects."""
    return read_session(query, env).records


def stored_query(since: _dt.datetime | None, tags: dict[str, str]) -> str:
    """ReFrame's session query: a time period, and the extras as a filter."""
    start = since.strftime("%Y%m%dT%H%M") if since else "19700101"
    query = f"{start}:now"
    if tags:
        query += tag_query(f"{k}={v}" for k, v in tags.items())
    return query

"""The sources `fabric-report` reads, checked before any work and then loaded.

`--session UUID|QUERY` (stored sessions, through ReFrame's CLI), `--tag KEY=VALUE[,...]`
(every stored session run with those `--session-extras`), `--report FILE|GLOB` (JSON run
reports), `--perflog PATH` (a perflog file or a directory of them).
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path

from fabrictest.report.records.once import refuse_doubled
from fabrictest.report.records.outfiles import writable_dir, writable_file, write_json
from fabrictest.report.records.perflogs import read_perflogs
from fabrictest.report.records.results import ResultsError, ResultSet, read_report_file
from fabrictest.report.records.sessions import read_session, tag_query

__all__ = ["KINDS", "Source", "check", "read", "writable_dir", "writable_file", "write_json"]

KINDS = ("session", "tag", "report", "perflog")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class Source:
    kind: str
    value: str

    @property
    def option(self) -> str:
        return f"--{self.kind} {self.value}"

    @property
    def label(self) -> str:
        if self.kind == "session" and _UUID.fullmatch(self.value):
            return self.value[:8]
        if self.kind in ("report", "perflog"):
            return Path(self.value).name or self.value
        return self.value


def _report_files(value: str) -> list[str]:
    """The files a `--report` names: the file itself when it exists (its name may hold
    `[`), else the files its glob matches."""
    if glob.has_magic(value) and not os.path.exists(value):
        return sorted(glob.glob(value))
    return [value]


def check(src: Source) -> None:
    """Refuse a source that cannot be read, before anything is loaded (one line)."""
    if src.kind not in KINDS:
        raise ResultsError(f"unknown source --{src.kind}")
    if not src.value.strip():
        raise ResultsError(f"{src.option}: empty")
    if src.kind == "tag":
        tag_query(src.value.split(","))
    elif src.kind == "report":
        files = _report_files(src.value)
        if not files:
            raise ResultsError(f"{src.option}: no file matches")
        for f in files:
            if not os.path.isfile(f):
                raise ResultsError(f"{src.option}: {f} is not a file")
            if not os.access(f, os.R_OK):
                raise ResultsError(f"{src.option}: {f} is not readable")
    elif src.kind == "perflog":
        p = Path(src.value)
        if not p.exists():
            raise ResultsError(f"{src.option}: no such file or directory")
        if p.is_dir() and not any(p.rglob("*.log")):
            raise ResultsError(f"{src.option}: no perflog (*.log) under it")
        if p.is_file() and not os.access(p, os.R_OK):
            raise ResultsError(f"{src.option}: not readable")


def read(src: Source, need_figures: bool = True) -> ResultSet:
    """The figures of one source; raises ResultsError when it has none (without
    ``need_figures``: when it has neither figures nor test cases)."""
    if src.kind == "session":
        res = read_session(src.value)
    elif src.kind == "tag":
        res = read_session(tag_query(src.value.split(",")))
    elif src.kind == "report":
        parts = [(f, read_report_file(f)) for f in _report_files(src.value)]
        refuse_doubled(parts, "in two of its files")
        res = ResultSet()
        for _f, part in parts:
            res.extend(part)
    else:
        res = read_perflogs(src.value)
    if not res.records and (need_figures or not res.testcases):
        unread = f" ({res.unreadable} unreadable entries)" if res.unreadable else ""
        raise ResultsError(f"{src.option}: no performance figures in it{unread}")
    return res



"""What ``fabric-report acceptance`` may write over: only files it wrote itself.

Its outputs are the page (``DIR/index.html``), its charts (``DIR/ratios-*.png``) and its JSON
twin (``DIR/acceptance.json``, ``--json PATH``). An existing output is replaced only when it is
recognisably the command's own: a page that carries :data:`MARK` (or the sentence every page
before the mark said), a twin whose ``format`` is :data:`TWIN_FORMAT`, charts beside a page of
its own. Anything else (a user's ``index.html``, one of this run's input reports) is refused in
one line, before any work (exit 2); ``--force`` replaces a regular file that is not its own,
never an input of the run. Symlinks and special files are never replaced
(:mod:`fabrictest.report.records.outfiles`).
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from fabrictest.report.records.results import ResultsError

#: the page's own mark, in its <head>
MARK = '<meta name="generator" content="fabric-report acceptance">'
#: what every page said before it carried the mark (its first paragraph)
_OLD_MARK = "The JSON twin (acceptance.json) holds the same."
TWIN_FORMAT = "fabrictest-acceptance/2"  # /2: passing rows counted (report/acceptance/twin.py)
#: the formats of the twins it wrote before, still its own to replace
_OLD_FORMATS = ("fabrictest-acceptance/1",)
CHARTS = "ratios-*.png"
#: how much of an existing page or twin is read to recognise it
_READ = 64 << 20


def marked(page: str) -> str:
    """The page with its mark in its <head>."""
    head = '<meta charset="utf-8">'
    return page.replace(head, head + MARK, 1) if head in page else MARK + page


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(_READ).decode("utf-8", "replace")
    except OSError:
        return ""


def own_page(path: Path) -> bool:
    text = _head(path)
    return MARK in text or _OLD_MARK in text


def own_twin(path: Path) -> bool:
    try:
        doc = json.loads(_head(path))
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("format") in (TWIN_FORMAT, *_OLD_FORMATS)


def input_files(values: Iterable[str]) -> list[str]:
    """The files the run reads (globs expanded as the sources expand them)."""
    out = []
    for v in values:
        if glob.has_magic(v) and not os.path.exists(v):
            out += glob.glob(v)
        else:
            out.append(v)
    return [p for p in out if os.path.isfile(p)]


def _same(a: Path, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(outdir: Path, page: str, twin: str, json_path: str | None,
                  inputs: Sequence[str], force: bool) -> None:
    """Refuse (ResultsError, one line) an existing output that is an input of the run, or,
    without ``force``, one the command did not write."""
    wanted = [("-o", outdir / page, own_page), ("-o", outdir / twin, own_twin)]
    if json_path:
        wanted.append(("--json", Path(json_path), own_twin))
    page_ours = not (outdir / page).exists() or own_page(outdir / page)
    wanted += [("-o", c, lambda _p: page_ours) for c in sorted(outdir.glob(CHARTS))]
    for option, path, ours in wanted:
        if path.is_symlink() or not path.is_file():
            continue  # absent, or a symlink or special file: outfiles refuses those
        source = next((i for i in inputs if _same(path, i)), None)
        if source is not None:
            raise ResultsError(f"{option} {path}: is {source}, an input of this run: not "
                               "replaced")
        if not force and not ours(path):
            raise ResultsError(f"{option} {path}: exists and was not written by fabric-report "
                               "acceptance: not replaced (give --force to replace it)")

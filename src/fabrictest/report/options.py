"""What every `fabric-report` command's options share: the one-line usage error, the sources
(`--session`, `--tag`, `--report`, `--perflog`, in the order given), the number checks, and
reading a source with its notes on stderr."""

from __future__ import annotations

import argparse
import math
import sys

from fabrictest.report.records.results import ResultSet
from fabrictest.report.records.sources import Source, read


class Parser(argparse.ArgumentParser):
    """Bad usage is one line and exit 2, like every other refusal of this command."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


class _Source(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        kind = option_string.lstrip("-")
        ns.sources = [*(ns.sources or []), Source(kind, values)]


def add_sources(p: argparse.ArgumentParser,
                title: str = "sources (the first is the base, the second the target)") -> None:
    g = p.add_argument_group(title)
    g.add_argument("--session", action=_Source, metavar="UUID|QUERY")
    g.add_argument("--tag", action=_Source, metavar="KEY=VALUE[,KEY=VALUE]")
    g.add_argument("--report", action=_Source, metavar="FILE|GLOB")
    g.add_argument("--perflog", action=_Source, metavar="PATH")
    p.set_defaults(sources=[])


def tolerance(text: str) -> float:
    """A fraction in [0, 1): beyond it a figure regressed (1 or more could never fail for a
    rate, a negative one would call improvements regressions)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or not 0 <= value < 1:
        raise argparse.ArgumentTypeError(
            f"{text} is not a fraction in [0, 1) (0.1 means 10%)")
    return value


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def fraction(text: str) -> float:
    value = positive(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text} is not a fraction in (0, 1)")
    return value


class Loaded:
    def __init__(self, src: Source, res: ResultSet):
        self.label = src.label
        self.records = res.records
        self.testcases = res.testcases
        self.unreadable = res.unreadable
        self.sessions = res.sessions


def load(src: Source) -> Loaded:
    res = read(src)
    for note in res.notes:  # what was not read, and why
        print(f"fabric-report: note: {note}", file=sys.stderr)
    return Loaded(src, res)

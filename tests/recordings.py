"""Recorded tool outputs for the parser tests, found by file name.

tests/data/real-outputs/: public outputs of real clusters (SOURCES.md says where);
tests/data/seeds/: the outputs quoted in the users' documents; tests/data/real-outputs-local/:
our own runs of OSU 7.4 and IMB 2021.7 on this kind of machine. File names are unique across
the three.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
KINDS = ("real-outputs", "seeds", "real-outputs-local")


def recordings(pattern: str, *kinds: str) -> list[Path]:
    """The recordings matching a glob pattern, in the given kinds (default: all), sorted."""
    return [p for kind in (kinds or KINDS) for p in sorted((DATA / kind).glob(pattern))]


def read(name: str) -> str:
    """The text of the recording called `name`, wherever it is."""
    for kind in KINDS:
        path = DATA / kind / name
        if path.is_file():
            return path.read_text()
    raise FileNotFoundError(f"no recording {name} under {DATA}")

"""Slurm hostlists (`node[01-04,07]`, `a[1-2]b[3-4]`): the one way the package reads and
writes them, through the maintained python-hostlist library (the syntax Slurm's own hostlist
parser takes), with a size bound.

* `expand(text)`: the names, in order, each once; a hostlist that is not one (`node[3-1]`,
  `x[1-2`, `n[ 1-2]`, `node[[01-02]]`, `node[a-b]`, `node[-1-2]`) is a ParseError of one line;
* `compress(names)`: Slurm's compact form (`n9,n10,n11` -> `n[9-11]`), as
  `scontrol show hostlist` prints it;
* every hostlist expands to at most `MAX_NODES` names (100,000, python-hostlist's own bound
  for one range), over all its comma-separated parts together: `node[0-99999999]` is refused
  at once, before any name is made.
"""

from __future__ import annotations

import hostlist as _hostlist

from .errors import ParseError

#: names one hostlist may expand to (python-hostlist refuses a single range above it)
MAX_NODES = 100_000
#: characters of one hostlist text (a hostlist of MAX_NODES single names is ~1.2 MB)
MAX_TEXT = 4_000_000


def _parts(text: str) -> list[str]:
    """The comma-separated parts outside brackets (each expands on its own)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return [p for p in out if p]


def expand(text: str, what: str = "hostlist") -> list[str]:
    """The names of a Slurm hostlist, in order, each once ('' -> []); ParseError (one line
    naming `what`) for text that is not a hostlist or expands to more than MAX_NODES names."""
    if not isinstance(text, str):
        raise ParseError(f"{what}: expected a hostlist string, got {type(text).__name__}")
    text = text.strip()
    if not text:
        return []
    if len(text) > MAX_TEXT:
        raise ParseError(f"{what}: {len(text)} characters: longer than any hostlist of "
                         f"{MAX_NODES} names")
    shown = text if len(text) <= 60 else text[:57] + "..."
    if any(ch.isspace() for ch in text):
        raise ParseError(f"bad {what} {shown!r}: a hostlist has no spaces")
    names: list[str] = []
    seen: set[str] = set()
    for part in _parts(text):
        try:
            got = _hostlist.expand_hostlist(part)
        except _hostlist.BadHostlist as err:
            why = str(err)
            if "too large" in why:
                why = f"more than {MAX_NODES} names"
            raise ParseError(f"bad {what} {shown!r}: {why}") from None
        for name in got:
            if name not in seen:
                seen.add(name)
                names.append(name)
        if len(names) > MAX_NODES:
            raise ParseError(f"bad {what} {shown!r}: more than {MAX_NODES} names")
    return names


def compress(names) -> str:
    """Slurm's compact hostlist of `names` (sorted as Slurm sorts them; '' for none)."""
    names = [str(n) for n in names]
    if not names:
        return ""
    return _hostlist.collect_hostlist(names)


__all__ = ["MAX_NODES", "compress", "expand"]

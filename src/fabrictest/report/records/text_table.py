"""The one text table of ``fabric-report`` (``compare``, ``history``): left-aligned columns two
spaces apart under a row of dashes, no trailing blanks. Not ``tabulate``: it is no dependency of
``fabrictest`` (only ReFrame brings it), and its ``simple`` format pads and aligns columns
otherwise, which would change every recorded output for no gain."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(head: Sequence[object], body: Sequence[Sequence[object]]) -> str:
    """``head`` over a row of dashes over ``body``, each column as wide as its widest cell;
    every line ends with a newline."""
    rows = [[str(x) for x in row] for row in (head, *body)]
    widths = [max(len(x) for x in col) for col in zip(*rows, strict=False)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(x.ljust(w) for x, w in zip(cells, widths, strict=True)).rstrip()

    lines = [line(rows[0]), "  ".join("-" * w for w in widths)]
    lines += [line(row) for row in rows[1:]]
    return "\n".join(lines) + "\n"

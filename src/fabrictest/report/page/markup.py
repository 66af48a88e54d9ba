"""What every page of the report is made of: its style sheet, the one escaping of text, and
images (beside the page or embedded), so that each page is offline and reads alike."""

from __future__ import annotations

import base64
import html
from pathlib import Path

CSS = """
body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;color:#222;line-height:1.35}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:1.8em}
table{border-collapse:collapse;font-size:.82em;margin:.6em 0}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left}th{background:#eee}
td.num{text-align:right;font-family:monospace}
tr.REGRESSED td,tr.suspect td,tr.unreachable td,tr.fail td{background:#fbe3e3}
tr.improved td{background:#e3f4e3}tr.noise td{background:#f0f0f0}tr.new td,tr.missing td,tr.unreferenced td,tr.cleared td{background:#f6f3de}
tr.below-reference td{background:#fbe3e3}tr.borderline td,tr.ambiguous td{background:#fdf0d8}
tr.undecided td,tr.unmeasured td{background:#ececf6}
td.st-slow,td.st-below,td.st-unreachable{background:#f3b6b6;font-weight:bold}
td.st-borderline,td.st-ambiguous,td.st-noise{background:#fbe0b0}
td.st-undecided,td.st-unmeasured{background:#d9d9ef}
.verdict{font-family:monospace;background:#f4f4f4;padding:.6em;white-space:pre-wrap}
img{max-width:100%;border:1px solid #ddd;margin:.4em 0}
.note{color:#555;font-size:.85em}
"""


def escape(x) -> str:
    """Text for the page: None as empty, everything else escaped."""
    return html.escape("" if x is None else str(x))


def img(outdir: Path, name: str, embed: bool, alt: str) -> str:
    """An image of `outdir`: beside the page, or embedded (base64) with `embed`."""
    if embed:
        data = base64.b64encode((outdir / name).read_bytes()).decode()
        return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'
    return f'<img alt="{escape(alt)}" src="{escape(name)}">'

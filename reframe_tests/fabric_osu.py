"""The base of the OSU families (no tests are defined in this file): ``osu.py`` (point-to-point,
multi-pair, GPU-aware) and ``osu_collectives.py`` (collectives) share it.

A base module, not a family: the ``families-independent`` contract forbids a family to import
another, so what two families of one benchmark suite share lives in a ``fabric_<suite>.py``
module beside ``fabric_base.py``, which registers no test and imports no family
(docs/architecture.md, "Layers and their rules").

:class:`OsuBase`: the size options (``-m 1:TOP``, ``-i``; the quick profile's 64 KiB), the
largest size a run must reach (OSU's own default where none is asked: 4 MiB, 1 MiB for the
collectives), the parser, and :meth:`OsuBase.run_problems`: one run whole (every size, each
once, no line inside its table, the benchmark, direction and unit asked for), validated where
OSU printed ``Validation``, and physically possible: no rate above the partition's line rate
(``extras.line_rate_gbps``; the shared-memory ceiling where the ranks share one host), no
collective faster than its bytes can cross that link.
"""

from __future__ import annotations

import os

from fabric_base import FabricTest
from fabric_line_rate import link_rate
from fabric_types import Count
from reframe.core.builtins import run_after, variable

from fabrictest.parsers import physical
from fabrictest.parsers.osu import (
    DEFAULT_MAX_SIZE,
    above_line_rate,
    missing,
    parse_osu,
    too_fast,
)

#: the largest size of the quick profile (-m 1:64K)
QUICK_MAX_SIZE = 64 * 1024


class OsuBase(FabricTest):
    #: largest message size (-m); unset: the benchmark's default (4 MiB, collectives 1 MiB);
    #: quick profile: 64 KiB
    max_size = variable(Count, type(None), value=None)
    #: iterations (-i); unset: the benchmark's default
    osu_iterations = variable(Count, type(None), value=None)

    tags = {"fabric", "osu", "acceptance", "regression"}
    shaped_by = ("max_size", "osu_iterations")
    requires = ("osu",)

    def osu_binary(self, name: str) -> str:
        return self.binaries.osu(name)

    def default_top(self) -> int:
        """OSU's largest size without ``-m`` for this family's programs."""
        return DEFAULT_MAX_SIZE

    def top_size(self) -> int:
        """The largest size requested (-m 1:TOP), else OSU's default (:meth:`default_top`)."""
        return self.max_size or (QUICK_MAX_SIZE if self.size_profile == "quick"
                                 else self.default_top())

    def asked_top(self) -> int:
        """The largest size put on the command line (0: none, OSU's default)."""
        return self.max_size or (QUICK_MAX_SIZE if self.size_profile == "quick" else 0)

    def asked_iterations(self) -> int:
        """The iterations put on the command line (-i; 0: OSU's default)."""
        return self.osu_iterations or 0

    def asked_min(self) -> int:
        """The smallest size put on the command line (-m MIN:TOP); 1: OSU's own first size."""
        return 1

    def size_opts(self) -> list[str]:
        opts = []
        top, low = self.asked_top(), self.asked_min()
        if low > 1 and low > self.top_size():
            raise ValueError(f"{type(self).__name__}: smallest size {low} B is above the "
                             f"largest, {self.top_size()} B")
        if top or low > 1:
            top = top or self.top_size()
            opts += ["-m", f"{low}:{top}" if top > 1 else str(top)]
        if self.asked_iterations():
            opts += ["-i", str(self.asked_iterations())]
        return opts

    @run_after("setup")
    def record_top_size(self):
        self.record_shaping(max_size=self.top_size())

    def parse(self, text):
        return parse_osu(text)

    def run_problems(self, res, name: str, benchmark: str, links: int = 1,
                     one_host: bool = False) -> list[str]:
        """One OSU run of ``benchmark`` whole (every size up to the requested maximum),
        validated, and within what ``links`` links (or one host's memory) can carry."""
        min_size = self.asked_min() if self.asked_top() or self.asked_min() > 1 else None
        floor = physical.SHARED_TOP_FLOOR if one_host else physical.TOP_FLOOR
        problems = missing(res, max_size=self.top_size(), min_size=min_size, name=name,
                           benchmark=benchmark, top_floor=floor)
        if res.validated is False:
            problems.append(f"{name}: --validation reported a failure")
        rate, what = link_rate(self.current_partition, one_host)
        if rate is None:
            return [*problems, what]
        return (problems + above_line_rate(res, rate, links, name, what)
                + too_fast(res, rate, name, what))

    def executable_name(self) -> str:
        return os.path.basename(str(self.executable))

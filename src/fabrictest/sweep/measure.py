"""What is measured on a pair: the tx/rx tool or osu_bw, one direction per run.

Each measurement says which of its two ranks sends (`sender_rank`); the runner places that
rank on the sending node.
"""

from __future__ import annotations

import math
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..txrx.options import DEFAULT_MSG_SIZE, DEFAULT_NUM_BLKS, DEFAULT_NUM_CMSGS


class MeasurementError(RuntimeError):
    """The measurement ran but its output has no figure."""


def _console_script(name: str) -> str:
    """Absolute path of one of our console scripts (next to the interpreter), else the name."""
    cand = Path(sys.executable).parent / name
    if cand.exists():
        return str(cand)
    return shutil.which(name) or name


@dataclass
class Txrx:
    """`txrx` with one receiver (rank 0) and one transmitter (rank 1)."""

    sender_rank = 1

    method: str = "mpi"
    msg_size: int = DEFAULT_MSG_SIZE
    nmsg: int = 500
    num_blks: int = DEFAULT_NUM_BLKS
    num_cmsgs: int = DEFAULT_NUM_CMSGS
    timeout: float | None = None
    extra: Sequence[str] = ()
    exe: str = field(default_factory=lambda: _console_script("txrx"))
    unit: str = "Gbps"

    @property
    def name(self) -> str:
        return f"txrx-{self.method}"

    def argv(self) -> list[str]:
        argv = [
            self.exe, "--nrx", "1", "--nlink", "1", "--method", self.method,
            "--msg-size", str(self.msg_size), "--num-blks", str(self.num_blks),
            "--num-cmsgs", str(self.num_cmsgs), "--nmsg", str(self.nmsg),
        ]  # fmt: skip
        if self.timeout:
            argv += ["--timeout", f"{self.timeout:g}"]
        return argv + list(self.extra)

    def parse(self, text: str) -> float:
        """The slowest stream's rate, read through the tx/rx parser: a run that is not whole
        (its stream, rate or closing lines missing, a figure not finite) has no figure."""
        from ..parsers.txrx import missing, parse_txrx

        try:
            report = parse_txrx(text)
        except ValueError as err:
            raise MeasurementError(str(err)) from err
        rate = report.min_gbps()
        if rate is None:
            why = "; ".join(report.errors) or "no receiver data rate line"
            raise MeasurementError(why)
        lacking = missing(report, nrx=1, nlink=1)
        if lacking:
            raise MeasurementError("; ".join(lacking))
        return _figure(rate, "Gbps")


@dataclass
class OsuBw:
    """`osu_bw` at one message size (MB/s), the figure of its last row (rank 0 sends)."""

    sender_rank = 0

    exe: str = "osu_bw"
    size: int = 1 << 20
    extra: Sequence[str] = ()
    unit: str = "MB/s"
    timeout: float | None = None

    @property
    def name(self) -> str:
        return "osu_bw"

    def argv(self) -> list[str]:
        return [self.exe, "-m", f"{self.size}:{self.size}", *self.extra]

    def parse(self, text: str) -> float:
        """The bandwidth at the requested size, read through the OSU parser: an output of
        another benchmark (osu_latency's us are no MB/s), one cut short before the size, or a
        figure that is not a positive finite number gives no figure."""
        from ..parsers.osu import parse_osu

        try:
            result = parse_osu(text)
        except ValueError as err:
            raise MeasurementError(str(err)) from err
        if result.benchmark != "bw" or result.unit != "MB/s":
            raise MeasurementError(f"not osu_bw output: {result.title or result.benchmark!r} "
                                   f"in {result.unit or 'no unit'}")
        if result.cut_mid_line and result.rows and result.rows[-1].size == self.size:
            raise MeasurementError(f"osu_bw: output ends inside the {self.size} B row")
        try:
            value = result.at(self.size)
        except KeyError:
            last = f"last size {result.sizes()[-1]} B" if result.rows else "no rows"
            raise MeasurementError(f"osu_bw printed no row for {self.size} B ({last}: cut short?)"
                                   ) from None
        return _figure(value, "MB/s")


def _figure(value: float, unit: str) -> float:
    """A measured rate must be a positive finite number (inf, nan, 0 or below is no figure)."""
    if not math.isfinite(value) or value <= 0:
        raise MeasurementError(f"a rate of {value!r} {unit} is not a measurement")
    return float(value)

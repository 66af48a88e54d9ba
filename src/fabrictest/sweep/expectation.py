"""The expected per-pair rate from a calibrated reference, and the sides that fall below it.

The sweep's own verdict is relative: each node-direction against the cluster's level (the
median of the runs), which finds one bad node among good ones but calls a uniform drop of
every link `suspects: none`. With `--expect-from reference/SYSTEM.yaml` the sweep also holds
every side's figure, and the cluster level, against the reference of one tx/rx stream between
two nodes (`TxRxTest`, scenario `paired`, the sweep's method, host buffers: `stream_gbps`) and
its lower bound: a side below `reference x (1 + lower)` is a suspect `below reference`, and
the verdict says when the whole cluster is below.

Where the file holds the sweep's own level for this number of nodes (`SweepTest`
`cluster_level`, indexed by method and `num_nodes`, measured by healthy sweeps of that size)
that is the expectation instead: on the vcluster, 16 nodes on 2 cores sweep at 0.183 Gbps, not
the 4-node pair's 0.1897.

The reference must have been measured with the sweep's message size, blocks and control
messages (its `measured_with`), otherwise it is refused: a rate at another size is no
expectation. On a bed whose nodes share a host's cores (`measured_with: {host_cores: 2,
bed_nodes: 4}`, the vcluster) a pair's rate falls with the number of nodes the cores carry:
the reference applies to a sweep of `bed_nodes` nodes only, and is refused at any other size
(issue 42: healthy 16-node vcluster sweeps ran 5-12 % below the 4-node figure and named 4-11
healthy nodes). No rescaling: the load's effect is measured, not modelled. Without
`host_cores` (each node its own host: a real fabric, pairs disjoint) it applies at any size.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .. import references as refs
from .runs import OK, RunTable

TEST_CLASS = "TxRxTest"
FIGURE = "stream_gbps"
#: the sweep's own calibrated level per number of nodes (`$index: [$system, method,
#: num_nodes]`): on a shared bed a sweep of N nodes has its own rate (issue 42)
SWEEP_CLASS, SWEEP_FIGURE = "SweepTest", "cluster_level"
#: the sweep's txrx options that must equal what the reference was measured with
SHAPING = ("msg_size", "num_blks", "num_cmsgs")
#: `measured_with` keys of a bed whose nodes share a host: its cores, and the nodes on them
HOST_CORES, BED_NODES = refs.BED_KEYS


class ExpectationError(ValueError):
    """One line: why the reference cannot give the sweep its expected rate."""


#: rate units in bits per second (OSU's MB/s is 10^6 bytes a second)
RATE_BITS = {
    "bps": 1.0, "b/s": 1.0, "bit/s": 1.0,
    "kbps": 1e3, "Kbps": 1e3, "kb/s": 1e3, "Kb/s": 1e3, "kbit/s": 1e3, "Kbit/s": 1e3,
    "Mbps": 1e6, "Mb/s": 1e6, "Mbit/s": 1e6, "mbit": 1e6,
    "Gbps": 1e9, "Gb/s": 1e9, "Gbit/s": 1e9, "gbit": 1e9,
    "Tbps": 1e12, "Tb/s": 1e12, "Tbit/s": 1e12,
    "B/s": 8.0, "kB/s": 8e3, "KB/s": 8e3, "MB/s": 8e6, "GB/s": 8e9, "TB/s": 8e12,
    "KiB/s": 8.0 * 2**10, "MiB/s": 8.0 * 2**20, "GiB/s": 8.0 * 2**30,
}
#: a healthy pair of nodes runs between 1 Mbit/s and 10 Tbit/s: an expected figure outside is
#: in another unit (`--expect 1e-9` taken as Gbps is 1 bit/s, and every node passes it)
PLAUSIBLE_BITS = (1e6, 1e13)
#: a cluster level this many times its expected figure: the expectation is not of this
#: measurement (another unit, size or fabric), and it can fail nothing
ABOVE_FACTOR = 2.0
_RATE = re.compile(r"^\s*([-+0-9.eE_]+|[-+]?(?:nan|inf|infinity))\s*([A-Za-z/]+)?\s*$", re.I)


def parse_rate(text: str) -> tuple[float, str | None]:
    """`0.19`, `190Mbps`, `12000 MB/s` -> (number, unit or None); ValueError when it is not."""
    m = _RATE.match(str(text))
    if not m:
        raise ValueError(f"invalid rate {text!r} (a number, optionally with a unit: 100Gbps, "
                         "12000MB/s)")
    value = float(m[1].replace("_", ""))
    unit = m[2]
    if unit is not None and unit not in RATE_BITS:
        raise ValueError(f"unknown unit {unit!r} in {text!r} (one of Gbps, Mbps, GB/s, MB/s, "
                         "...)")
    return value, unit


def convert(value: float, unit: str, to: str) -> float:
    return value * RATE_BITS[unit] / RATE_BITS[to]


def implausible(value: float, unit: str) -> str | None:
    """Why `value` `unit` cannot be the figure of a healthy pair, or None."""
    if unit not in RATE_BITS:
        return None
    bits = value * RATE_BITS[unit]
    lo, hi = PLAUSIBLE_BITS
    if lo <= bits <= hi:
        return None
    return (f"{value:g} {unit} is {_bits_text(bits)}: a healthy pair runs at "
            f"{convert(lo, 'bps', unit):g} to {convert(hi, 'bps', unit):g} {unit} (is the "
            "unit right?)")


def _bits_text(bits: float) -> str:
    for unit, f in (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bits >= f:
            return f"{bits / f:.3g} {unit}"
    return f"{bits:.3g} bit/s"


@dataclass(frozen=True)
class Expectation:
    value: float  # a healthy run's figure
    lower: float  # fraction below which a figure fails (negative)
    unit: str
    source: str  # where it came from, for the verdict
    #: what the reference was measured with (its `measured_with`; empty for --expect)
    measured_with: dict | None = None

    @property
    def floor(self) -> float:
        return self.value * (1.0 + self.lower)

    def to_dict(self) -> dict:
        return asdict(self) | {"floor": self.floor}


def from_reference(path: str | Path, system: str | None, method: str,
                   shaping: dict[str, int], nodes: int | None = None) -> Expectation:
    """The expected stream rate for `method` on `system` (default: the file's stem), for a
    sweep of `nodes` nodes (None: any size)."""
    path = Path(path)
    try:
        ref_file = refs.load(path, require_provenance=False, system=system)
    except refs.ReferenceError as err:
        raise ExpectationError(str(err)) from None
    return from_reference_file(ref_file, method, shaping, nodes)


def bed_problem(measured: dict, nodes: int | None) -> str | None:
    """Why a reference measured on a shared bed cannot be a sweep of `nodes` nodes' rate."""
    cores = measured.get(HOST_CORES)
    if cores is None or nodes is None:
        return None
    bed = measured.get(BED_NODES)
    if bed is None:
        return (f"measured with {HOST_CORES}={cores} but no {BED_NODES}: on a shared host the "
                "rate depends on how many nodes its cores carry (calibrate with bed_nodes)")
    if bed != nodes:
        return (f"measured with {BED_NODES}={bed} on {HOST_CORES}={cores}, the sweep has "
                f"{nodes} nodes: a shared host's pair rate falls as its cores carry more nodes "
                f"(calibrate at {nodes} nodes, or give --no-reference)")
    return None


def _sweep_entry(ref_file: refs.ReferenceFile, method: str, nodes: int | None):
    """The sweep's own calibrated level for `method` at `nodes` nodes (`SweepTest`,
    `cluster_level`), with where it is; None when the file has none for that size."""
    if SWEEP_CLASS not in ref_file.classes or nodes is None:
        return None
    try:
        _keys, figures = refs.resolve(ref_file, SWEEP_CLASS, ref_file.system,
                                      {"method": method, "num_nodes": nodes})
    except KeyError:
        return None
    ref = figures.get(SWEEP_FIGURE)
    if ref is None:
        return None
    return ref, (f"{ref_file.path}: {SWEEP_CLASS} {method} {nodes} nodes {SWEEP_FIGURE} on "
                 f"{ref_file.system}"), (f"{ref_file.path.name} {SWEEP_CLASS} {method} "
                                         f"{nodes} nodes {SWEEP_FIGURE}")


def from_reference_file(ref_file: refs.ReferenceFile, method: str,
                        shaping: dict[str, int], nodes: int | None = None) -> Expectation:
    """:func:`from_reference` of a file already loaded (for its system): the sweep's own
    calibrated level at this size where the file has one, else the paired tx/rx rate."""
    path, system = ref_file.path, ref_file.system
    own = _sweep_entry(ref_file, method, nodes)
    if own is not None:
        ref, where, source = own
        return _checked(ref, where, source, shaping, nodes)
    where = f"{path}: {TEST_CLASS} paired {method} host {FIGURE} on {system}"
    if TEST_CLASS not in ref_file.classes:
        raise ExpectationError(f"{path}: no {TEST_CLASS} references (the expected pair rate)")
    params = {"scenario": "paired", "method": method, "buffer": "host", "span": "one"}
    try:
        _keys, figures = refs.resolve(ref_file, TEST_CLASS, system, params)
    except KeyError:
        raise ExpectationError(f"{where}: no such reference") from None
    ref = figures.get(FIGURE)
    if ref is None:
        raise ExpectationError(f"{where}: no such reference")
    return _checked(ref, where, f"{path.name} {TEST_CLASS} paired {method} {FIGURE}", shaping,
                    nodes)


def _checked(ref: refs.Reference, where: str, source: str, shaping: dict[str, int],
             nodes: int | None) -> Expectation:
    """`ref` as the sweep's expectation, or why it cannot be one (one line)."""
    if ref.lower is None or not -1.0 < ref.lower < 0.0:
        raise ExpectationError(f"{where}: lower bound {ref.lower} cannot fail a slow pair")
    if ref.unit and ref.unit != "Gbps":
        raise ExpectationError(f"{where}: unit {ref.unit}, the sweep measures Gbps")
    problem = implausible(ref.value, ref.unit or "Gbps")
    if problem:
        raise ExpectationError(f"{where}: {problem}")
    measured = ref.measured_with
    for name in SHAPING:
        if name in measured and measured[name] is not None and measured[name] != shaping[name]:
            raise ExpectationError(
                f"{where}: measured with {name}={measured[name]}, the sweep uses "
                f"{shaping[name]} (give --{name.replace('_', '-')} {measured[name]})")
    problem = bed_problem(measured, nodes)
    if problem:
        raise ExpectationError(f"{where}: {problem}")
    return Expectation(value=ref.value, lower=ref.lower, unit=ref.unit or "Gbps",
                       source=source, measured_with=dict(measured))


def below_text(figure: float, exp: Expectation) -> str:
    return (f"{100 * (1 - figure / exp.value):.0f}% below the expected {exp.value:g} "
            f"{exp.unit} ({exp.source}, lower bound {100 * exp.lower:+.1f}%)")


def cluster_line(center: float | None, exp: Expectation) -> str | None:
    """The verdict's line when the cluster level itself is below the reference band, or so far
    above it that the expectation cannot be of this measurement (it could fail nothing)."""
    if center is None:
        return None
    if center > ABOVE_FACTOR * exp.value:
        return (f"expectation off: cluster level {center:.3g} {exp.unit} is "
                f"{center / exp.value:.3g}x the expected {exp.value:g} {exp.unit} "
                f"({exp.source}): a figure of another unit, size or fabric, which cannot "
                f"fail a slow node (give a healthy run's figure in {exp.unit})")
    if center >= exp.floor:
        return None
    return f"below reference: cluster level {center:.3g} {exp.unit} is {below_text(center, exp)}"


def sides_below(table: RunTable, floor: float, cluster_wide: bool,
                named: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per side (2 * node + direction): its figure against the reference (geometric mean of
    its runs) and whether it is below `floor`.

    When the cluster as a whole is at its reference, a run is left out of a side's figure
    when the partner's other runs are below the floor (the partner explains it: a slow
    node's partners are not named with it). When the whole cluster is below (`cluster_wide`),
    every run counts: every side is measured against the reference, not against partners.
    `named` (per side): sides already named slow or unreachable explain their partners' runs
    too, whatever their other runs average (a 0.7x partner's two other runs may average above
    the floor by chance, and its healthy partner was named with it)."""
    n2 = 2 * len(table.nodes)
    ok = (table.status == OK) & (table.value > 0)
    src, dst = 2 * table.src[ok], 2 * table.dst[ok] + 1
    logv = np.log(table.value[ok])
    cut = math.log(floor)

    def bc(idx, w):
        return np.bincount(idx, weights=w, minlength=n2)

    total, count = bc(src, logv) + bc(dst, logv), bc(src, np.ones_like(logv)) + bc(
        dst, np.ones_like(logv))
    keep_s = np.ones(logv.size, dtype=bool)
    keep_r = np.ones(logv.size, dtype=bool)
    if not cluster_wide:
        with np.errstate(invalid="ignore", divide="ignore"):
            loo_r = (total[dst] - logv) / (count[dst] - 1)  # the receiver's other runs
            loo_s = (total[src] - logv) / (count[src] - 1)
        keep_s = ~(loo_r < cut)  # NaN (no other run): the partner cannot explain it
        keep_r = ~(loo_s < cut)
        if named is not None:
            keep_s &= ~named[dst]
            keep_r &= ~named[src]
    s = bc(src, logv * keep_s) + bc(dst, logv * keep_r)
    k = bc(src, keep_s.astype(float)) + bc(dst, keep_r.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        fig = np.where(k > 0, np.exp(s / np.maximum(k, 1)), np.nan)
    return fig, (k > 0) & (fig < floor)

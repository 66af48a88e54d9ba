"""The fabric's topology for `attribute` and `acceptance` (``--topology FILE|slurm``), a
refusal as one line."""

from __future__ import annotations

from fabrictest.parsers.topology import Topology
from fabrictest.report.records.results import ResultsError
from fabrictest.topology_source import TopologyError, read_topology


def load_topology(spec: str, routing: str | None = None) -> Topology:
    """``--topology``: ResultsError (one line) when it cannot be read."""
    try:
        return read_topology(spec, routing=routing)
    except TopologyError as err:
        raise ResultsError(str(err)) from None

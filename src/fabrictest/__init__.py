"""fabrictest: an interconnect regression suite (tx/rx tool, parsers, sweep, report, vcluster)."""

__version__ = "0.1.0"

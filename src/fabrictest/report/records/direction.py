"""Which way is better for a figure: the reference files' rule (a rate is bounded from below,
a time from above) is the report's too; it lives in :mod:`fabrictest.references.direction`."""

from fabrictest.references.direction import (
    AMBIGUOUS_UNITS,
    HIGHER,
    LOWER,
    NEUTRAL_UNITS,
    TIME_UNITS,
    better,
    is_time,
    lower_is_better,
)

__all__ = ["AMBIGUOUS_UNITS", "HIGHER", "LOWER", "NEUTRAL_UNITS", "TIME_UNITS", "better",
           "is_time", "lower_is_better"]

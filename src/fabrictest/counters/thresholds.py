"""A system's counter thresholds (pure): ``<reference dir>/counters/<system>.yaml``.

.. code-block:: yaml

    $provenance:
      document: "the site's fabric acceptance notes, section ..."
    errors:
      default: 0           # every error counter not named: any increase fails
      symbol_error: 100    # a few symbol errors per test are normal on this cabling
    ignore: [rx_errors]    # counters this site does not judge (a driver known to miscount)
    unknown: unread        # a counter whose increase is unknown: unread (default) or fail

``$provenance`` is required. A threshold is a count of errors per test, from 0 up to less
than the most the counter can count (``2**64 - 1`` for every error counter some source reads
64 bits wide): a threshold no increase can pass, such as ``1e21``, can never fail and is
refused. ``unknown`` is the rule for a counter whose increase cannot be known (saturated at its
maximum, reset, read at two widths): ``unread`` makes the verdict say it could not be judged
(a test fails saying so, ``--diff`` exits 3), ``fail`` counts it as a failure (exit 1). Either
way it never passes as "+0".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .kinds import ERROR, KINDS, maximum, widest

#: what a counter whose increase is unknown does
UNKNOWN_RULES = ("unread", "fail")
KEYS = ("$provenance", "errors", "ignore", "unknown")


def _count(name: str, value) -> int:
    """A threshold: a whole count from 0 to below the counter's maximum."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"errors.{name}: {value!r} is not a count >= 0")
    top = maximum(64 if name == "default" else widest(name))
    if value >= top:
        raise ValueError(f"errors.{name}: {value} can never be exceeded (the counter holds at "
                         f"most {top}): a threshold that cannot fail")
    return value


@dataclass
class Thresholds:
    """The largest increase of each error counter a test may see (default ``errors_default``);
    ``ignore``: counters a site does not judge at all; ``unknown``: the rule for an increase
    that cannot be known (:data:`UNKNOWN_RULES`)."""

    errors_default: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    ignore: frozenset[str] = frozenset()
    provenance: dict = field(default_factory=dict)
    unknown: str = "unread"

    @classmethod
    def from_dict(cls, doc) -> Thresholds:
        """From the YAML document; ValueError naming what is wrong."""
        if doc is None:
            return cls()
        if not isinstance(doc, dict):
            raise ValueError("a counters file is a mapping")
        unknown_keys = set(doc) - set(KEYS)
        if unknown_keys:
            raise ValueError(f"unknown keys {sorted(map(str, unknown_keys))} "
                             f"(use {', '.join(KEYS)})")
        if "$provenance" not in doc:
            raise ValueError("no $provenance: say where the thresholds come from")
        if not isinstance(doc["$provenance"], dict):
            raise ValueError("$provenance: a mapping (document, note ...)")
        errors = doc.get("errors") or {}
        if not isinstance(errors, dict):
            raise ValueError("errors: a mapping of counter names to counts")
        errors = dict(errors)
        default = _count("default", errors.pop("default", 0))
        known = sorted(k for k, v in KINDS.items() if v == ERROR)
        for name, value in errors.items():
            if KINDS.get(name) != ERROR:
                raise ValueError(f"errors.{name}: not an error counter (known: "
                                 f"{', '.join(known)})")
            _count(name, value)
        ignore = doc.get("ignore") or []
        if not isinstance(ignore, list):
            raise ValueError("ignore: a list of counter names")
        bad = [n for n in ignore if n not in KINDS]
        if bad:
            raise ValueError(f"ignore: unknown counters {bad}")
        rule = doc.get("unknown", "unread")
        if rule not in UNKNOWN_RULES:
            raise ValueError(f"unknown: {rule!r} is not one of {', '.join(UNKNOWN_RULES)}")
        return cls(default, errors, frozenset(ignore), dict(doc["$provenance"]), rule)

    def limit(self, name: str) -> int:
        return self.errors.get(name, self.errors_default)

    def times(self, spans: int) -> Thresholds:
        """The allowance of ``spans`` tests together (a whole run): each limit times ``spans``."""
        return Thresholds(self.errors_default * spans,
                          {k: v * spans for k, v in self.errors.items()}, self.ignore,
                          self.provenance, self.unknown)

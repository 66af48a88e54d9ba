"""References for the suite's tests, mixed into :class:`fabric_base.FabricTest`.

* ``reference/<system>.yaml`` (``$ref``, resolved after setup so that ``$system`` is known),
  validated by ``fabrictest.references`` (a bound that can never fail fails the test);
* every reported performance variable needs a reference whose unit is its own and that was
  measured with this run's shaping variables (``shaped_by``): otherwise the test fails with
  "no reference ..." (or, with ``-S missing_reference=warn``, warns) instead of passing on any
  value;
* per-item figures (per link, per node) judged against their headline's reference
  (``reference_aliases``);
* a performance failure that says where and by how much: ``node03 (pairs-of-three, stream
  node03->node01): stream_gbps 0.0477 Gbps is 75 % below its reference 0.19 (lower bound
  -20 %)``; families name the place in :meth:`ReferenceChecks.figure_place`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import PerformanceError, ReferenceParseError
from reframe.core.logging import getlogger

from fabrictest import references as refs

REFERENCE_DIR = Path(__file__).resolve().parents[1] / "reference"


def miss_words(value: float, ref: float, lower, upper) -> str:
    """``is 15 % below its reference 0.19 (lower bound -5 %)`` (or above and the upper bound)."""
    above = upper is not None and value > ref * (1 + upper) if ref >= 0 else False
    bound = f"upper bound +{upper * 100:.3g} %" if above else (
        f"lower bound {lower * 100:.3g} %" if lower is not None else "no lower bound")
    side = "above" if above else "below"
    if not ref:
        return f"is {side} its reference {ref:.4g} ({bound})"
    change = abs(value - ref) / abs(ref) * 100
    return f"is {change:.3g} % {side} its reference {ref:.4g} ({bound})"



class ReferenceChecks(rfm.RegressionTestPlugin):
    """Reference loading, the missing-reference policy and the placed failure message."""

    #: what a missing reference does: 'fail' (default) or 'warn'
    missing_reference = variable(typ.Str[r"fail|warn"], value="fail")
    #: reference file under the reference prefix; default '<system>.yaml'
    reference_file = variable(str, value="")
    #: regexes of informational performance variables that need no reference
    informational_perf_vars = variable(typ.List[str], value=[])
    #: {regex: headline}: per-item variables checked against the headline's reference
    reference_aliases = variable(typ.Dict[str, str], value={})
    #: set by the base before the performance stage: the effective values of the shaping
    #: variables this run's figures were measured with (the run report carries it, and
    #: `fabric-report calibrate` writes it as the reference's `measured_with`); not an input
    measured_with = variable(dict, value={})

    #: the variables that change what the figures measure (see fabrictest.references); each
    #: family lists them and returns their effective values from :meth:`shaping`
    shaped_by: tuple[str, ...] = ()


    def reference_path(self) -> str:
        prefix = rt.runtime().get_option("general/0/reference_prefix") or str(REFERENCE_DIR)
        name = self.reference_file or f"{self.current_system.name}.yaml"
        return os.path.join(prefix, name)

    @run_after("setup")
    def _set_reference(self):
        self._reference_problem, self._ref_file = None, None
        path = self.reference_path()
        if not os.path.isfile(path):
            self._reference_problem = f"no reference file {path}"
            return
        try:  # the loader's checks: a bad file (a bound that can never fail...) fails the test
            self._ref_file = refs.load(path, False, system=self.current_system.name)
        except refs.ReferenceError as err:
            raise ReferenceParseError(f"{err} ({path})") from None
        self.reference = {"$ref": path}
        if type(self).__name__ not in self._ref_file.classes:
            self._reference_problem = f"{type(self).__name__} has no entry in {path}"

    def _reference_leaf(self) -> tuple[dict, tuple, dict]:
        """ReFrame's (mutable) reference leaf for this test, its key path in the file and the
        parsed references; empty when there is none."""
        if self._reference_problem or not self.reference.index:
            return {}, (), {}
        name = type(self).__name__
        params = {k: getattr(self, k, "?") for k in self.reference.index if not k[0] == "$"}
        try:
            leaf = self.reference[self]
            keys, parsed = refs.resolve(self._ref_file, name, self.current_system.name, params)
        except KeyError as err:
            where = [f"$system={self.current_system.name}"]
            where += [f"{k}={v}" for k, v in params.items()]
            self._reference_problem = (
                f"{name} has no reference for {', '.join(where)} "
                f"in {self.reference_path()} (missing key {err})"
            )
            return {}, (), {}
        return (leaf if isinstance(leaf, dict) else {}), keys, parsed

    def shaping(self) -> dict:
        """The effective value of each ``shaped_by`` variable in this run (None: does not apply
        to it), e.g. ``{'msg_size': 65536, 'nmsg': 20000}``."""
        return {}

    def _informational(self, var: str) -> bool:
        return any(re.fullmatch(p, var) for p in self.informational_perf_vars)

    def dynamic_perf_variables(self) -> dict:
        """Performance variables known only from the output (per link, per node, per size):
        {name: (value, unit)}. Called before the performance stage; output may be absent."""
        return {}

    @run_before("performance")
    def _apply_reference_aliases(self):
        try:
            extra = self.dynamic_perf_variables()
        except Exception as err:  # no or unreadable output: sanity has said why
            getlogger().debug(f"{self.display_name}: no per-item performance variables: {err}")
            extra = {}
        for name, (value, unit) in extra.items():
            self.perf_variables[name] = sn.make_performance_function(sn.defer(value), unit)
        leaf, keys, parsed = self._reference_leaf()
        shaping = self.shaping()
        if set(shaping) != set(self.shaped_by):
            raise PerformanceError(f"{type(self).__name__}.shaping() gives {sorted(shaping)}, "
                                   f"shaped_by lists {sorted(self.shaped_by)}")
        self.measured_with = dict(shaping)  # None: does not apply to this run (still listed)
        name, system = type(self).__name__, self.current_system.name
        units = {v: getattr(f, "unit", None) for v, f in self.perf_variables.items()}
        self._unit_errors, self._refused = [], {}
        if leaf:
            self._unit_errors = refs.unit_mismatches(self._ref_file, name, keys, parsed, units)
            # a figure measured with other shaping values is not judged against them
            self._refused = refs.refusals(self._ref_file, name, system, keys, leaf, shaping)
        for var in self._refused:
            del leaf[var]
        for var in list(self.perf_variables):
            if var in leaf:
                continue
            for pattern, headline in self.reference_aliases.items():
                if re.fullmatch(pattern, var) and headline in leaf:
                    leaf[var] = leaf[headline]
                    break
                if re.fullmatch(pattern, var) and headline in self._refused:
                    self._refused[var] = self._refused[headline]
                    break
        self._unreferenced = [
            v for v in self.perf_variables if v not in leaf and not self._informational(v)
        ]

    @run_after("performance")
    def _report_missing_reference(self):
        if self.is_dry_run():
            return
        if self._unit_errors:  # a wrong file, not a missing figure: never only a warning
            raise PerformanceError("; ".join(self._unit_errors))
        if not self._unreferenced:
            return
        reason = self._reference_problem or (
            f"{type(self).__name__} on {self.current_system.name} lacks "
            f"{', '.join(self._unreferenced)} in {self.reference_path()}"
        )
        plain = [v for v in self._unreferenced if v not in self._refused]
        parts = [f"no reference for {', '.join(plain)}: {reason}"] if plain else []
        for why in dict.fromkeys(self._refused[v] for v in self._unreferenced if v in self._refused):
            figures = [v for v in self._unreferenced if self._refused.get(v) == why]
            parts.append(f"{why} (figures {', '.join(figures)})")
        msg = "; ".join(parts)
        if self.missing_reference == "warn":
            getlogger().warning(f"{self.display_name}: {msg}")
        else:
            raise PerformanceError(msg + " (use -S missing_reference=warn to only warn)")


    def figure_place(self, var: str, failed: set[str]) -> tuple[str, str]:
        """(who, where) of figure ``var``: the node(s) to look at (``node03``) and what the
        figure measured (``stream node03->node01``); ``failed`` holds every failing figure of
        the run. Default: nothing beyond the scenario."""
        return "", ""

    def headline_of(self, var: str) -> str:
        """The figure whose reference ``var`` is judged against (itself unless aliased)."""
        for pattern, headline in self.reference_aliases.items():
            if re.fullmatch(pattern, var):
                return headline
        return var

    def _placed_failures(self, reframe_message: str) -> str:
        failed = {key.rsplit(":", 1)[-1]: v for key, v in self._perfvalues.items()
                  if v[-1] == "fail"}
        lines, figures = [], []
        for var, (value, ref, lower, upper, unit, _result) in failed.items():
            try:
                who, where = self.figure_place(var, set(failed))
            except Exception as err:  # noqa: BLE001 - the verdict stands without the place
                getlogger().debug(f"{self.display_name}: no place for {var}: {err}")
                who, where = "", ""
            context = ", ".join(x for x in (getattr(self, "scenario", ""), where) if x)
            subject = f"{who} ({context})" if who and context else (who or context)
            drop = miss_words(value, ref, lower, upper)
            lines.append(f"{subject}: {self.headline_of(var)} {value:.3g} {unit} {drop}")
            if self.headline_of(var) == var:  # ReFrame's wording, for the headline figures
                low, high = sn.reference_bounds(ref, lower, upper)
                figures.append(f"{var}={value} {unit}, expected {ref} (l={low}, u={high})")
        if not lines:
            return reframe_message
        tail = f" [{'; '.join(figures)}]" if figures else ""
        return "failed to meet reference(s): " + "; ".join(dict.fromkeys(lines)) + tail

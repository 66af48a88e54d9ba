"""References for the suite's tests, mixed into :class:`fabric_base.FabricCheck`.

* ``reference/<system>.yaml`` (:func:`reference_path`), loaded once after setup and validated
  by ``fabrictest.references`` (a bound that can never fail fails the test); before the
  performance stage ReFrame is handed, as ``reference``, the ``$index`` reference of exactly
  the figures this run is judged on (``fabrictest.references.for_reframe``): ReFrame reads no
  file, and its reference data is never edited after it has it;
* every reported performance variable needs a reference whose unit is its own and that was
  measured with this run's shaping variables (``shaped_by``): otherwise the test fails with
  "no reference ..." (or, with ``-S missing_reference=warn``, warns) instead of passing on any
  value;
* per-item figures (per link, per node) judged against their headline's reference
  (``reference_aliases``);
* a performance failure that says where and by how much: ``node03 (pairs-of-three, stream
  node03->node01): stream_gbps 0.0477 Gbps is 75 % below its reference 0.19 (lower bound
  -20 %)``; families name the place in :meth:`ReferenceChecks.figure_place`. The reference,
  its bounds and the accepted interval are the checked reference's the figure was judged
  against (the object ReFrame's tuple was made from), not recomputed from ReFrame's verdict.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import PerformanceError, ReferenceParseError, ReframeFatalError
from reframe.core.logging import getlogger

from fabrictest import references as refs


def reference_prefix() -> str | None:
    """ReFrame's ``reference_prefix`` (its configuration, or ``RFM_REFERENCE_PREFIX``); None
    outside a ReFrame session (then ``RFM_REFERENCE_PREFIX`` and the repository's reference/
    apply: :func:`fabrictest.references.reference_dir`)."""
    try:
        return rt.runtime().get_option("general/0/reference_prefix") or None
    except ReframeFatalError:  # no runtime: a test of the plugin outside ReFrame
        return None


def reference_path(system: str, file: str = "") -> str:
    """The reference file of ``system``: ``file`` (default ``<system>.yaml``) in the reference
    directory every reader uses (:func:`fabrictest.references.reference_dir`: ReFrame's
    ``reference_prefix``, else ``RFM_REFERENCE_PREFIX``, else the repository's
    ``reference/``)."""
    return str(refs.reference_file(system, file, reference_prefix()))


def _g(x) -> str:
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


def miss_words(value: float, reference: refs.Reference) -> str:
    """``is 15 % below its reference 0.19 (lower bound -5 %)`` (or above and the upper bound):
    the figure against the checked reference it was judged against."""
    ref, lower, upper = reference.value, reference.lower, reference.upper
    above = value > reference.bounds()[1] if ref >= 0 else False
    bound = f"upper bound +{upper * 100:.3g} %" if above else (
        f"lower bound {lower * 100:.3g} %" if lower is not None else "no lower bound")
    side = "above" if above else "below"
    if not ref:
        return f"is {side} its reference {ref:.4g} ({bound})"
    change = abs(value - ref) / abs(ref) * 100
    return f"is {change:.3g} % {side} its reference {ref:.4g} ({bound})"


@sn.deferrable
def printable(value):
    """A figure without float noise (1.7380000000000001e-06 -> 1.738e-06): 10 significant
    digits, more than any benchmark prints or any measurement resolves."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.10g}")
    return value


@dataclass
class ReferenceState:
    """What the references plugin learnt about one test case (kept in one attribute of ours,
    apart from ReFrame's own state): the loaded file, why there is no reference, and, before
    the performance stage, the figures with no usable reference and unit mismatches."""

    file: refs.ReferenceFile | None = None
    problem: str | None = None
    unit_errors: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    unreferenced: list[str] = field(default_factory=list)
    #: the figures handed to ReFrame and the checked reference each is judged against (a
    #: per-item figure: its headline's); ReFrame's tuples are made from these objects
    judged: dict[str, refs.Reference] = field(default_factory=dict)
    #: why the figures the file gives no reference on this system are informational here
    informational: str | None = None


#: (class, system) pairs whose informational figures this run has already said
_SAID_INFORMATIONAL: set[tuple[str, str]] = set()


class ReferenceChecks(rfm.RegressionTestPlugin):
    """Reference loading, the missing-reference policy and the placed failure message."""

    #: what a missing reference does: 'fail' (default) or 'warn'
    missing_reference = variable(str, value="fail")
    #: reference file under the reference prefix; default '<system>.yaml'
    reference_file = variable(str, value="")
    #: regexes of informational performance variables that need no reference
    informational_perf_vars = variable(typ.List[str], value=[])
    #: set by the base before the performance stage: the figures informational on this system
    #: (its reference file's `informational:` reason; the run report carries it); not an input
    informational_here = variable(typ.List[str], value=[])
    #: {regex: headline}: per-item variables checked against the headline's reference
    reference_aliases = variable(typ.Dict[str, str], value={})
    #: set by the base before the performance stage: the effective values of the shaping
    #: variables this run's figures were measured with (the run report carries it, and
    #: `fabric-report calibrate` writes it as the reference's `measured_with`); not an input
    measured_with = variable(dict, value={})

    #: the variables that change what the figures measure (see fabrictest.references): each a
    #: variable of the family; :meth:`shaping` gives their effective values in a run
    shaped_by: tuple[str, ...] = ()

    def reference_path(self) -> str:
        return reference_path(self.current_system.name, self.reference_file)

    @run_after("setup")
    def _load_reference(self):
        """The reference file, loaded and validated once (a bad file fails the test); ReFrame
        is handed what this run is judged against before the performance stage."""
        self.reference_state = state = ReferenceState()
        path = self.reference_path()
        if not os.path.isfile(path):
            state.problem = f"no reference file {path}"
            return
        try:  # the loader's checks: a bad file (a bound that can never fail...) fails the test
            state.file = refs.load(path, False, system=self.current_system.name)
        except refs.ReferenceError as err:
            raise ReferenceParseError(f"{err} ({path})") from None
        if type(self).__name__ not in state.file.classes:
            state.problem = f"{type(self).__name__} has no entry in {path}"
        else:
            state.informational = state.file.classes[type(self).__name__].informational_reason(
                self.current_system.name)

    def reference_entry(self) -> tuple[tuple[str, ...], dict]:
        """This test's entry in the reference file: its key path and its references (found the
        way ReFrame's ``$index`` lookup finds them); empty when there is none."""
        state = self.reference_state
        if state.file is None or state.problem:
            return (), {}
        name, system = type(self).__name__, self.current_system.name
        index = state.file.classes[name].index
        # a shaping variable in the index is looked up by the value it took in this run
        # (BisectionTest's num_nodes: None asks for the partition's nodes, 16 is what ran)
        effective = self.shaping()
        params = {k: effective[k] if effective.get(k) is not None else getattr(self, k, "?")
                  for k in index if not k.startswith("$")}
        try:
            return refs.resolve(state.file, name, system, params)
        except KeyError as err:
            where = [f"$system={system}"] + [f"{k}={v}" for k, v in params.items()]
            state.problem = (
                f"{name} has no reference for {', '.join(where)} "
                f"in {self.reference_path()} (missing key {err})"
            )
            return (), {}

    # -- what shaped the figures ----------------------------------------------------------
    def shaping(self) -> dict:
        """The effective value of each ``shaped_by`` variable in this run, e.g.
        ``{'nmsg': 20000, 'transport': None}``: what :meth:`record_shaping` recorded for it,
        else the variable's own value (None: does not apply to this run)."""
        used = getattr(self, "shaping_used", None) or {}
        return {name: used[name] if name in used else getattr(self, name)
                for name in self.shaped_by}

    def record_shaping(self, **values) -> None:
        """Record the value a ``shaped_by`` variable took in this run where it is not the
        variable's own (``nmsg=0`` resolved to the size profile's count; ``None``: does not
        apply to this run). Refuses a name ``shaped_by`` does not list."""
        unknown = sorted(set(values) - set(self.shaped_by))
        if unknown:
            raise ValueError(f"{type(self).__name__}: {', '.join(unknown)} not in shaped_by")
        self.shaping_used = {**(getattr(self, "shaping_used", None) or {}), **values}

    def informational(self, var: str) -> bool:
        """Figure ``var`` needs no reference (``informational_perf_vars``)."""
        return any(re.fullmatch(p, var) for p in self.informational_perf_vars)

    def dynamic_perf_variables(self) -> dict:
        """Performance variables known only from the output (per link, per node, per size):
        {name: (value, unit)}. Called before the performance stage; output may be absent."""
        return {}

    @run_before("performance")
    def _hand_reference(self):
        """Decide which figure is judged against which reference, and hand ReFrame exactly
        that (:func:`fabrictest.references.for_reframe`): a figure measured with other shaping
        values, or with no entry, is not judged by ReFrame and is reported after it."""
        try:
            extra = self.dynamic_perf_variables()
        except Exception as err:  # no or unreadable output: sanity has said why
            getlogger().debug(f"{self.display_name}: no per-item performance variables: {err}")
            extra = {}
        for name, (value, unit) in extra.items():
            self.perf_variables[name] = sn.make_performance_function(sn.defer(value), unit)
        state = self.reference_state
        keys, found = self.reference_entry()
        shaping = self.shaping()
        self.measured_with = dict(shaping)  # None: does not apply to this run (still listed)
        name, system = type(self).__name__, self.current_system.name
        units = {v: getattr(f, "unit", None) for v, f in self.perf_variables.items()}
        if found:
            state.unit_errors = refs.unit_mismatches(state.file, name, keys, found, units)
            # a figure measured with other shaping values is not judged against them
            state.refused = refs.refusals(state.file, name, system, keys, found, shaping)
        for var, ref in (found or {}).items():  # a loose bound says, every run, what it catches
            if var not in state.refused and ref.outside_strict_band():
                getlogger().info(
                    f"{self.display_name}: {var} {' and '.join(ref.outside_strict_band())} "
                    f"(loose: {ref.loose_reason})")
        judged = {}  # figure -> the figure of the file whose bounds it takes
        for var in self.perf_variables:
            source = var if var in found else self.headline_of(var)
            if source in state.refused:
                state.refused.setdefault(var, state.refused[source])
            elif source in found:
                judged[var] = source
        unjudged = [v for v in self.perf_variables if v not in judged and v not in state.refused
                    and not self.informational(v)]
        if state.informational:  # figures this system's file declares informational
            self.informational_here = unjudged
            if unjudged and (name, system) not in _SAID_INFORMATIONAL:
                _SAID_INFORMATIONAL.add((name, system))
                getlogger().info(f"{name} on {system}: {', '.join(unjudged)} informational "
                                 f"here, not judged ({state.informational})")
            unjudged = []
        state.unreferenced = unjudged + [
            v for v in self.perf_variables if v not in judged and v in state.refused
            and not self.informational(v)]
        state.judged = {var: found[source] for var, source in judged.items()}
        self.reference = refs.for_reframe(state.file, name, keys, judged) if judged else {}
        for var, func in list(self.perf_variables.items()):  # what ReFrame prints and stores
            self.perf_variables[var] = sn.make_performance_function(printable(func), func.unit)

    @run_after("performance")
    def _report_missing_reference(self):
        if self.is_dry_run():
            return
        state = self.reference_state
        if state.unit_errors:  # a wrong file, not a missing figure: never only a warning
            raise PerformanceError("; ".join(state.unit_errors))
        if not state.unreferenced:
            return
        reason = state.problem or (
            f"{type(self).__name__} on {self.current_system.name} lacks "
            f"{', '.join(state.unreferenced)} in {self.reference_path()}"
        )
        refused, unreferenced = state.refused, state.unreferenced
        plain = [v for v in unreferenced if v not in refused]
        parts = [f"no reference for {', '.join(plain)}: {reason}"] if plain else []
        for why in dict.fromkeys(refused[v] for v in unreferenced if v in refused):
            figures = [v for v in unreferenced if refused.get(v) == why]
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

    def placed_failures(self, reframe_message: str) -> str:
        """ReFrame's performance failure reworded: each failing figure with its place and the
        size of its drop. Which figures failed and their values are ReFrame's verdict (its
        public ``perfvalues``); the reference, its bounds and the accepted interval are those of
        the checked reference the figure was handed to ReFrame from (``judged``)."""
        failed = {key.rsplit(":", 1)[-1]: v for key, v in self.perfvalues.items()
                  if v[-1] == "fail"}
        state = getattr(self, "reference_state", None)
        judged = state.judged if state is not None else {}
        lines, figures = [], []
        for var, (value, *handed, unit, _result) in failed.items():
            # ReFrame's own tuple only for a figure not handed to it from a checked reference
            # (none: the base hands every one it judges)
            reference = judged.get(var) or refs.Reference(*handed, unit)
            try:
                who, where = self.figure_place(var, set(failed))
            except Exception as err:  # noqa: BLE001 - the verdict stands without the place
                getlogger().debug(f"{self.display_name}: no place for {var}: {err}")
                who, where = "", ""
            context = ", ".join(x for x in (getattr(self, "scenario", ""), where) if x)
            subject = f"{who} ({context})" if who and context else (who or context)
            drop = miss_words(value, reference)
            lines.append(f"{subject}: {self.headline_of(var)} {value:.4g} {unit} {drop}")
            if self.headline_of(var) == var:  # ReFrame's wording, for the headline figures
                low, high = reference.bounds()
                figures.append(f"{var}={value:.4g} {unit}, expected {reference.value:.4g} "
                               f"(l={_g(low)}, u={_g(high)})")
        if not lines:
            return reframe_message
        tail = f" [{'; '.join(figures)}]" if figures else ""
        return "failed to meet reference(s): " + "; ".join(dict.fromkeys(lines)) + tail

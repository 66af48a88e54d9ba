"""What values of the families' variables make sense, checked when a test is made (before any
build or run): ``-S nmsg=0``, ``-S loss_tolerance=nan`` or ``-S max_growth=inf`` would run and
pass a check that can no longer fail; they are refused with one line instead.

One rule per variable name (a name means the same in every family that has it), and every
variable a family declares has one: tests/reframe/test_variables.py fails on a variable
without a rule, and on one whose type ReFrame cannot convert an ``-S`` string to without a
traceback (the kinds of :mod:`fabric_types`: an ``-S`` value that is not of its kind,
``-S nmsg=abc``, reaches its rule as text and is refused here). A variable left unset is
``None`` (its family then takes the profile's or the partition's value): an explicit 0 is
never a silent "default". A family adds rules that need more than one value
(``value_problems()``: an injection no run can make). Pure: no ReFrame here, the base
(:mod:`fabric_base`) calls :func:`problems` from an after-init hook.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

#: the largest count any variable takes (a message count past 2**40 is a typing error: days)
MAX_COUNT = 1 << 40


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def positive_count(v: Any) -> str | None:
    if not _is_int(v) or not 1 <= v <= MAX_COUNT:
        return f"must be a whole number from 1 to {MAX_COUNT} (leave it unset for the default)"
    return None


def between(lo: float, hi: float, lo_open: bool = False, hi_open: bool = False):
    """A finite number in [lo, hi] (either end open)."""
    def rule(v: Any) -> str | None:
        ok = _is_real(v) and math.isfinite(v)
        ok = ok and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok:
            left, right = "(" if lo_open else "[", ")" if hi_open else "]"
            return f"must be a finite number in {left}{lo:g}, {hi:g}{right}"
        return None
    return rule


def whole_between(lo: int, hi: int):
    def rule(v: Any) -> str | None:
        if not _is_int(v) or not lo <= v <= hi:
            return f"must be a whole number from {lo} to {hi}"
        return None
    return rule


def auto_or(rule: Callable[[Any], str | None], auto: float, means: str = "the partition's"):
    """``auto`` (the documented "take it from the partition" value) or what ``rule`` accepts."""
    def either(v: Any) -> str | None:
        if v == auto and not isinstance(v, bool):
            return None
        why = rule(v)
        return None if why is None else f"{why}, or {auto:g} ({means})"
    return either


def choice(*values: str):
    """One of ``values``."""
    def rule(v: Any) -> str | None:
        if v not in values or not isinstance(v, str):
            return f"must be one of {', '.join(values)}"
        return None
    return rule


def flag(v: Any) -> str | None:
    if not isinstance(v, bool):
        return "must be true or false (yes/no, on/off, 1/0)"
    return None


def text(v: Any) -> str | None:
    """Any text (a path, a hostlist, a regular expression; the tool that reads it judges)."""
    if not isinstance(v, str) or "\n" in v or "\0" in v:
        return "must be one line of text"
    return None


def texts(v: Any) -> str | None:
    """A list of text (``-S name=a,b``)."""
    if not isinstance(v, list) or any(text(x) for x in v):
        return "must be a list of text (-S name=a,b)"
    return None


def family_data(v: Any) -> str | None:
    """Set by the family for ReFrame (what it judges, what the reference was measured with):
    not an option. Any value of its type passes; ``-S`` cannot make sense of another."""
    return None


#: the largest loss rate a tx/rx check accepts: above 1 % (1 message in 100 lost on a
#: lossless fabric) the check no longer says the link is healthy (docs/reframe.md)
MAX_LOSS_TOLERANCE = 0.01
#: the largest message the C programs take (src/c/congestion.c MAX_MSG)
MAX_MESSAGE = 1 << 28
#: the smallest -S inject delay, microseconds: one tick of the finest MPI clock (1 ns)
MIN_INJECT_USEC = 0.001

#: {variable: rule}: the rule returns why a value makes no sense, or None
RULES: dict[str, Callable[[Any], str | None]] = {
    # sizes and counts: a positive whole number (unset: the profile's or partition's)
    **{name: positive_count for name in (
        "nmsg", "sim_nmsg", "msg_size", "num_blks", "num_cmsgs", "unit_size", "ppn",
        "num_nodes", "num_reps", "max_size", "min_size", "osu_iterations", "mbw_nodes",
        "max_repetitions", "perftest_iters", "rounds", "max_rounds", "iterations", "min_bytes",
        "max_bytes")},
    # congestion's probes: 0 is the size profile's (FULL, QUICK), else 1 .. the program's limit
    **{name: auto_or(whole_between(1, MAX_MESSAGE), 0, "the size profile's") for name in (
        "lat_size", "bw_size", "aggressor_size")},
    **{name: auto_or(whole_between(1, MAX_COUNT), 0, "the size profile's") for name in (
        "lat_iters", "bw_window", "bw_samples")},
    "warmup_s": between(0.0, 600.0),  # the program's -W range
    "msglog": whole_between(1, 30),  # IMB: largest size 2**msglog bytes, at most 1 GiB
    "pair_timeout": whole_between(1, 3600),
    "seed": auto_or(whole_between(0, 2**63 - 1), -1),
    # judgements: a finite number where the check can still fail
    # UC loss accepted by TxRxTest; above 1 % a link is broken, not lossy (issue 27: 0.999999
    # passed every check)
    "loss_tolerance": between(0.0, MAX_LOSS_TOLERANCE),
    "txrx_timeout": between(0.0, 86400.0, lo_open=True),
    "program_timeout": between(0.0, 86400.0, lo_open=True),  # the C programs' -T
    "txrx_line_rate": between(0.0, 10_000.0, lo_open=True),  # Gbps, txrx --line-rate
    "max_growth": between(1.0, 1000.0),  # the largest accepted growth; below 1 fails healthy
    "max_run_growth": between(1.0, 1000.0),
    "min_fraction": between(0.0, 1.0, lo_open=True),  # D-D at least this share of H-H
    # all-to-many: repetitions whose scatter can be measured (0: the runs', for the scaling
    # check); the fault injection -i K:USEC or none, and the runs it applies to
    "repetitions": auto_or(whole_between(3, 1_000_000), 0, "the AllToManyTest runs'"),
    # USEC from the finest MPI clock's tick (1 ns: Open MPI's and MPICH's MPI_Wtick; alltomany
    # refuses less than its own MPI_Wtick): less is no delay a run can show
    "inject": lambda v: None if v == "" or (
        isinstance(v, str) and re.fullmatch(r"[1-9]\d*:\d+(\.\d+)?", v)
        and MIN_INJECT_USEC <= float(v.split(":")[1]) <= 60e6) else (
        f"must be K:USEC (from iteration K >= 1 on, USEC microseconds from {MIN_INJECT_USEC:g}, "
        "the MPI clock's 1 ns tick: less is no delay a run can show) or empty"),
    "inject_min_iterations": whole_between(0, 1 << 31),
    "judge_across_runs": lambda v: None if v is None else flag(v),  # unset: the partition's
    # switches
    **{name: flag for name in ("counter_snapshots", "verbose_build", "fail_on_suspect",
                               "validation")},
    # words
    "launcher": choice("slurm", "sim"),
    "size_profile": choice("full", "quick"),
    "missing_reference": choice("fail", "warn"),
    "verbs": choice("nic", "sim"),
    "transport": choice("uc", "rc"),
    "connection": choice("RC", "UC", "UD"),
    "stage1": choice("use", "ignore"),  # leave out the nodes stage 1 failed, or not
    # text the tool reading it judges: a program, a file, a hostlist, options, perftest modes
    **{name: text for name in ("program", "reference_file", "expect_from", "sim_nodes")},
    **{name: texts for name in ("sweep_options", "modes")},
    # set by the families, not options
    **{name: family_data for name in ("scenario", "informational_perf_vars",
                                      "informational_here", "reference_aliases",
                                      "measured_with", "spack_specs", "node_pairs")},
    # records set after setup (fabric_provenance.py), not options
    **{name: family_data for name in ("suite_commit", "mpi_version", "reference_sha256",
                                      "spack_lock_sha256")},
}


#: variables that decide where a case is listed (a bad value can leave it nowhere)
PLACING = ("num_nodes", "ppn", "mbw_nodes", "launcher")


def problems(test: Any) -> dict[str, str]:
    """``{variable: phrase}`` for each variable of ``test`` whose value makes no sense
    (``-S nmsg=0: nmsg must be a whole number ...``), then the family's own rules over several
    values (its ``value_problems()``, run when each value passed its own rule); unset
    variables (None) are not checked."""
    out = {}
    # a parameter of the same name (ImbTest's transport) is the family's, not an -S value
    params = getattr(getattr(type(test), "param_space", None), "params", {})
    for name, rule in RULES.items():
        if not hasattr(type(test), name) or name in params:
            continue
        value = getattr(test, name, None)
        if value is None:
            continue
        why = rule(value)
        if why:
            out[name] = f"-S {name}={value!r}: {name} {why}"
    rounds, top = getattr(test, "rounds", None), getattr(test, "max_rounds", None)
    if not out and _is_int(rounds) and _is_int(top) and top < rounds:
        out["max_rounds"] = f"-S max_rounds={top}: max_rounds is smaller than rounds={rounds}"
    family = getattr(test, "value_problems", None)
    if not out and callable(family):
        out.update(family())
    return out

"""What values of the families' variables make sense, checked when a test is made (before any
build or run): ``-S nmsg=0``, ``-S loss_tolerance=nan`` or ``-S max_growth=inf`` would run and
pass a check that can no longer fail; they are refused with one line instead.

One rule per variable name (a name means the same in every family that has it). A variable
left unset is ``None`` (its family then takes the profile's or the partition's value): an
explicit 0 is never a silent "default". ReFrame's own conversion of ``-S`` (``-S nmsg=abc``)
fails before these rules run, with ReFrame's message. Pure: no ReFrame here, the base
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


def auto_or(rule: Callable[[Any], str | None], auto: float):
    """``auto`` (the documented "take it from the partition" value) or what ``rule`` accepts."""
    def either(v: Any) -> str | None:
        if v == auto and not isinstance(v, bool):
            return None
        why = rule(v)
        return None if why is None else f"{why}, or {auto:g} (the partition's)"
    return either


#: {variable: rule}: the rule returns why a value makes no sense, or None
RULES: dict[str, Callable[[Any], str | None]] = {
    # sizes and counts: a positive whole number (unset: the profile's or partition's)
    **{name: positive_count for name in (
        "nmsg", "sim_nmsg", "msg_size", "num_blks", "num_cmsgs", "unit_size", "ppn",
        "num_nodes", "num_reps", "max_size", "osu_iterations", "mbw_nodes",
        "max_repetitions", "perftest_iters", "rounds", "max_rounds")},
    "msglog": whole_between(1, 30),  # IMB: largest size 2**msglog bytes, at most 1 GiB
    "pair_timeout": whole_between(1, 3600),
    "seed": auto_or(whole_between(0, 2**63 - 1), -1),
    # judgements: a finite number where the check can still fail
    # UC loss accepted by TxRxTest; above 1 % a link is broken, not lossy (issue 27: 0.999999
    # passed every check)
    "loss_tolerance": between(0.0, 0.01),
    "txrx_timeout": between(0.0, 86400.0, lo_open=True),
    "txrx_line_rate": between(0.0, 10_000.0, lo_open=True),  # Gbps, txrx --line-rate
    "max_growth": between(1.0, 1000.0),  # the largest accepted growth; below 1 fails healthy
    "min_fraction": between(0.0, 1.0, lo_open=True),  # D-D at least this share of H-H
    # all-to-many: repetitions whose scatter can be measured (0: the runs', for the scaling
    # check); the fault injection -i K:USEC or none
    "repetitions": auto_or(whole_between(3, 1_000_000), 0),
    "inject": lambda v: None if v == "" or (
        isinstance(v, str) and re.fullmatch(r"[1-9]\d*:\d+(\.\d+)?", v)
        and 0 < float(v.split(":")[1]) <= 60e6) else (
        "must be K:USEC (from iteration K >= 1 on, USEC microseconds > 0) or empty"),
    "launcher": lambda v: None if v in ("slurm", "sim") else "must be slurm or sim",
}


#: variables that decide where a case is listed (a bad value can leave it nowhere)
PLACING = ("num_nodes", "ppn", "mbw_nodes", "launcher")


def problems(test: Any) -> dict[str, str]:
    """``{variable: phrase}`` for each variable of ``test`` whose value makes no sense
    (``-S nmsg=0: nmsg must be a whole number ...``); unset variables (None) are not checked."""
    out = {}
    for name, rule in RULES.items():
        if not hasattr(type(test), name):
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
    return out

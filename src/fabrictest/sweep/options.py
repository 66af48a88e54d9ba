"""Options of `fabric-sweep` and their checks, all made before anything is measured.

Every option that cannot make sense is refused with one line (`fabric-sweep: error: ...`) and
exit status 2: a sweep that runs with `--rounds 0` or `--expect -5`, or that measures for an
hour and then cannot write its `--json`, is worse than no sweep.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

from ..references.model import STRICT_LOWER, reference_value_problem
from .outfile import target_problem

MAX_PAIR_TIMEOUT = 3600.0  # one measurement of one pair taking more than an hour is a hang
MAX_ROUNDS = 1000
MAX_SIGMA = 3.0  # a log-normal spread of 3 is a factor of 20 for one standard deviation
#: --min-drop: a drop smaller than 5 % is within a healthy link's run-to-run spread (a verdict
#: at that cut cries wolf); one larger than the references' strict band (50 %) lets a node at
#: a fraction of its rate pass (`--min-drop 0.999` cleared a node at 1 %)
MIN_DROP_RANGE = (0.05, -STRICT_LOWER)


class UsageError(ValueError):
    """An option that makes no sense; `str(err)` is the one line printed."""


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad command line in one line (no usage block)."""

    def error(self, message: str):  # noqa: D401 - argparse's interface
        raise UsageError(f"{message} (see {self.prog} --help)")


def parse_count(text: str) -> int:
    """An integer as the tools write them: `100_000` is accepted."""
    try:
        return int(str(text).replace("_", ""), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None


def parse_number(text: str) -> float:
    try:
        return float(str(text).replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None


def _finite_positive(name: str, value: float | None, maximum: float | None = None) -> None:
    if value is None:
        return
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{name} must be a positive finite number, got {value:g}")
    if maximum is not None and value > maximum:
        raise UsageError(f"{name} must be at most {maximum:g}, got {value:g}")


def _at_least(name: str, value: int | None, minimum: int, maximum: int | None = None) -> None:
    if value is None:
        return
    if value < minimum:
        raise UsageError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise UsageError(f"{name} must be at most {maximum}, got {value}")


def _fraction(name: str, value: float | None) -> None:
    if value is None:
        return
    if not (math.isfinite(value) and 0.0 < value < 1.0):
        raise UsageError(f"{name} must be between 0 and 1 (exclusive), got {value:g}")


def probe_writable(path: str, what: str = "--json") -> None:
    """Refuse an output path that cannot be written, by creating (and removing) a file next
    to it: permission bits say nothing for root, nor for /proc or a read-only mount."""
    target = os.path.abspath(path)
    problem = target_problem(target)  # a link, a device, a pipe: never replaced
    if problem:
        raise UsageError(f"{what} {path}: {problem}")
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise UsageError(f"{what} {path}: directory {parent} does not exist")
    probe = f"{target}.probe{os.getpid()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    made = False
    try:
        os.close(os.open(probe, flags, 0o600))
        made = True
    except OSError as err:
        raise UsageError(f"{what} {path}: cannot write there ({err.strerror or err})") from None
    finally:
        if made:
            os.unlink(probe)


def measurement_unit(test: str) -> str:
    """The unit of one run's figure: the tx/rx tool's Gbps, osu_bw's MB/s."""
    return "MB/s" if test == "osu_bw" else "Gbps"


def _expect(args: argparse.Namespace) -> None:
    """--expect FIGURE[UNIT]: a normal positive number (the reference files' rule), in a rate
    unit (default: the measurement's), converted to the measurement's unit, and a figure a
    healthy pair can have (`--expect 1e-9` is 1 bit/s in Gbps: every node passes it)."""
    from .expectation import convert, implausible, parse_rate

    args.expect_unit = None
    args.expect_text = args.expect
    if args.expect is None or isinstance(args.expect, float):
        return
    try:
        value, unit = parse_rate(args.expect)
    except ValueError as err:
        raise UsageError(f"argument --expect: {err}") from None
    _finite_positive("--expect", value)
    problem = reference_value_problem(value)  # the reference files' rule: a normal figure
    if problem:
        raise UsageError(f"--expect {value:g}: {problem.replace('reference ', '', 1)}")
    own = measurement_unit(args.test)
    problem = implausible(value, unit or own)
    if problem:
        raise UsageError(f"--expect {args.expect}: {problem}"
                         + ("" if unit else f"; {args.test} measures {own}, give the unit, "
                            f"e.g. --expect 100Gbps or --expect 12000MB/s"))
    args.expect_unit = unit or own
    args.expect = convert(value, unit, own) if unit else value


def check(args: argparse.Namespace) -> None:
    """Raise UsageError for any option that makes no sense (before any work)."""
    _at_least("--rounds", args.rounds, 1, MAX_ROUNDS)
    _at_least("--max-rounds", args.max_rounds, 1, MAX_ROUNDS)
    if args.max_rounds < args.rounds:
        raise UsageError(f"--max-rounds {args.max_rounds} is smaller than --rounds {args.rounds}")
    _at_least("--max-concurrent", args.max_concurrent, 1)
    _finite_positive("--pair-timeout", args.pair_timeout, MAX_PAIR_TIMEOUT)
    _expect(args)
    _finite_positive("--pair-seconds", args.pair_seconds, MAX_PAIR_TIMEOUT)
    if not (math.isfinite(args.sim_pair_seconds) and 0 <= args.sim_pair_seconds <= 60):
        raise UsageError(f"--sim-pair-seconds must be between 0 and 60, got "
                         f"{args.sim_pair_seconds:g}")
    _at_least("--msg-size", args.msg_size, 1)
    _at_least("--nmsg", args.nmsg, 1, 1 << 63)
    _at_least("--num-blks", args.num_blks, 1)
    _at_least("--num-cmsgs", args.num_cmsgs, 1)
    _at_least("--osu-size", args.osu_size, 1, 1 << 30)
    if args.seed is not None and args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {args.seed}")
    _fraction("--min-drop", args.min_drop)
    lo, hi = MIN_DROP_RANGE
    if not lo <= args.min_drop <= hi:
        raise UsageError(
            f"--min-drop {args.min_drop:g}: must be between {lo:g} and {hi:g} (a node at "
            f"{1 - hi:g}x must be named; below {lo:g} a healthy link's spread is named)")
    _fraction("--fdr", args.fdr)
    sigma = args.sim_sigma
    if sigma is not None and not (math.isfinite(sigma) and 0.0 <= sigma <= MAX_SIGMA):
        raise UsageError(f"--sim-sigma must be between 0 and {MAX_SIGMA:g}, got {sigma:g}")
    if args.launcher != "sim" and (args.sim_slow or args.sim_down):
        raise UsageError("--sim-slow and --sim-down need --launcher sim")
    if args.hostfile and not (args.nodes or args.expr):
        if not os.path.isfile(args.hostfile):
            raise UsageError(f"--hostfile {args.hostfile}: no such file")
        if not os.access(args.hostfile, os.R_OK):
            raise UsageError(f"--hostfile {args.hostfile}: not readable")
    if args.json:
        probe_writable(args.json)


def check_txrx(method: str, msg_size: int, nmsg: int, num_blks: int, num_cmsgs: int,
               timeout: float) -> None:
    """The tx/rx tool's own limits (ring size, message size), checked here rather than by
    every pair failing with the same usage error and every node looking unreachable."""
    from ..txrx.options import option_problem

    why = option_problem(method, msg_size=msg_size, nmsg=nmsg, num_blks=num_blks,
                         num_cmsgs=num_cmsgs, timeout=timeout)
    if why:
        raise UsageError(f"txrx would refuse it: {why}")


def fail(message: str) -> int:
    print(f"fabric-sweep: error: {message}", file=sys.stderr, flush=True)
    return 2

"""The hostile table's cases for our C programs' families and the options (issue 27): congestion,
GPCNeT, bisection and all-to-many outputs edited as the issue found them (impossible counts,
a key printed twice, figures that contradict each other or no link could carry, a site's
lines inside a table, two runs in one output), the all-to-many notes' table and the issue's
across-run example, and ``-S`` values that make no sense. Each case must be refused with its
line (0 silent passes); the few healthy ones must be read whole.

The ``py`` cases call :func:`output` and :func:`across` here (``fn:cases_programs:FUNC:ARG``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from table import RFM_S, py, rfm

from fabrictest.parsers import ParseError, bisection, congestion, gpcnet

DATA = Path(__file__).resolve().parents[1] / "data"
WHY = "Congestion and GPCNeT pass on impossible output"

INCAST = "real-outputs-local/congestion-incast-vcluster.txt"
ALL_TO_ALL = "real-outputs-local/congestion-all-to-all-vcluster.txt"
NT = "real-outputs-local/gpcnet-network_test-1.3-ompi4.1-vcluster-2-nodes.txt"
NLT = "real-outputs-local/gpcnet-network_load_test-1.3-ompi4.1-vcluster-10-nodes.txt"
NT_HPE = "real-outputs/gpcnet-network_test-1.3-slingshot-hpe-site-wrapped.txt"
NLT_HPE = "real-outputs/gpcnet-network_load_test-1.3-slingshot-hpe-site-wrapped.txt"
BIS = "real-outputs-local/bisection_bw-cuda-device-ompi4.1-h100.txt"
BIS_SIZES = [4096 << k for k in range(11)]  # that run's -s 4k -e 4m
BAR = "+---------------------------------+--------------+--------------+--------------+\n"
RR_BW = "|      RR Two-sided BW (131072 B) |         12.4 |          8.2 |   MiB/s/rank |\n"
GET_LAT = "|                RR Get Lat (8 B) |         36.2 |         67.8 |         usec |\n"
KEY_LAT = "|          RR Two-sided Lat (8 B) |                 0.2X |                0.8X |\n"
PHASE_ISO = "phase isolated lat_avg_us 9.02 lat_p99_us 22.39 bw_gbps 0.1911\n"
PHASE_LOAD = "phase loaded lat_avg_us 3291.57 lat_p99_us 18478.95 bw_gbps 0.0359\n"
AGG = "aggressors: 4 ranks, 176947200 bytes in 8.38 s, 0.1688 Gbps\n"
BIS_TOP = "2 Ranks, Msg Size:   4194304 bytes, Node BW:  20498.87 MB/sec/node,  " \
          "Aggregate BW:  41.00 GB/sec\n"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _sub(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)
    return edit


def _twice(text: str) -> str:
    return text + text


def _append(extra: str):
    return lambda text: text + extra


#: name -> (parser module, recording, edit, missing()'s keywords, line rate or None)
OUTPUTS = {
    # congestion
    "congestion-zero-aggressors": (congestion, INCAST, _sub("(4 ranks)", "(0 ranks)"), {}, None),
    "congestion-phase-isolated-twice": (congestion, INCAST, _append(
        PHASE_ISO.replace("0.1911", "0.0191")), {}, None),
    "congestion-phase-loaded-twice": (congestion, INCAST, _append(
        PHASE_LOAD.replace("0.0359", "0.1800")), {}, None),
    "congestion-aggressor-rate-negative": (congestion, INCAST, _sub("0.1688 Gbps", "-5 Gbps"),
                                           {}, None),
    "congestion-aggressor-rate-zero": (congestion, INCAST, _sub("0.1688 Gbps", "0.0000 Gbps"),
                                       {}, None),
    "congestion-aggressor-rate-contradicts": (congestion, INCAST, _sub("0.1688 Gbps",
                                                                       "1.6880 Gbps"), {}, None),
    "congestion-victim-one-node": (congestion, INCAST, _sub("node01 -> node02",
                                                            "node01 -> node01"), {}, None),
    "congestion-two-runs": (congestion, INCAST, _twice, {}, None),
    "congestion-unknown-phase": (congestion, INCAST, _append(
        "phase warm-up lat_avg_us 1.00 lat_p99_us 2.00 bw_gbps 0.1000\n"), {}, None),
    "congestion-aggressors-twice": (congestion, INCAST, _append(AGG), {}, None),
    "congestion-done-twice": (congestion, INCAST, _append("congestion: done\n"), {}, None),
    "congestion-aggressor-ranks-layout": (congestion, INCAST, _sub("(4 ranks)", "(2 ranks)"),
                                          {}, None),
    "congestion-unknown-mode": (congestion, INCAST, _sub("aggressors incast",
                                                         "aggressors broadcast"), {}, None),
    "congestion-ranks-not-a-layout": (congestion, INCAST, _sub("ranks 8,", "ranks 7,"), {},
                                      None),
    "congestion-victim-above-line-rate": (congestion, INCAST, _sub(
        "bw_gbps 0.1911", "bw_gbps 191.1000"), {}, 0.2),
    "congestion-aggressors-above-line-rate": (congestion, ALL_TO_ALL, lambda t: t, {}, 0.01),
    "congestion-probe-sizes-not-asked": (congestion, INCAST, lambda t: t, {"sizes": {
        "lat_size": 8, "lat_iters": 1000, "bw_samples": 10, "bw_window": 16,
        "bw_size": 1 << 20, "aggressor_size": 1 << 20, "warmup_s": 1.0}}, None),
    "congestion-nodes-not-the-jobs": (congestion, INCAST, lambda t: t, {"nodes": 5, "ranks": 10},
                                      None),
    "congestion-cut-mid-line": (congestion, INCAST, lambda t: t[:-4], {}, None),
    # GPCNeT
    "gpcnet-one-node-for-two": (gpcnet, NT, _sub("(2 nodes)", "(1 nodes)"), {"nodes": 2},
                                None),
    "gpcnet-row-twice": (gpcnet, NT, _sub(RR_BW + BAR, RR_BW + BAR + RR_BW.replace(
        "12.4", " 1.2") + BAR), {}, None),
    "gpcnet-key-row-twice": (gpcnet, NLT, _sub(KEY_LAT, KEY_LAT + KEY_LAT.replace(
        "0.2X", "9.9X")), {}, None),
    "gpcnet-zero-congestor-nodes": (gpcnet, NLT, _sub("8 nodes running Congestion",
                                                      "0 nodes running Congestion"), {}, None),
    "gpcnet-split-not-gpcnets": (gpcnet, NLT, _sub("2 nodes running Network",
                                                   "1 nodes running Network"), {}, None),
    "gpcnet-per-congestor-wrong": (gpcnet, NLT, _sub("(min 2 nodes per", "(min 8 nodes per"),
                                   {}, None),
    "gpcnet-impact-avg-contradicts": (gpcnet, NLT, _sub(KEY_LAT, KEY_LAT.replace(
        "0.2X", "3.0X")), {}, None),
    "gpcnet-impact-p99-contradicts": (gpcnet, NLT, _sub(KEY_LAT, KEY_LAT.replace(
        "0.8X", "0.1X")), {}, None),
    "gpcnet-impact-hpe-contradicts": (gpcnet, NLT_HPE, _sub(
        "| RR Two-sided BW+Sync (131072 B) |                 1.0X |",
        "| RR Two-sided BW+Sync (131072 B) |                 2.0X |"), {}, None),
    "gpcnet-impact-nan": (gpcnet, NLT, _sub(KEY_LAT, KEY_LAT.replace(" 0.2X", "-nanX")), {},
                          None),
    "gpcnet-two-runs": (gpcnet, NT, _twice, {}, None),
    "gpcnet-two-wrapped-runs": (gpcnet, NLT_HPE, _twice, {}, None),
    "gpcnet-line-inside-a-table": (gpcnet, NT, _sub(GET_LAT, "cxi0 tx 587019953\n" + GET_LAT),
                                   {}, None),
    "gpcnet-line-between-tables": (gpcnet, NLT, _sub(
        "\n+------------------------------------------------------------------------------+\n"
        "|                 Network Tests", "\nnode03: link flapped\n"
        "+------------------------------------------------------------------------------+\n"
        "|                 Network Tests"), {}, None),
    "gpcnet-cut-then-site-lines": (gpcnet, NT, lambda t: t[:t.rindex(BAR)] + "cxi0 tx 1\n",
                                   {}, None),
    "gpcnet-ranks-not-the-jobs": (gpcnet, NT_HPE, lambda t: t, {"ranks": 1024, "nodes": 64},
                                  None),
    "gpcnet-more-nodes-than-ranks": (gpcnet, NT, _sub("(2 nodes)", "(3 nodes)"), {}, None),
    "gpcnet-above-line-rate": (gpcnet, NT_HPE, lambda t: t, {}, 200.0),
    "gpcnet-site-wrapped-network-test": (gpcnet, NT_HPE, lambda t: t,
                                         {"ranks": 2048, "nodes": 64}, 1600.0),
    "gpcnet-site-wrapped-load-test": (gpcnet, NLT_HPE, lambda t: t,
                                      {"ranks": 2048, "nodes": 64}, 1600.0),
    # bisection
    "bisection-size-twice": (bisection, BIS, _append(BIS_TOP.replace("20498.87", "   10.00")
                                                     .replace(" 41.00", "  0.02")), {}, None),
    "bisection-two-runs": (bisection, BIS, _twice, {}, None),
    "bisection-nodes-not-the-jobs": (bisection, BIS, lambda t: t, {"nodes": 4}, None),
    "bisection-ranks-not-the-jobs": (bisection, BIS, lambda t: t, {"ranks": 8}, None),
    "bisection-reps-not-the-jobs": (bisection, BIS, lambda t: t, {"reps": 100}, None),
    "bisection-ppn-not-the-jobs": (bisection, BIS, lambda t: t, {"ppn": 2}, None),
    "bisection-counts-contradict": (bisection, BIS, _sub("Number of nodes: 2",
                                                         "Number of nodes: 1"), {}, None),
    "bisection-aggregate-contradicts": (bisection, BIS, _sub(" 41.00 GB", " 82.00 GB"), {},
                                        None),
    "bisection-above-line-rate": (bisection, BIS, lambda t: t, {}, 100.0),
    "bisection-whole": (bisection, BIS, lambda t: t, {"ranks": 2, "nodes": 2, "ppn": 1,
                                                      "reps": 20}, 200.0),
}

#: name -> the line the case must answer with (a regex)
EXPECTED = {
    "congestion-zero-aggressors": r"no aggressors \(0 ranks\)",
    "congestion-phase-isolated-twice": r"'phase isolated' printed twice",
    "congestion-phase-loaded-twice": r"'phase loaded' printed twice",
    "congestion-aggressor-rate-negative": r"aggressor rate -5 Gbps is not a positive number",
    "congestion-aggressor-rate-zero": r"aggressor rate 0 Gbps is not a positive number",
    "congestion-aggressor-rate-contradicts": r"aggressor rate 1\.688 Gbps contradicts",
    "congestion-victim-one-node": r"victim node01 -> node01: both ends on one node",
    "congestion-two-runs": r"header \(several runs in one output\?\) printed 2 times",
    "congestion-unknown-phase": r"a 'phase warm-up' line",
    "congestion-aggressors-twice": r"the 'aggressors:' line printed 2 times",
    "congestion-done-twice": r"'congestion: done' printed 2 times",
    "congestion-aggressor-ranks-layout": r"2 aggressor ranks, but the 2 nodes beside the "
                                         r"victim's run 4",
    "congestion-unknown-mode": r"aggressors 'broadcast', not one of incast, all-to-all",
    "congestion-ranks-not-a-layout": r"7 ranks on 4 nodes is not the program's layout",
    "congestion-victim-above-line-rate": r"isolated bw_gbps 191\.1 is above the 0\.2 Gb/s",
    "congestion-aggressors-above-line-rate": r"aggressor rate \S+ Gbps is above 2 x 0\.01 Gb/s",
    "congestion-probe-sizes-not-asked": r"lat_iters 200\.0, expected 1000",
    "congestion-nodes-not-the-jobs": r"4 nodes, expected 5",
    "congestion-cut-mid-line": r"output ends mid-line",
    "gpcnet-one-node-for-two": r"1 nodes, expected 2 \(GPCNeT counts the hosts by name\)",
    "gpcnet-row-twice": r"RR Two-sided BW \(131072 B\) printed twice in 'Isolated Network Tests'",
    "gpcnet-key-row-twice": r"RR Two-sided Lat \(8 B\) printed twice in 'Network Tests running "
                            r"with Congestion Tests - Key Results'",
    "gpcnet-zero-congestor-nodes": r"2 nodes running network tests and 0 running congestion "
                                   r"tests on 10 nodes; GPCNeT runs 2 and 8",
    "gpcnet-split-not-gpcnets": r"1 nodes running network tests and 8 running",
    "gpcnet-per-congestor-wrong": r"min 8 nodes per congestor, but 8 congestor nodes make 2",
    "gpcnet-impact-avg-contradicts": r"RR Two-sided Lat impact factor Avg 3X contradicts the "
                                     r"tables",
    "gpcnet-impact-p99-contradicts": r"RR Two-sided Lat impact factor 99% 0\.1X contradicts",
    "gpcnet-impact-hpe-contradicts": r"RR Two-sided BW\+Sync impact factor Avg 2X contradicts "
                                     r"the tables \(isolated 4061\.4 / loaded 4057\.7",
    "gpcnet-impact-nan": r"Avg nan is not a positive number",
    "gpcnet-two-runs": r"2 runs in one output",
    "gpcnet-two-wrapped-runs": r"2 runs in one output",
    "gpcnet-line-inside-a-table": r"a line that is not GPCNeT's inside its output .*'cxi0 tx "
                                  r"587019953'",
    "gpcnet-line-between-tables": r"a line that is not GPCNeT's inside its output .*node03: "
                                  r"link flapped",
    "gpcnet-cut-then-site-lines": r"not closed by its bar|has no Multiple Alltoall row",
    "gpcnet-ranks-not-the-jobs": r"2048 ranks, expected 1024",
    "gpcnet-more-nodes-than-ranks": r"2 ranks on 3 nodes is impossible",
    "gpcnet-above-line-rate": r"RR Two-sided BW \(131072 B\) .* 32 ranks per node = 1097 Gb/s, "
                              r"above the 200 Gb/s line rate",
    "gpcnet-site-wrapped-network-test": r"^whole$",
    "gpcnet-site-wrapped-load-test": r"^whole$",
    "bisection-size-twice": r"4 MiB printed more than once",
    "bisection-two-runs": r"2 'PPN: \.\.\., Number of nodes: \.\.\.' header lines, expected 1",
    "bisection-nodes-not-the-jobs": r"nodes 2, expected 4",
    "bisection-ranks-not-the-jobs": r"rows report \[2\] ranks, expected 8",
    "bisection-reps-not-the-jobs": r"Num_reps 20, expected 100",
    "bisection-ppn-not-the-jobs": r"PPN 1, expected 2",
    "bisection-counts-contradict": r"1 nodes x PPN 1 is not 2 processes",
    "bisection-aggregate-contradicts": r"at 4 MiB the aggregate 82 GB/s contradicts 20498\.9 "
                                       r"MB/s per node x 2 nodes",
    "bisection-above-line-rate": r"20498\.9 MB/s per node at 4 MiB = 164 Gb/s, above the 100 "
                                 r"Gb/s line rate",
    "bisection-whole": r"^whole$",
}


def output(_d, name: str) -> str:
    """The problems the parser finds in recording ``name`` edited (OUTPUTS), joined; "whole"
    when none."""
    module, recording, edit, kwargs, line_rate = OUTPUTS[name]
    text = edit(_read(recording))
    parse = {congestion: congestion.parse_congestion, gpcnet: gpcnet.parse_gpcnet,
             bisection: bisection.parse_bisection}[module]
    try:
        result = parse(text)
    except ParseError as err:
        return f"ParseError: {err}"
    if module is bisection:
        kwargs = {"sizes": BIS_SIZES, **kwargs}
    problems = module.missing(result, **kwargs)
    if line_rate is not None:
        problems += module.above_line_rate(result, line_rate)
    return "; ".join(problems) or "whole"


def _reframe_tests():
    root = str(Path(__file__).resolve().parents[2] / "reframe_tests")
    if root not in sys.path:
        sys.path.insert(0, root)


#: the per-iteration levels (s) of the runs of 2, 8, 16 and 32 iterations
ACROSS = {
    # the example: 1.1e-06 s at 8 iterations, 2.6e-03 s at 16 and 32
    "issue-example": {2: 1.2e-06, 8: 1.1e-06, 16: 2.6e-03, 32: 2.6e-03},
    # the all-to-many (Cori) notes' table: end-to-end 0.0829, 0.1895, 0.6427, 6.2541 s
    "cori-notes": {2: 0.0829 / 2, 8: 0.1895 / 8, 16: 0.6427 / 16, 32: 6.2541 / 32},
    # only the 32-iteration run slowed, twice the limit
    "32-only": {2: 1.0e-06, 8: 1.0e-06, 16: 1.0e-06, 32: 3.1e-06},
    # a healthy local round (2026-11-26): the fastest shorter run 0.35 us, the longer ones 0.65
    # (separate jobs on 2 shared cores: local's limit is 4x, config/reframe/systems/local.py)
    "healthy-local": {2: 0.37e-06, 8: 0.35e-06, 16: 0.65e-06, 32: 0.66e-06},
}


def across(_d, spec: str) -> str:
    """AllToManyScalingTest's verdict across runs on ACROSS[name] (``name`` or ``name@limit``;
    the default limit: scenario_math.MAX_GROWTH)."""
    _reframe_tests()
    from scenario_math import MAX_GROWTH, RunLevel, across_runs

    name, _, limit = spec.partition("@")
    levels = [RunLevel(n, t, t / 10) for n, t in ACROSS[name].items()]
    return across_runs(levels).problem(float(limit or MAX_GROWTH)) or "passes"


def injection(_d, value: str) -> str:
    """AllToManyTest's family rule on ``-S inject=VALUE`` (the runs of 2 to 32 iterations)."""
    _reframe_tests()
    from alltomany import injection_problems

    inject, _, runs = value.partition("@")
    problems = injection_problems(inject, int(runs or 0))
    return next(iter(problems.values()), "no problem")


for _name, _line in EXPECTED.items():
    py(f"programs output {_name}", f"fn:cases_programs:output:{_name}", _line, why=WHY)

for _name, _line in (("issue-example", r"grows 2\.36e\+03x across separate runs, from the "
                                       r"8-iteration run to the 16-iteration run"),
                     ("cori-notes", r"grows 8\.25x across separate runs, from the 8-iteration "
                                    r"run to the 32-iteration run"),
                     ("32-only", r"grows 3\.1x across separate runs"),
                     ("healthy-local", r"grows 1\.89x across separate runs"),
                     ("healthy-local@4", r"^passes$"),
                     ("issue-example@4", r"grows 2\.36e\+03x across separate runs")):
    py(f"all-to-many across runs {_name}", f"fn:cases_programs:across:{_name}", _line,
       why="The all-to-many check misses the notes' own pattern")

for _value, _line in (("99:5", r"from iteration 99 on, but the runs have at most 32 iterations"),
                      ("33:1", r"from iteration 33 on"),
                      ("@16", r"inject_min_iterations=16: says which runs -S inject slows, but "
                              r"inject is empty"),
                      ("1:5@64", r"inject_min_iterations=64: no run has that many iterations")):
    py(f"-S AllToManyTest.inject {_value} (family rule)",
       f"fn:cases_programs:injection:{_value}",
       rf"^-S {_line}" if "@" in _value else rf"^-S inject='{_value}': {_line}",
       why="-S AllToManyTest.inject=99:5 on 2-32 iterations PASSES (nothing injected)")

# single-variable rules (the table's rule: kind), the options of issue 27
for _name, _value in (("loss_tolerance", "0.999999"), ("loss_tolerance", "0.5"),
                      ("warmup_s", "-1"), ("warmup_s", "601"), ("program_timeout", "0"),
                      ("program_timeout", "1e9"), ("max_run_growth", "0.5"),
                      ("inject_min_iterations", "-1"), ("size_profile", "'fast'"),
                      ("missing_reference", "'ignore'"), ("counter_snapshots", "'maybe'"),
                      ("verbose_build", "2"), ("transport", "'tcp'"), ("lat_size", "-1"),
                      ("bw_samples", "1.5"), ("nmsg", "'abc'")):
    py(f"-S {_name}={_value} (rule)", f"rule:{_name}={_value}", rf"^-S {_name}=.*: {_name} must ",
       why="Options that do not do what they say")

# batched ReFrame runs (test_hostile.RFM_BATCHES): values -S cannot convert reach their rule
# as text and are refused with one line, without a traceback. CongestionTest is listed on
# local only with num_nodes: its unreadable num_nodes keeps it listed, refused.
_BAD_S = {
    "CongestionTest": [("num_nodes", "abc"), ("warmup_s", "two"), ("bw_size", "1.5")],
    "BisectionTest": [("program_timeout", "nan")],
    "TxRxTest": [("counter_snapshots", "maybe"), ("sim_nmsg", "many")],
    "AllToManyTest": [("program_timeout", "-1"), ("inject_min_iterations", "x")],
}
for _test, _pairs in _BAD_S.items():
    RFM_S.setdefault(_test, []).extend(_pairs)
    for _name, _value in _pairs:
        rfm(f"reframe -S {_test}.{_name}={_value}", f"bad-S:{_test}",
            rf"-S {_name}='?{re.escape(_value)}(\.0)?'?: {_name} must ",
            why="any -S CongestionTest.warmup_s=2.0 ends the session with 'Float() takes no "
                "arguments'; -S counter_snapshots=false leaves it on")

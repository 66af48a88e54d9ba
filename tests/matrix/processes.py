"""The faults that need a process (a stopped rank, a missing tool, an empty selection, lost
records) and the stale evidence a family reads (the stage-1 record), for the families: each
cell cites the test that shows it, by its pytest node id; the matrix test checks that each
exists, is collected and is not skipped (CI runs it)."""

from __future__ import annotations

from .cell import UNTESTED, Cell, cited, na

C_TIMEOUTS = "tests/c/test_timeouts.py::test_a_stopped_rank_ends_the_job_with_one_line"
STOPPED = {
    "alltomany": f"{C_TIMEOUTS}[alltomany]",
    "bisection": f"{C_TIMEOUTS}[bisection_bw]",
    "congestion": f"{C_TIMEOUTS}[congestion incast]",
}
HUNG = {
    "AllToManyTest": (STOPPED["alltomany"], "alltomany"),
    "AllToManyScalingTest": (STOPPED["alltomany"], "alltomany"),
    "GpuExchangeTest": (STOPPED["alltomany"], "alltomany"),
    "BisectionTest": (STOPPED["bisection"], "bisection_bw"),
    "CongestionTest": (STOPPED["congestion"], "congestion"),
}
TIMED_OUT = "tests/reframe/test_hung_programs.py::" \
            "test_a_stopped_benchmark_fails_at_the_time_limit"
#: the families whose stopped program the job's time limit is shown to end (one local run;
#: NicHealthTest and PerftestWriteBwTest on the scratch system that names a fabric NIC)
TIME_LIMITED = ("OsuPt2PtTest", "OsuMbwMrTest", "OsuCollectiveTest", "OsuGpuAwareTest",
                "ImbTest", "GpcnetNetworkTest", "GpcnetLoadTest", "NcclTest", "NicHealthTest",
                "PerftestWriteBwTest")
MISSING = "tests/reframe/test_benchmark_binaries.py::" \
          "test_a_program_the_search_cannot_find_fails_saying_so"
#: the families whose programs the one search of fabric_binaries.py finds
SEARCHED = ("OsuPt2PtTest", "OsuMbwMrTest", "OsuGpuAwareTest", "OsuCollectiveTest", "ImbTest",
            "PerftestWriteBwTest")
ABSENT = "tests/reframe/test_missing_programs.py::"
#: family -> (what its run without its program said, the test that shows it)
WITHOUT_PROGRAM = {
    **{f: ("its program never built (the binaries fixture's directory empty): every case "
           "fails 'the launcher could not start <stage>/FabricBinaries_.../" + p + " on vm "
           "(not there or not executable)'",
           f"{ABSENT}test_an_unbuilt_program_fails_every_case_naming_it[{f}]")
       for f, p in (("AllToManyTest", "alltomany"), ("BisectionTest", "bisection_bw"),
                    ("CongestionTest", "congestion"),
                    ("GpuExchangeTest", "<%program>"))},
    "AllToManyScalingTest": ("alltomany never built: its AllToManyTest cases fail naming it, "
                             "so it is never judged: ReFrame counts it failed (fail_deps), "
                             "exit 1",
                             f"{ABSENT}test_the_scaling_check_never_judges_what_was_not_run"),
    "SweepTest": ("a job whose node has no fabric-sweep (-S launcher=sim, run by a ReFrame "
                  "without it beside its interpreter): 'fabric-sweep was not started (exit "
                  "status 127: not found or not executable on the node: ... command not found)'",
                  f"{ABSENT}test_a_sweep_job_without_fabric_sweep_fails_naming_it"),
    **{f: (f"{p} not on PATH: every case fails 'the launcher could not start {p} on vm "
           f"(not found)'", f"{ABSENT}test_a_program_not_on_path_fails_naming_it[{f}]")
       for f, p in (("TxRxTest", "txrx"), ("NicHealthTest", "fabric-health"))},
    **{f: (f"a partial build without {p}: its cases fail at setup '{p} not found for "
           f"local:default (no +spack): {home} holds no ...'",
           f"{ABSENT}test_a_program_a_partial_build_lacks_fails_at_setup_naming_it[{f}]")
       for f, p, home in (("GpcnetNetworkTest", "network_test", "GPCNET_HOME"),
                          ("GpcnetLoadTest", "network_load_test", "GPCNET_HOME"),
                          ("NcclTest", "all_reduce_perf", "NCCL_TESTS_HOME"))},
}
RUNS_OWN = "{what}: the ReFrame run's, whatever families it holds (the 'reframe run' row)"
STAGE1 = "tests/reframe/test_stage1_record.py::test_a_record_not_to_trust_is_not_used"


def cells(family: str) -> dict[str, Cell]:
    out = {}
    if family in HUNG:
        node, program = HUNG[family]
        out["hung_tool"] = cited("FAIL", f"{program} with one rank stopped (SIGSTOP) ends "
                                 "within its -T timeout: non-zero exit, one line naming the "
                                 "rank that gave up", node)
    elif family == "TxRxTest":
        out["hung_tool"] = cited("FAIL", "a transmitter that stops sending (--fault stall): "
                                 "non-zero exit within --timeout, 'stopped sending or died', "
                                 "naming the transmitter",
                                 "tests/txrx/test_mpi_runs.py::test_transmitter_that_stops_sending")
    elif family == "SweepTest":
        out["hung_tool"] = cited("FAIL", "fabric-sweep's pairs that never answer end at "
                                 "--pair-timeout and name the hung node by direction",
                                 "tests/sweep/test_cli.py::"
                                 "test_sweep_over_processes_names_slow_and_hung_nodes_by_direction")
    elif family in TIME_LIMITED:
        out["hung_tool"] = cited("FAIL", "a stand-in for its program that prints a line and "
                                 "stops every rank (SIGSTOP), -S time_limit=3s: the job's time "
                                 "limit ends it, 'job error: job timed out (3.4s > 3.0s)', no "
                                 "rank left behind", f"{TIMED_OUT}[{family}]")
    else:
        out["hung_tool"] = Cell(UNTESTED, "a third-party program with a stopped rank: only "
                                "the job's time limit ends it; no test stops one")
    if family in SEARCHED:
        out["missing_tool"] = cited("FAIL", "a program the search cannot find fails the case "
                                    "naming what was searched (shown for osu_latency; one "
                                    "search, fabric_binaries.py, for OSU, IMB and perftest)",
                                    MISSING)
    elif family in WITHOUT_PROGRAM:
        out["missing_tool"] = cited("FAIL", *WITHOUT_PROGRAM[family])
    else:
        out["missing_tool"] = Cell(UNTESTED, "no test runs the family without its program")
    out["empty_selection"] = na(RUNS_OWN.format(what="what a run selects"))
    out["lost_records"] = na(RUNS_OWN.format(what="the records it keeps (results "
                                                 "database, perflogs)"))
    out["stale_foreign"] = cited("FAIL", "the stage-1 record a multi-node case reads (which "
                                 "nodes to leave out) is not used when too old, of another "
                                 "format or unreadable: 'h old', 'is not a "
                                 "fabrictest-stage1/1 record'", STAGE1)
    return out


def run_cells() -> dict[str, Cell]:
    """The ReFrame run itself (``reframe -r``, ./scripts/run-suite.sh): its selection and its
    records; every other fault is judged by its cases (the families' rows)."""
    out = {f: na("judged by the run's cases: the families' rows") for f in (
        "link_down", "flap", "bw_0_5", "bw_0_85", "error_burst", "saturated", "nonfinite",
        "truncated", "doubled", "other_benchmark", "hung_tool", "missing_tool",
        "stale_foreign")}
    out["healthy"] = cited("PASS", "the suite on local with whole stand-in outputs: every case "
                           "passes", "tests/reframe/test_fail_closed.py::"
                           "test_whole_standin_outputs_pass")
    out["empty_selection"] = cited(
        "FAIL", "`reframe -n OsuCollectiveTest` where nothing is selected: ReFrame says "
        "'PASSED Ran 0/0', exit 0 (ReFrame #3599); through scripts/reframe-selected.sh (what "
        "run-suite.sh runs): exit 1, 'nothing was selected'",
        "tests/reframe/test_empty_selection.py::"
        "test_a_run_that_selects_nothing_exits_1_with_one_line")
    out["lost_records"] = cited(
        "FAIL", "a results database that is a directory and a perflog directory that is a "
        "file: the run stops before it measures anything, one line naming both records",
        "tests/reframe/test_local_run.py::"
        "test_a_run_whose_records_cannot_be_written_stops_naming_them",
        "tests/reframe/test_record_paths.py::test_every_record_is_named_at_once")
    return out

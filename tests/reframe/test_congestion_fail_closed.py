"""CongestionTest fails closed where the user meets it: `reframe -r --system local` with
`-S CongestionTest.num_nodes=4` (8 ranks standing for 4 nodes) and a stand-in program
(`-S CongestionTest.program=...`) that replays our recordings (tests/data/real-outputs-local/)
whole, cut short, laced with an MPI abort, with aggressors that sent nothing, exiting non-zero,
or recorded on separate nodes. Only the whole one-host replay passes."""

from __future__ import annotations

import stat

import pytest
from _rfm import run_reframe
from recordings import read

pytestmark = [pytest.mark.slow, pytest.mark.mpi]

INCAST = "CongestionTest %aggressors=incast"
ALL_TO_ALL = "CongestionTest %aggressors=all-to-all"
ABORT_BANNER = (
    "--------------------------------------------------------------------------\n"
    "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\nwith errorcode 3.\n"
    "--------------------------------------------------------------------------\n"
)


def _outputs() -> dict[str, tuple[str, str]]:
    """(stdout of rank 0, what it does after) per run and aggressors."""
    incast = read("congestion-incast-local-one-host.txt")
    all_to_all = read("congestion-all-to-all-local-one-host.txt")
    agg = next(ln for ln in incast.splitlines() if ln.startswith("aggressors:"))
    nothing_sent = incast.replace(agg, "aggressors: 4 ranks, 0 bytes in 0.00 s, 0.0000 Gbps")
    return {
        "whole-incast": (incast, "exit 0"),
        "whole-all-to-all": (read("congestion-all-to-all-vcluster.txt"), "exit 0"),
        "cut-incast": ("".join(incast.splitlines(keepends=True)[:-2]), "exit 0"),
        "cut-all-to-all": (all_to_all + ABORT_BANNER, "exit 0"),
        "odd-incast": (nothing_sent, "exit 0"),
        "odd-all-to-all": (all_to_all, "exit 3"),
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("congestion-standin")
    for name, (text, _after) in _outputs().items():
        (tmp / f"{name}.out").write_text(text)
    standin = tmp / "congestion"
    afters = "\n".join(f'  {name}) after="{after}" ;;' for name, (_t, after) in
                       _outputs().items())
    standin.write_text(
        "#!/bin/bash\n"
        "# stand-in for congestion (tests/reframe/test_congestion_fail_closed.py)\n"
        'mode=$(echo " $* " | sed -E "s/.* -m ([a-z-]+) .*/\\1/")\n'
        'case="$CONGESTION_STANDIN-$mode"\n'
        f'case "$case" in\n{afters}\n  *) exit 9 ;;\nesac\n'
        'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then\n'
        f'    cat "{tmp}/$case.out"\n'
        "    $after\n"
        "fi\n"
        "sleep 1\n"
        "exit 0\n"
    )
    standin.chmod(standin.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    out = {}
    for kind in ("whole", "cut", "odd"):
        args = ["--system", "local", "-r", "-n", "CongestionTest",
                "-S", "CongestionTest.num_nodes=4", "-S", "size_profile=quick",
                "-S", f"CongestionTest.program={standin}"]
        out[kind] = run_reframe(args, tmp / kind, timeout=300,
                                env={"CONGESTION_STANDIN": kind})
    return out


def _reason(run, name: str) -> str:
    case = run.case(name)
    assert case["result"] == "fail", (name, case["result"], run.output[-3000:])
    return case.get("fail_reason") or ""


def test_whole_one_host_replay_passes(runs):
    case = runs["whole"].case(INCAST)
    assert case["result"] == "pass", (case.get("fail_reason"), runs["whole"].output[-3000:])


def test_separate_nodes_output_fails_on_one_host(runs):
    assert "ranks on several hosts, expected one host" in _reason(runs["whole"], ALL_TO_ALL)


def test_cut_short_fails_naming_the_closing_line(runs):
    reason = _reason(runs["cut"], INCAST)
    assert "no closing 'congestion: done' line" in reason, reason


def test_mpi_abort_fails_a_whole_output(runs):
    reason = _reason(runs["cut"], ALL_TO_ALL)
    assert "MPI_Abort" in reason or "MPI_ABORT" in reason, reason


def test_aggressors_that_sent_nothing_fail(runs):
    assert "did not load the network" in _reason(runs["odd"], INCAST)


def test_nonzero_exit_fails_a_whole_output(runs):
    reason = _reason(runs["odd"], ALL_TO_ALL)
    assert "3" in reason and ("exit" in reason or "status" in reason), reason


def test_bad_sizes_are_refused_before_the_job(tmp_path):
    run = run_reframe(["--system", "local", "-r", "-n", "CongestionTest%aggressors=incast",
                       "-S", "CongestionTest.num_nodes=4", "-S", "CongestionTest.bw_size=-5"],
                      tmp_path, timeout=300)
    reason = _reason(run, INCAST)
    assert "-S bw_size=-5: bw_size must be a whole number from 1 to 268435456, or 0 (the " \
        "size profile's)" in reason, reason
    assert run.case(INCAST).get("fail_phase") == "setup", run.case(INCAST)

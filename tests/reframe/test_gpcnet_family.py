"""The GPCNeT family where the user meets it: listed only where +gpcnet and the nodes GPCNeT asks
for are (network_load_test on at least 95 % of them, 10 at least), with the reason where not;
and `reframe -r --system local` with stand-ins for network_test / network_load_test (found
through GPCNET_HOME, as a build would be) replaying our real runs' outputs
(tests/data/real-outputs-local) whole, cut short, laced with an MPI error, or GPCNeT's own
ERROR line: only the whole replays pass, against local's references."""

from __future__ import annotations

import stat

import pytest
from _rfm import run_reframe
from recordings import read

NT = "GpcnetNetworkTest %per_nic="
NLT = "GpcnetLoadTest %per_nic="
NT_LOCAL = "gpcnet-network_test-1.3-ompi4.1-local-2-hosts.txt"
NLT_LOCAL = "gpcnet-network_load_test-1.3-ompi4.1-local-10-hosts.txt"


@pytest.mark.parametrize(
    ("system", "listed", "why"),
    [
        ("slingshot", True, None),  # 64 nodes, +gpcnet from its Spack environment
        ("local", False, "has no +gpcnet"),
        ("seren", False, "has no +gpcnet"),
    ],
)
def test_listing(system, listed, why, tmp_path):
    run = run_reframe(["--system", system, "-l", "-vv", "-n", "Gpcnet"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    for case in (NT, NLT):
        for ppn in ("1", "intermediate", "full"):
            assert (f"- {case}{ppn} /" in run.output) == listed, run.output[-3000:]
    if why:
        assert why in run.output, run.output[-3000:]


def test_load_test_needs_95_percent_of_the_nodes(tmp_path):
    run = run_reframe(["--system", "slingshot", "-l", "-vv", "-n", "Gpcnet",
                       "-S", "num_nodes=60"], tmp_path, timeout=180)
    assert f"- {NT}1 /" in run.output, run.output[-3000:]
    assert f"- {NLT}1 /" not in run.output, run.output[-3000:]
    assert "network_load_test runs on at least 95 % of the nodes (GPCNeT's README): 60 of 64" \
        in run.output, run.output[-3000:]


def _standin(directory, name: str, outputs: dict[str, tuple[str, str]]) -> None:
    """``name`` replays ``outputs[$GPCNET_STANDIN]``: rank 0 prints the text, then runs the
    command (GPCNeT prints from rank 0 only)."""
    cases = []
    for kind, (text, after) in outputs.items():
        (directory / f"{name}-{kind}.out").write_text(text)
        cases.append(f'  {kind}) after="{after}" ;;')
    script = directory / name
    script.write_text(
        "#!/bin/bash\n"
        f"# stand-in for GPCNeT's {name} (tests/reframe/test_gpcnet_family.py)\n"
        'case "$GPCNET_STANDIN" in\n' + "\n".join(cases) + "\n  *) exit 9 ;;\nesac\n"
        'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then\n'
        f'    cat "{directory}/{name}-$GPCNET_STANDIN.out"\n'
        "    $after\n"
        "fi\n"
        "sleep 1\n"
        "exit 0\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpcnet-standin")
    nt, nlt = read(NT_LOCAL), read(NLT_LOCAL)
    key = nlt.index("|          Network Tests running with Congestion Tests - Key Results")
    mpi_error = ("[vm:4242] *** An error occurred in MPI_Alltoall\n"
                 "[vm:4242] *** MPI_ERR_TRUNCATE: message truncated\n")
    _standin(tmp, "network_test", {
        "whole": (nt, "exit 0"),
        "bad": ("".join(nt.splitlines(keepends=True)[:-3]), "exit 0"),  # the last row lost
        "error": (read("gpcnet-network_test-1.3-ompi4.1-local-one-host-error.txt"), "exit 1"),
    })
    _standin(tmp, "network_load_test", {
        "whole": (nlt, "exit 0"),
        "bad": (nlt[:key], "exit 0"),  # stops before the Congestion Impact Factor table
        "error": (nlt + mpi_error, "exit 0"),  # a whole output, then an MPI error
    })
    out = {}
    for kind in ("whole", "bad", "error"):
        args = ["--system", "local", "-r", "-n", f"{NT}1".replace(" ", ""),
                "-n", f"{NLT}1".replace(" ", ""),
                "-S", "GpcnetNetworkTest.num_nodes=2", "-S", "GpcnetLoadTest.num_nodes=10"]
        out[kind] = run_reframe(args, tmp / kind, timeout=300,
                                env={"GPCNET_STANDIN": kind, "GPCNET_HOME": str(tmp)})
    return out


def _reason(run, name: str) -> str:
    case = run.case(name)
    assert case["result"] == "fail", (name, case["result"], run.output[-3000:])
    return case.get("fail_reason") or ""


@pytest.mark.slow
@pytest.mark.mpi
def test_whole_replays_pass(runs):
    for name in (f"{NT}1", f"{NLT}1"):
        case = runs["whole"].case(name)
        assert case["result"] == "pass", (name, case.get("fail_reason"))
    perf = {k.rsplit(":", 1)[-1]: v[0] for k, v in runs["whole"].case(f"{NLT}1")
            ["perfvalues"].items()}
    assert (perf["lat_impact_avg"], perf["lat_impact_p99"]) == (1.4, 0.8)
    assert perf["gpcnet_impact_multiple_allreduce_avg"] == 1.3
    assert perf["gpcnet_loaded_rr_two_sided_lat_p99"] == 89.6


@pytest.mark.slow
@pytest.mark.mpi
def test_cut_short_outputs_fail_naming_what_is_missing(runs):
    assert "has no Multiple Alltoall row" in _reason(runs["bad"], f"{NT}1")
    reason = _reason(runs["bad"], f"{NLT}1")
    assert "no 'Network Tests running with Congestion Tests - Key Results' table" in reason


@pytest.mark.slow
@pytest.mark.mpi
def test_error_laced_outputs_fail(runs):
    reason = _reason(runs["error"], f"{NT}1")
    assert "ERROR: this application must be run on at least 2 nodes" in reason, reason
    reason = _reason(runs["error"], f"{NLT}1")
    assert "MPI_ERR_TRUNCATE" in reason or "MPI_Alltoall" in reason, reason

"""congestion (src/c/congestion.c) run for real on this host: 8 ranks standing for 4 nodes,
both kinds of aggressors end to end (their output whole by the parser), bad input refused with
one line and a non-zero exit. Its figures over real links are tests/vcluster/test_congestion.py's.
"""

from __future__ import annotations

import pytest

from fabrictest.parsers.congestion import missing, parse_congestion

pytestmark = pytest.mark.mpi

SMALL = ["-i", "20", "-s", "3", "-b", "64k", "-w", "4", "-a", "64k", "-W", "0.1"]


@pytest.mark.parametrize("mode", ["incast", "all-to-all"])
def test_one_host_run_is_whole(mpirun, c_build, mode):
    proc = mpirun(8, [c_build / "congestion", "-n", "4", "-m", mode, *SMALL], timeout=120,
                  check=True)
    res = parse_congestion(proc.stdout)
    assert missing(res, mode=mode, nodes=4, ranks=8, one_host=True) == []
    assert res.aggressor_ranks == 4  # nodes 2 and 3, two ranks each
    assert res.aggressors.bytes > 0
    # on one host there is no link to share: the figures are the host's memory, any impact
    assert res.impact("bw_gbps") > 0


def test_help(mpirun, c_build):
    proc = mpirun(2, [c_build / "congestion", "-h"], check=True)
    assert proc.stdout.startswith("Usage: congestion -n NODES -m incast|all-to-all")


@pytest.mark.parametrize(
    ("np", "argv", "message"),
    [
        (8, ["-m", "incast"], "-n NODES and -m MODE are required"),
        (8, ["-n", "4"], "-n NODES and -m MODE are required"),
        (8, ["-n", "4", "-m", "broadcast"], "-m: unknown mode 'broadcast'"),
        (4, ["-n", "2", "-m", "incast"], "-m incast needs at least 3 nodes, -n says 2"),
        (6, ["-n", "3", "-m", "all-to-all"], "-m all-to-all needs at least 4 nodes, -n says 3"),
        (6, ["-n", "4", "-m", "incast"], "6 ranks do not fill 4 nodes evenly"),
        (4, ["-n", "4", "-m", "incast"], "incast needs 2 ranks per node"),
        (8, ["-n", "4", "-m", "incast", "-b", "0"], "-b: invalid value '0'"),
        (8, ["-n", "4", "-m", "incast", "-W", "x"], "-W: invalid warm-up 'x'"),
        (8, ["-n", "4", "-m", "incast", "-q", "1"], "unknown argument '-q'"),
        (8, ["-n", "4", "-m"], "option -m needs a value"),
    ],
)
def test_bad_input_refused(mpirun, c_build, np, argv, message):
    proc = mpirun(np, [c_build / "congestion", *argv], timeout=60)
    assert proc.returncode != 0
    ours = [line for line in proc.stderr.splitlines() if line.startswith("congestion: error:")]
    assert len(ours) == 1, proc.stderr
    assert message in ours[0]
    assert "phase" not in proc.stdout

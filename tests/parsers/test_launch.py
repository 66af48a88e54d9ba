"""Launcher and MPI failure lines (fabrictest.parsers.launch): what a crashed, aborted or
failed job prints, as Open MPI 4.1 printed it on this machine, and as srun and MPICH print it."""

from __future__ import annotations

import pytest
from recordings import read

from fabrictest.parsers.launch import describe, exit_statuses, launch_failures

MPIRUN_SEGV = """\
--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun noticed that process rank 2 with PID 4242 on node node03 exited on signal 11 (Segmentation fault).
--------------------------------------------------------------------------
"""
OMPI_EXIT = """\
mpirun detected that one or more processes exited with non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[15622,1],1]
  Exit code:    1
--------------------------------------------------------------------------
"""
OMPI_ABORT = """\
--------------------------------------------------------------------------
MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD
with errorcode 7.

NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.
--------------------------------------------------------------------------
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (MPIRUN_SEGV, "rank 2 on node03 exited on signal 11 (Segmentation fault)"),
        ("srun: error: node03: task 2: Segmentation fault (core dumped)\n",
         "rank 2 on node03 exited on signal 11 (Segmentation fault)"),
        ("srun: error: node02: tasks 0-3: Exited with exit code 1\n",
         "rank 0 on node02 exited with status 1"),
        ("srun: error: node04: task 1: Killed\n", "rank 1 on node04 exited on signal 9 (Killed)"),
        (OMPI_ABORT, "MPI_Abort with errorcode 7 on rank 1"),
        ("application called MPI_Abort(MPI_COMM_WORLD, 3) - process 5\n",
         "MPI_Abort with errorcode 3 on rank 5"),
        ("mpi4py.MPI.Exception: MPI_ERR_TRUNCATE: message truncated\n",
         "MPI error MPI_ERR_TRUNCATE: message truncated"),
        ("[node03:4242] *** Process received signal ***\n[node03:4242] Signal: Segmentation fault (11)\n",
         "on node03 exited on signal 11 (Segmentation fault)"),
        (OMPI_EXIT, "rank 1 exited with status 1"),
        ("slurmstepd: error: *** STEP 12.0 ON node03 CANCELLED AT 2026-11-22T10:00:00 DUE TO TIME "
         "LIMIT ***\n", "Slurm cancelled the step 12.0 on node03 (time limit)"),
        ("/stage/rfm_job.sh: line 5:  4242 Segmentation fault      (core dumped) ./prog\n",
         "exited on signal 11 (Segmentation fault)"),
        ("fabrictest: exit status of the launch: 3\n", "the launch exited with status 3"),
        ("fabrictest: exit status of the launch: 139\n",
         "the launch exited on signal 11 (Segmentation fault)"),
    ],
)
def test_failure_lines(text, expected):
    assert expected in describe(launch_failures(text))


def test_the_crash_with_rank_and_node_comes_first():
    text = "fabrictest: exit status of the launch: 139\n" + MPIRUN_SEGV + OMPI_EXIT
    assert describe(launch_failures(text)).startswith(
        "rank 2 on node03 exited on signal 11 (Segmentation fault)"
    )


@pytest.mark.parametrize(
    "name",
    ["osu_bw-7.4-ompi4.1-local.txt", "imb-2021.7-pingpong-ompi4.1-local.txt",
     "seed000-txrx-10pairs-same-node.txt", "seed004-alltomany-4runs.txt",
     "osu_latency-7.5-validation-slingshot-mpich-stderr-noise.txt",
     "ib_write_bw-roce-uc-qp2-gbits.txt"],
)
def test_healthy_outputs_have_no_failure_lines(name):
    assert launch_failures(read(name) + "fabrictest: exit status of the launch: 0\n") == []


def test_exit_status_lines():
    text = ("fabrictest: exit status of the H H run: 0\nnoise\n"
            "fabrictest: exit status of the launch: 2\n")
    assert exit_statuses(text) == {"the H H run": 0, "the launch": 2}
    assert exit_statuses("") == {} and launch_failures(None) == []


OMPI_NOT_FOUND = """\
--------------------------------------------------------------------------
mpirun was unable to find the specified executable file, and therefore
did not launch the job.  This error was first reported for process
rank 0; it may have occurred for other processes as well.

NOTE: A common cause for this error is misspelling a mpirun command
      line parameter option (remember that mpirun interprets the first
      unrecognized command line token as the executable).

Node:       vm
Executable: txrx
--------------------------------------------------------------------------
fabrictest: exit status of the launch: 134
"""


OMPI_NOT_EXECUTABLE = """\
--------------------------------------------------------------------------
mpirun was unable to launch the specified application as it could not access
or execute an executable:

Executable: /stage/FabricBinaries_74dcb145/alltomany
Node: vm

while attempting to start process rank 0.
--------------------------------------------------------------------------
fabrictest: exit status of the launch: 132
"""


def test_a_program_that_never_started_is_named_not_called_a_signal():
    # mpirun exits 134 here: read as a status alone it looks like SIGABRT
    text = describe(launch_failures(OMPI_NOT_FOUND))
    assert text == ("the launcher could not start txrx on vm (not found); the launch exited "
                    "with status 134"), text
    # a full path that is not there (a build that made nothing): Executable: comes first, and
    # mpirun's 132 is no SIGILL
    text = describe(launch_failures(OMPI_NOT_EXECUTABLE))
    assert text == ("the launcher could not start /stage/FabricBinaries_74dcb145/alltomany on vm "
                    "(not there or not executable); the launch exited with status 132"), text
    srun = "slurmstepd: error: execve(): txrx: No such file or directory\n"
    assert describe(launch_failures(srun)) == (
        "the launcher could not start txrx (No such file or directory)")

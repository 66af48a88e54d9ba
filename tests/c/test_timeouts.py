"""Every C program has its own timeout: a rank that stops answering (here: SIGSTOP, as a hung
node or a debugger leaves it) ends `alltomany`, `bisection_bw` and `congestion` within their
`-T` seconds, with one line naming the rank that gave up and what it waited for, a non-zero
exit (5), and no rank left behind (the stopped one included: mpirun kills it).

The rank is stopped once the job is past MPI_Init (rank 0's first line, or every rank mapping
another's shared-memory segment), or, in the `start` cases, as soon as its process is there
(inside MPI_Init, which has no form with a deadline: the programs' MPI_Init watchdog of `-T`
ends the job; it had a floor of 60 s, and such a job ran 62 s with `-T 3`)."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time

import pytest

from fabrictest import mpirun as mpilaunch

pytestmark = [pytest.mark.mpi, pytest.mark.slow, pytest.mark.timing]

TIMEOUT_S = 3  # -T
#: the longest a stopped rank may hold the job: -T, the ranks' stagger (0.2 s each, up to 1.8;
#: the MPI_Init watchdog's whole seconds, up to 2), mpirun's own abort
BOUND_S = TIMEOUT_S + 15
#: `first_line` of a case that stops its rank as soon as the process is there (in MPI_Init)
AT_START = "at start"
LINE = re.compile(r"^(alltomany|bisection_bw|congestion): error: rank \d+ \(\S+\): no answer "
                  r"within [\d.]+ s waiting for .+", re.M)


def _ranks(session: int) -> dict[int, int]:
    """{rank: pid} of the MPI processes of the session led by ``session`` (mpirun)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getsid(int(entry)) != session:
                continue
            with open(f"/proc/{entry}/environ", "rb") as fp:
                env = fp.read().split(b"\0")
        except OSError:
            continue
        for item in env:
            if item.startswith((b"OMPI_COMM_WORLD_RANK=", b"PMI_RANK=")):
                found[int(item.split(b"=", 1)[1])] = int(entry)
    return found


#: how long the ranks may take to go once mpirun has ended: it kills them as it aborts, and 8
#: ranks on 2 loaded cores were seen alive 2 s after (a CI run); a rank still there after this
#: is one left behind
LEFT_WAIT_S = 15.0


def _alive_after(pids, wait_s: float) -> list[int]:
    """The pids still alive (not reaped) once ``wait_s`` seconds have passed, or [] as soon as
    none is."""
    deadline = time.monotonic() + wait_s
    while True:
        left = [pid for pid in pids if os.path.exists(f"/proc/{pid}")]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.2)


def _connected(pids) -> bool:
    """Every rank maps another rank's shared-memory segment: MPI_Init has connected them."""
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as fp:
                if fp.read().count("/dev/shm/") < 2:
                    return False
        except OSError:
            return False
    return True


#: how long mpirun may stay once every rank has ended: Open MPI 4.1.4's mpirun (Debian 12, PMIx
#: 4.2) deadlocks now and then in PMIx_server_finalize when ranks die inside MPI_Init's fence
#: (about 1 job in 10 of the `start` cases; its ranks all gone, its main thread waiting on a
#: progress thread that waits on a lock); docs/c-programs.md says what a job does then
MPIRUN_GRACE_S = 5.0


def _ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fp:
            return fp.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _wait_for_the_job(proc, pids, stopped: float) -> tuple[int | None, str, float | None]:
    """(exit status, stderr, seconds from the stop to the end of the job); None seconds for a
    job whose ranks did not all end within BOUND_S. The end is mpirun's; or, where mpirun hangs in its own
    finalize with every rank already gone, the ranks' (mpirun is then killed: its hang is
    Open MPI's, not the program's; the status is then the one mpirun printed for the rank
    that ended the job, "Exit code: 5", or None)."""
    pids = list(pids)
    err = b""
    ranks_gone: float | None = None
    while True:
        try:
            err = proc.communicate(timeout=0.5)[1]  # all of it, earlier tries' too
            return proc.returncode, err.decode(errors="replace"), time.monotonic() - stopped
        except subprocess.TimeoutExpired as timeout:
            err = timeout.stderr or err  # communicate() keeps what it read so far
        now = time.monotonic()
        if ranks_gone is None and all(_ended(pid) for pid in pids):
            ranks_gone = now
        if ranks_gone is not None and now - ranks_gone > MPIRUN_GRACE_S:
            proc.kill()
            text = proc.communicate()[1].decode(errors="replace")
            print(f"\n(mpirun stayed {MPIRUN_GRACE_S:.0f} s after its ranks ended: killed)")
            status = re.search(r"Exit code:\s+(\d+)", text)
            return (int(status[1]) if status else None), text, ranks_gone - stopped
        if ranks_gone is None and now - stopped > BOUND_S:
            return None, err.decode(errors="replace"), None


def _stop_one(np: int, argv: list, stop_rank: int, first_line: str | None):
    """Start ``argv`` on ``np`` ranks, SIGSTOP rank ``stop_rank`` once the job runs, and
    return (exit status, stderr, seconds from the stop to the end, pids left alive)."""
    if mpilaunch.flavour() != "openmpi":
        pytest.skip("finds the ranks by Open MPI's OMPI_COMM_WORLD_RANK")
    proc = subprocess.Popen(mpilaunch.command(np, [str(a) for a in argv]),
                            env=mpilaunch.environment(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    ranks: dict[int, int] = {}
    printed = b""
    try:
        start = time.monotonic()
        while time.monotonic() - start < 60:
            ranks = _ranks(proc.pid)
            if first_line == AT_START and stop_rank in ranks:
                break
            if len(ranks) == np and (first_line is None and _connected(ranks.values())):
                time.sleep(0.5)
                break
            if select.select([proc.stdout], [], [], 0.2)[0]:
                chunk = os.read(proc.stdout.fileno(), 65536)  # rank 0 prints past MPI_Init
                assert chunk, f"the job ended before it printed {first_line!r}"
                printed += chunk
            if len(ranks) == np and first_line is not None and first_line.encode() in printed:
                break
            time.sleep(0.05)
        assert first_line == AT_START or len(ranks) == np, f"only ranks {sorted(ranks)} started"
        os.kill(ranks[stop_rank], signal.SIGSTOP)
        stopped = time.monotonic()
        rc, err, took = _wait_for_the_job(proc, ranks.values(), stopped)
        if took is None:
            pytest.fail(f"{argv[0]} with rank {stop_rank} stopped did not end within "
                        f"{BOUND_S} s (a hang)")
        left = _alive_after(ranks.values(), LEFT_WAIT_S)
        return rc, err, took, left
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in ranks.values():  # never leave a stopped rank behind
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


CASES = {
    # a long timed loop: rank 1 stops in it, rank 0 waits in MPI_Waitall
    "alltomany": (2, ["alltomany", "-p", 1, "-b", 32, "-n", 200_000_000, "-r", 1], 1, None),
    # rank 3 stops inside the exchanges: its partner, rank 1, waits for its message
    "bisection_bw": (4, ["bisection_bw", 2, 10_000_000], 3, " Number of Process"),
    # the victim's receiver stops: rank 0 waits for the go's, or a probe's, answer
    "congestion incast": (8, ["congestion", "-n", 4, "-m", "incast", "-b", "64k", "-a", "64k",
                              "-i", 50, "-s", 3, "-W", 2], 1, "# congestion:"),
    # an aggressor stops: the other aggressors and the victim wait for it
    "congestion all-to-all": (8, ["congestion", "-n", 4, "-m", "all-to-all", "-b", "64k", "-a",
                                  "64k", "-i", 50, "-s", 3, "-W", 2], 3, "# congestion:"),
    # a rank stopped inside MPI_Init: the others' MPI_Init watchdog (common.c, all three share it)
    "alltomany start": (2, ["alltomany", "-p", 1, "-b", 32, "-n", 1000, "-r", 1], 0, AT_START),
    "congestion start": (8, ["congestion", "-n", 4, "-m", "incast", "-b", "64k", "-a", "64k",
                             "-i", 50, "-s", 3, "-W", 2], 5, AT_START),
}


@pytest.mark.parametrize("case", CASES)
def test_a_stopped_rank_ends_the_job_with_one_line(case, c_build):
    np, argv, stop_rank, first_line = CASES[case]
    argv = [c_build / argv[0], "-T", TIMEOUT_S, *argv[1:]]
    rc, err, took, left = _stop_one(np, argv, stop_rank, first_line)
    print(f"\n{case}: rank {stop_rank} stopped, exit {rc} after {took:.1f} s: "
          f"{(LINE.search(err) or [''])[0]}")
    assert rc not in (0, None), err
    assert LINE.search(err), err[-2000:]
    assert left == [], f"ranks left alive after the job ended: {left}"
    assert took < BOUND_S


def test_timeout_option_is_refused_when_it_makes_no_sense(mpirun, c_build):
    cases = [(["alltomany", "-n", 2], bad) for bad in ("0", "-1", "nan", "inf", "1e9", "x", "")]
    cases += [(["bisection_bw", 1, 1], "0"), (["congestion", "-n", 3, "-m", "incast"], "nan")]
    for argv, bad in cases:
        proc = mpirun(2, [c_build / argv[0], "-T", bad, *argv[1:]], timeout=60)
        assert proc.returncode == 2, (argv, bad, proc.stderr)
        assert "-T expects a timeout in seconds above 0 and at most 86400" in proc.stderr, (
            argv, bad, proc.stderr)

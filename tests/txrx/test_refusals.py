"""Bad options are refused up front (issue 10): one `ERROR:__main__:` line first on stderr,
exit 2 on every rank, no traceback, nothing started; a stalled stream among several is
reported within its own timeout."""

from __future__ import annotations

import os
import sys
import time

import pytest

pytestmark = pytest.mark.mpi

TOOL = [sys.executable, "-m", "fabrictest.txrx"]
SMALL = ["--method", "mpi", "--msg-size", "8192", "--num-blks", "4", "--num-cmsgs", "16"]


def launch(mpirun, np_, args, timeout=60):
    proc = mpirun(np_, [*TOOL, *map(str, args)], timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def first_line(proc) -> str:
    lines = proc.stderr.splitlines()
    return lines[0] if lines else ""


def assert_refused(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    line = first_line(proc)
    assert line.startswith("ERROR:__main__:"), proc.stderr
    for needle in needles:
        assert needle in line, line
    assert sum(x.startswith("ERROR:__main__:") for x in proc.stderr.splitlines()) == 1
    assert "rdma_buffers" not in proc.stdout  # refused before any buffer or traffic


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1", "3601"])
def test_timeout_must_be_finite_positive_and_at_most_an_hour(mpirun, value):
    p = launch(mpirun, 2, [*SMALL, "--nmsg", "100", "--timeout", value])
    assert_refused(p, "--timeout must be a finite number of seconds", "at most 3600")


def test_skipped_list_that_cannot_fit_is_refused_naming_the_limit(mpirun):
    # today: MemoryError "Unable to allocate 7.28 TiB" (exit 1) after start-up
    p = launch(mpirun, 2, [*SMALL, "--nmsg", "1_000_000_000_000", "--inject-loss", "0.05"])
    assert_refused(p, "50000000000 skipped messages", "limit of 16777216")


def test_count_that_overflows_64_bit_bytes_is_refused(mpirun):
    # today: accepted, and the run would go on for ever
    p = launch(mpirun, 2, [*SMALL, "--nmsg", str(2**62)], timeout=30)
    assert_refused(p, "64-bit byte counters")


def test_inject_loss_that_skips_nothing_is_refused(mpirun):
    # today: 0.005 x 100 rounds to 0, the run passes as a "loss test" that lost nothing
    p = launch(mpirun, 2, [*SMALL, "--nmsg", "100", "--inject-loss", "0.005"])
    assert_refused(p, "skips no message", "--nmsg >= 200")


@pytest.mark.parametrize("case", ["missing-dir", "directory", "unwritable"])
def test_json_path_is_checked_before_the_run(mpirun, tmp_path, case):
    path = {
        "missing-dir": tmp_path / "no" / "such" / "r.json",
        "directory": tmp_path,
        "unwritable": "/proc/txrx-result.json",
    }[case]
    p = launch(mpirun, 2, [*SMALL, "--nmsg", "2000", "--json", path])
    assert_refused(p, f"--json {path}")
    assert not list(tmp_path.rglob("*.tmp*"))


@pytest.mark.parametrize("case", ["symlink", "dangling-symlink", "fifo"])
def test_json_never_replaces_a_link_or_a_special_file(mpirun, tmp_path, case):
    # as root, `--json /dev/full` once replaced the device with a file: a link or a special
    # file at PATH is refused in one line before any traffic, and left as it was
    target = tmp_path / "keep.json"
    target.write_text("kept\n")
    path = tmp_path / "r.json"
    if case == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(target if case == "symlink" else tmp_path / "absent.json")
    before = os.lstat(path)
    p = launch(mpirun, 2, [*SMALL, "--nmsg", "200", "--json", path])
    kind = "a named pipe" if case == "fifo" else "a symbolic link"
    assert_refused(p, f"--json {path} is {kind}")
    after = os.lstat(path)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert target.read_text() == "kept\n" and not (tmp_path / "absent.json").exists()
    assert not list(tmp_path.glob("*.tmp*"))


def test_json_path_that_works_leaves_no_probe_file(mpirun, tmp_path):
    js = tmp_path / "r.json"
    p = launch(mpirun, 2, [*SMALL, "--nmsg", "200", "--json", js])
    assert p.returncode == 0, p.stderr
    assert js.is_file() and [x.name for x in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.timing  # reported within the timeout: a wall-clock bound
def test_stalled_stream_among_two_is_reported_within_its_own_timeout(mpirun):
    # transmitter 1 (rank 2) stalls after 200 messages while transmitter 0 keeps its stream
    # busy far longer than the timeout; today the receiver's one deadline, touched by the
    # healthy stream, let the stall go unreported until the stalled rank gave up by itself
    timeout = 4
    ring = ["--method", "mpi", "--msg-size", "8", "--num-blks", "4", "--num-cmsgs", "16",
            "--nrx", "1", "--nlink", "2"]  # fmt: skip
    t = time.monotonic()  # start-up and tear-down of three ranks, measured now (shared machine)
    assert launch(mpirun, 3, [*ring, "--nmsg", "200"]).returncode == 0
    overhead = time.monotonic() - t
    t = time.monotonic()
    p = launch(mpirun, 3, [*ring, "--nmsg", "50_000_000", "--fault", "stall:2:200",
                           "--timeout", timeout], timeout=90)  # fmt: skip
    took = time.monotonic() - t - overhead
    assert p.returncode == 1, p.stderr
    line = first_line(p)
    assert line.startswith("ERROR:__main__:Rank 0 receiver from transmitter 1: nothing arrived"), p.stderr
    assert "(rank 2) stopped sending or died" in line
    assert took < timeout + 8, f"reported {took:.1f} s after start-up with --timeout {timeout}"

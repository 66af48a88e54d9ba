"""The tool run for real with mpirun on this machine (method mpi; rdma's refusal)."""

from __future__ import annotations

import json
import os
import re
import sys
import time

import pytest

pytestmark = pytest.mark.mpi

TOOL = [sys.executable, "-m", "fabrictest.txrx"]
SMALL = ["--method", "mpi", "--msg-size", "8192", "--num-blks", "4", "--num-cmsgs", "16"]
RX = re.compile(r"^INFO:__main__:Rank (\d+) receiver from transmitter (\d+), message (\w[\w ]*) is ([\d.e+-]+)$", re.M)
TX = re.compile(r"^INFO:__main__:Rank (\d+) transmitter data rate is ([\d.e+-]+) Gbps$", re.M)


def counts(out: str) -> dict:
    """{(receiver, stream): {'missed': .., 'received': .., ...}} from the log lines."""
    res: dict = {}
    for r, k, what, value in RX.findall(out):
        res.setdefault((int(r), int(k)), {})[what] = float(value)
    return res


def run(mpirun, np_, args, timeout=90, **kw):
    proc = mpirun(np_, [*TOOL, *map(str, args)], timeout=timeout, **kw)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def errors(proc) -> list[str]:
    return [x for x in proc.stderr.splitlines() if x.startswith("ERROR:__main__:")]


def test_one_to_one(mpirun, tmp_path):
    js = tmp_path / "r.json"
    p = run(mpirun, 2, [*SMALL, "--nmsg", "3000", "--json", js], check=True)
    assert "INFO:__main__:" in p.stdout and re.search(r"^INFO:__main__:\S+, rdma_buffers for receiver shape is \(1, 4, 16, 8192\)$", p.stdout, re.M)
    assert re.search(r"rdma_buffers for transmitter shape is \(4, 16, 8192\)$", p.stdout, re.M)
    assert re.search(r"^INFO:__main__:Rank 0 transmitter elapsed time is [\d.e-]+ seconds$", p.stdout, re.M)
    assert re.search(r"^INFO:__main__:Rank 0 receiver from transmitter 0, elapsed time is [\d.e-]+ seconds$", p.stdout, re.M)
    assert re.search(r"^INFO:__main__:Rank 0 receiver from transmitter 0, data rate is [\d.e-]+ Gbps$", p.stdout, re.M)
    c = counts(p.stdout)[(0, 0)]
    assert c == {"missed": 0, "received": 3000, "total": 3000, "loss rate": 0.0, "corrupt": 0}
    assert float(TX.search(p.stdout).group(2)) > 0
    doc = json.loads(js.read_text())
    assert doc["exit_status"] == 0 and [r["role"] for r in doc["ranks"]] == ["receiver", "transmitter"]
    rx, tx = doc["ranks"]
    assert rx["messages_received"] == 3000 and rx["messages_missed"] == 0 and rx["peers"] == [1]
    assert rx["bytes"] == 3000 * 8192 and rx["loss_rate"] == 0.0 and rx["gbps"] > 0 and rx["host"]
    assert tx["messages_sent"] == 3000 and tx["peer"] == 0 and tx["elapsed_s"] > 0


def test_two_transmitters_into_one_receiver_process(mpirun):
    p = run(mpirun, 3, [*SMALL, "--nrx", "1", "--nlink", "2", "--nmsg", "2000"], check=True)
    assert sorted(int(t) for t, _ in TX.findall(p.stdout)) == [0, 1]
    assert re.search(r"rdma_buffers for receiver shape is \(2, 4, 16, 8192\)$", p.stdout, re.M)
    c = counts(p.stdout)
    assert sorted(c) == [(0, 0), (0, 1)]
    assert all(v["received"] == 2000 and v["missed"] == 0 for v in c.values())


def test_each_stream_names_its_link(mpirun, tmp_path):
    """`link is TXHOST (rank W) -> RXHOST (rank R)` per stream and transmitter, and peer_host in
    the JSON: the suite names a stream's figures by both ends' hosts (stream K of receiver 0 is
    transmitter rank 1+K)."""
    import socket

    js = tmp_path / "r.json"
    p = run(mpirun, 3, [*SMALL, "--nrx", "1", "--nlink", "2", "--nmsg", "500", "--json", js],
            check=True)
    host = socket.gethostname()
    for k in (0, 1):
        line = (f"INFO:__main__:Rank 0 receiver from transmitter {k}, link is {host} "
                f"(rank {1 + k}) -> {host} (rank 0)")
        assert line in p.stdout.splitlines()
        tx = f"INFO:__main__:Rank {k} transmitter link is {host} (rank {1 + k}) -> {host} (rank 0)"
        assert tx in p.stdout.splitlines()
    doc = json.loads(js.read_text())
    rx, *txs = doc["ranks"]
    assert [s["peer_host"] for s in rx["streams"]] == [host, host]
    assert [t["peer_host"] for t in txs] == [host, host]


def test_four_ranks_as_two_pairs(mpirun):
    p = run(mpirun, 4, [*SMALL, "--nrx", "2", "--nlink", "2", "--nmsg", "1500"], check=True)
    c = counts(p.stdout)
    assert sorted(c) == [(0, 0), (1, 0)]
    assert all(v["received"] == 1500 and v["total"] == 1500 for v in c.values())
    assert sorted(int(t) for t, _ in TX.findall(p.stdout)) == [0, 1]


@pytest.mark.parametrize("test", ["throughput", "ones", "increment"])
def test_each_test_mode(mpirun, test):
    p = run(mpirun, 2, [*SMALL, "--nmsg", "1000", "--test", test, "--msg-size", "4096"], check=True)
    c = counts(p.stdout)[(0, 0)]
    assert c["received"] == 1000 and c["corrupt"] == 0 and c["missed"] == 0


@pytest.mark.parametrize("test", ["throughput", "increment"])
def test_inject_loss_is_counted_exactly(mpirun, tmp_path, test):
    js = tmp_path / "r.json"
    args = [*SMALL, "--nrx", "1", "--nlink", "2", "--nmsg", "2000", "--inject-loss", "0.05",
            "--seed", "11", "--test", test, "--json", js]  # fmt: skip
    p = run(mpirun, 3, args)
    assert p.returncode != 0  # exit 3: messages were missed
    assert "WARNING:__main__:200 of 4000 messages missed, 0 corrupt: exit status 3" in p.stderr
    for v in counts(p.stdout).values():
        assert v["missed"] == 100 and v["received"] == 1900 and v["total"] == 2000
        assert v["loss rate"] == 0.05 and v["corrupt"] == 0
    doc = json.loads(js.read_text())
    assert doc["exit_status"] == 3 and doc["ranks"][0]["messages_missed"] == 200


def test_tail_loss_is_counted_from_the_final_count(mpirun):
    p = run(mpirun, 2, [*SMALL, "--nmsg", "1000", "--fault", "stop:1:937", "--timeout", "20"])
    assert p.returncode != 0
    c = counts(p.stdout)[(0, 0)]
    assert c["received"] == 937 and c["missed"] == 63 and c["total"] == 1000
    assert c["loss rate"] == pytest.approx(0.063)


def test_transmitter_that_stops_sending(mpirun):
    t = time.monotonic()
    p = run(mpirun, 2, [*SMALL, "--nmsg", "1000", "--fault", "stall:1:200", "--timeout", "3"], timeout=60)
    assert p.returncode != 0 and time.monotonic() - t < 45
    e = errors(p)
    assert len(e) == 1 and "stopped sending or died" in e[0] and "from transmitter 0" in e[0]


@pytest.mark.parametrize("rank", [0, 1])
def test_peer_that_dies_mid_run(mpirun, rank):
    t = time.monotonic()
    p = run(mpirun, 2, [*SMALL, "--nmsg", "5000", "--fault", f"die:{rank}:300", "--timeout", "5"], timeout=60)
    assert p.returncode != 0 and time.monotonic() - t < 45
    assert len(errors(p)) <= 1


@pytest.mark.parametrize(
    "np_, args, message",
    [
        (2, ["--nrx", "1", "--nlink", "2"], "world size is 2 but --nrx 1 + --nlink 2 = 3"),
        (3, ["--nrx", "2", "--nlink", "1"], "--nlink 1 is smaller than --nrx 2"),
        (2, ["--nmsg", "0"], "--nmsg must be positive"),
        (2, ["--msg-size", "-8"], "--msg-size must be positive"),
        (2, ["--num-cmsgs", "0"], "--num-cmsgs must be positive"),
        (2, ["--msg-size", "1000001"], "does not fit the buffer limits"),
        (2, ["--msg-size", "1073741824", "--num-blks", "64"], "exceed the limit of 16 GiB"),
        (2, ["--method", "tcp"], "argument --method: invalid choice: 'tcp'"),
        (2, ["--test", "zeros"], "argument --test: invalid choice: 'zeros'"),
        (2, ["--buffer", "rocm"], "argument --buffer: invalid choice: 'rocm'"),
    ],
)
def test_bad_input_one_line_nonzero_everywhere(mpirun, np_, args, message):
    base = ["--method", "mpi", "--nmsg", "100"]
    p = run(mpirun, np_, [*base, *args], timeout=60)
    assert p.returncode == 2, p.stderr
    e = errors(p)
    assert len(e) == 1 and message in e[0], p.stderr
    assert "usage:" not in p.stderr + p.stdout


def test_rdma_refuses_cleanly_without_a_device(mpirun):
    p = run(mpirun, 2, ["--method", "rdma", "--nmsg", "100"], timeout=60)
    assert p.returncode == 2
    e = errors(p)
    assert len(e) == 1 and "no RDMA device" in e[0] and "--method mpi" in e[0], p.stderr


def test_cuda_buffer_refuses_cleanly_here(mpirun):
    p = run(mpirun, 2, [*SMALL, "--buffer", "cuda", "--nmsg", "100"], timeout=60)
    assert p.returncode == 2
    e = errors(p)
    assert len(e) == 1 and "--buffer cuda" in e[0], p.stderr


FLAGS = """
from mpi4py import MPI
from fabrictest.txrx.buffers import ompi_flag
if "Open MPI" not in MPI.get_vendor()[0]:
    print("not Open MPI")
else:
    print([ompi_flag(n) for n in ("mpi_param_check", "opal_built_with_cuda_support", "no_such")])
"""


@pytest.mark.mpi
def test_open_mpi_switches_are_read_as_set_at_run_time(mpirun):
    """The MPI_T reading behind --buffer cuda's check of opal_cuda_support: a switch on by
    default, then turned off with OMPI_MCA_, read as the ranks see it; an unknown name: None."""
    script = [sys.executable, "-c", FLAGS]
    p = mpirun(1, script, timeout=60, check=True)
    if p.stdout.strip() == "not Open MPI":
        pytest.skip("the MPI here is not Open MPI: no MCA switches to read")
    assert p.stdout.strip() == "[True, False, None]", p.stderr
    p = mpirun(1, script, timeout=60, check=True,
               env={**os.environ, "OMPI_MCA_mpi_param_check": "0"})
    assert p.stdout.strip() == "[False, False, None]", p.stderr


def test_console_script_help():
    import subprocess

    out = subprocess.run([*TOOL, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--inject-loss" in out.stdout and "--fault" not in out.stdout

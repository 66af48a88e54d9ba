"""The rdma method run whole, with mpirun, over the simulated verbs provider (FABRICTEST_VERBS=sim):
the same transport code a NIC would run, on a machine without one (issue 11)."""

from __future__ import annotations

import json
import os
import re
import sys
import time

import pytest

pytest.importorskip("pyverbs.wr")
pytestmark = pytest.mark.mpi

TOOL = [sys.executable, "-m", "fabrictest.txrx"]
SMALL = ["--method", "rdma", "--msg-size", "4096", "--num-blks", "4", "--num-cmsgs", "16"]
RX = re.compile(r"^INFO:__main__:Rank (\d+) receiver from transmitter (\d+), message (\w[\w ]*) is ([\d.e+-]+)$", re.M)
TX_SIM = re.compile(r"^INFO:__main__:Rank (\d+) transmitter verbs provider is simulated: (\d+) writes "
                    r"sent, (\d+) dropped, (\d+) corrupted, (\d+) retransmitted$", re.M)  # fmt: skip


def counts(out: str) -> dict:
    res: dict = {}
    for r, k, what, value in RX.findall(out):
        res.setdefault((int(r), int(k)), {})[what] = float(value)
    return res


def sim_tx(out: str) -> dict:
    """{transmitter: (sent, dropped, corrupted, retransmitted)} from the simulated lines."""
    return {int(t): tuple(map(int, rest)) for t, *rest in TX_SIM.findall(out)}


def errors(proc) -> list[str]:
    return [x for x in proc.stderr.splitlines() if x.startswith("ERROR:__main__:")]


@pytest.fixture
def sim(mpirun, tmp_path):
    def run(np_, args, faults=None, timeout=120, **env):
        e = dict(os.environ, FABRICTEST_VERBS="sim", FABRICTEST_VERBS_SIM_DIR=str(tmp_path), **env)
        e.pop("FABRICTEST_VERBS_SIM_FAULTS", None)
        if faults:
            e["FABRICTEST_VERBS_SIM_FAULTS"] = faults
        proc = mpirun(np_, [*TOOL, *map(str, args)], timeout=timeout, env=e)
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
        return proc

    yield run
    # every segment of the simulated fabric is gone once the ranks are (killed ones swept)
    from fabrictest.simverbs import shm

    def left():
        shm.sweep_stale(str(tmp_path))
        return [p.name for p in tmp_path.iterdir() if p.name.startswith(shm.PREFIX)]

    until = time.monotonic() + 15  # ranks aborted by mpirun may take a moment to be reaped
    while left() and time.monotonic() < until:
        time.sleep(0.2)
    assert not left()


def test_one_to_one_says_it_was_simulated_everywhere(sim, tmp_path):
    js = tmp_path / "r.json"
    p = sim(2, [*SMALL, "--nmsg", "3000", "--json", js])
    assert p.returncode == 0, p.stderr
    assert counts(p.stdout)[(0, 0)] == {"missed": 0, "received": 3000, "total": 3000,
                                        "loss rate": 0.0, "corrupt": 0}  # fmt: skip
    # every set of lines says so: buffers (per host), transmitter, each receiver stream
    assert len(re.findall(r"^INFO:__main__:\S+, verbs provider is simulated \(FABRICTEST_VERBS=sim",
                          p.stdout, re.M)) == 2  # fmt: skip
    assert sim_tx(p.stdout) == {0: (3000, 0, 0, 0)}
    assert re.search(r"^INFO:__main__:Rank 0 receiver from transmitter 0, verbs provider is "
                     r"simulated: 3000 writes landed", p.stdout, re.M)  # fmt: skip
    assert p.stderr.startswith("WARNING:__main__:verbs provider is simulated")
    doc = json.loads(js.read_text())
    assert doc["verbs_provider"] == "sim" and doc["simulated"] is True
    assert "simulated" in doc["verbs"] and doc["options"]["method"] == "rdma"
    rx, tx = doc["ranks"]
    assert rx["simulated"] and rx["streams"][0]["sim"]["landed"] == 3000
    assert tx["simulated"] and tx["sim"]["sent"] == 3000 and tx["sim"]["provider"]["calls"]["post_send"] > 0


def test_two_transmitters_into_one_receiver_process(sim):
    p = sim(3, [*SMALL, "--nrx", "1", "--nlink", "2", "--nmsg", "3000"])
    assert p.returncode == 0, p.stderr
    assert re.search(r"rdma_buffers for receiver shape is \(2, 4, 16, 4096\)$", p.stdout, re.M)
    c = counts(p.stdout)
    assert sorted(c) == [(0, 0), (0, 1)]
    assert all(v["received"] == 3000 and v["missed"] == 0 for v in c.values())


def test_the_suites_parser_reads_a_simulated_run_unchanged(sim):
    # what the ReFrame test reads: the simulated lines are extra lines, not changed ones
    from fabrictest.parsers.txrx import parse_txrx

    p = sim(3, [*SMALL, "--nrx", "1", "--nlink", "2", "--nmsg", "1000"])
    assert p.returncode == 0, p.stderr
    rep = parse_txrx(p.stdout + p.stderr)
    assert len(rep.complete_streams(require_corrupt=True)) == 2 and not rep.incomplete_streams()
    assert len(rep.transmitters) == 2 and rep.errors == []
    assert [s.received for s in rep.streams] == [1000, 1000]


def test_two_pairs(sim):
    p = sim(4, [*SMALL, "--nrx", "2", "--nlink", "2", "--nmsg", "2000"])
    assert p.returncode == 0, p.stderr
    c = counts(p.stdout)
    assert sorted(c) == [(0, 0), (1, 0)] and all(v["received"] == 2000 for v in c.values())
    assert sorted(sim_tx(p.stdout)) == [0, 1]


@pytest.mark.parametrize("transport", ["uc", "rc"])
@pytest.mark.parametrize("test", ["throughput", "ones", "increment"])
def test_every_test_mode_on_uc_and_rc_with_two_streams(sim, transport, test):
    # two transmitters share one receiver process: it is slower than they are, so a data
    # check only passes if no slot is rewritten before it was checked (credits)
    args = [*SMALL, "--nrx", "1", "--nlink", "2", "--nmsg", "3000", "--test", test,
            "--transport", transport]  # fmt: skip
    p = sim(3, args)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    for v in counts(p.stdout).values():
        assert (v["received"], v["missed"], v["corrupt"]) == (3000, 0, 0)


def test_two_uc_streams_of_64_kib_into_one_receiver_lose_nothing(sim):
    # the SEREN tx/rx notes' sizes: the simulated NIC lands payloads on the receiver's CPU, so
    # unpaced it outran the receiver and starved its receive queue (75% of UC writes lost, no fault)
    p = sim(3, ["--method", "rdma", "--nrx", "1", "--nlink", "2", "--nmsg", "5000"])
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr
    for v in counts(p.stdout).values():
        assert (v["received"], v["missed"]) == (5000, 0)
    assert ", 0 without a posted receive," in p.stdout


def test_uc_writes_dropped_on_the_wire_are_counted_exactly(sim, tmp_path):
    js = tmp_path / "r.json"
    p = sim(3, [*SMALL, "--nrx", "1", "--nlink", "2", "--nmsg", "4000", "--json", js],
            faults="drop=0.03,seed=5")  # fmt: skip
    assert p.returncode == 3, p.stderr
    dropped = {t: v[1] for t, v in sim_tx(p.stdout).items()}
    assert all(d > 40 for d in dropped.values()), dropped  # about 120 each
    c = counts(p.stdout)
    for t, d in dropped.items():
        assert c[(0, t)]["missed"] == d and c[(0, t)]["received"] == 4000 - d
    total = sum(dropped.values())
    assert f"WARNING:__main__:{total} of 8000 messages missed, 0 corrupt: exit status 3" in p.stderr
    doc = json.loads(js.read_text())
    assert doc["ranks"][0]["messages_missed"] == total
    assert [s["sim"]["lost"] for s in doc["ranks"][0]["streams"]] == [dropped[0], dropped[1]]


def test_inject_loss_over_rdma_is_counted_exactly(sim):
    p = sim(2, [*SMALL, "--nmsg", "4000", "--inject-loss", "0.05", "--seed", "3", "--test", "increment"])
    assert p.returncode == 3
    assert counts(p.stdout)[(0, 0)] == {"missed": 200, "received": 3800, "total": 4000,
                                        "loss rate": 0.05, "corrupt": 0}  # fmt: skip


def test_data_checks_survive_long_runs_of_skipped_messages(sim):
    # 98% skipped leaves gaps longer than the ring: credits must not wait for a message that
    # was never sent (they once did, until the deadline)
    p = sim(2, [*SMALL, "--nmsg", "3000", "--inject-loss", "0.98", "--test", "increment",
                "--timeout", "10"])  # fmt: skip
    assert p.returncode == 3, p.stderr
    c = counts(p.stdout)[(0, 0)]
    assert (c["received"], c["missed"], c["corrupt"]) == (60, 2940, 0)


@pytest.mark.parametrize("test", ["ones", "increment"])
def test_a_corrupted_payload_is_counted_by_the_data_check(sim, test):
    p = sim(2, [*SMALL, "--nmsg", "4000", "--test", test], faults="corrupt=0.02,seed=9")
    assert p.returncode == 3
    corrupted = sim_tx(p.stdout)[0][2]
    c = counts(p.stdout)[(0, 0)]
    assert corrupted > 20 and c["corrupt"] == corrupted and c["missed"] == 0


def test_tail_loss_is_counted_from_the_final_count(sim):
    p = sim(2, [*SMALL, "--nmsg", "1000", "--fault", "stop:1:937", "--timeout", "20"])
    assert p.returncode == 3
    c = counts(p.stdout)[(0, 0)]
    assert (c["received"], c["missed"], c["total"]) == (937, 63, 1000)


def test_rc_retransmits_dropped_writes_and_loses_nothing(sim):
    p = sim(2, [*SMALL, "--nmsg", "4000", "--transport", "rc", "--test", "increment"],
            faults="drop=0.05,seed=2")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert counts(p.stdout)[(0, 0)]["missed"] == 0
    sent, dropped, _, retransmitted = sim_tx(p.stdout)[0]
    assert retransmitted > 100 and dropped == 0


def test_rc_over_a_dead_link_fails_loudly(sim):
    t = time.monotonic()
    p = sim(2, [*SMALL, "--nmsg", "4000", "--transport", "rc", "--timeout", "10"], faults="drop=1@1")
    assert p.returncode == 1 and time.monotonic() - t < 30
    e = errors(p)
    assert len(e) == 1 and "work completion error: IBV_WC_RETRY_EXC_ERR" in e[0], p.stderr
    assert e[0].startswith("ERROR:__main__:Rank 0 transmitter (rank 1)")


@pytest.mark.timing  # reported within the timeout: a wall-clock bound
def test_a_stalled_queue_pair_among_two_is_reported_within_its_timeout(sim):
    timeout = 4
    t = time.monotonic()
    p = sim(3, [*SMALL, "--nrx", "1", "--nlink", "2", "--nmsg", "5_000_000", "--timeout", timeout],
            faults="stall=300@2")  # fmt: skip
    took = time.monotonic() - t
    assert p.returncode == 1, p.stderr
    e = errors(p)
    assert e and "(rank 2)" in e[0], p.stderr  # the stalled transmitter's stream, either side
    assert took < timeout + 15, f"reported after {took:.1f} s with --timeout {timeout}"


@pytest.mark.parametrize("who", ["receiver", "transmitter"])
def test_a_killed_rank_ends_the_job_without_a_hang(sim, who):
    t = time.monotonic()
    if who == "receiver":
        p = sim(2, [*SMALL, "--nmsg", "5_000_000", "--fault", "die:0:500", "--timeout", "5"])
    else:  # the simulated fault kills the sending process after 500 writes
        p = sim(2, [*SMALL, "--nmsg", "5_000_000", "--timeout", "5"], faults="kill=500@1")
    assert p.returncode != 0 and time.monotonic() - t < 40
    assert "exited on signal 9" in p.stdout + p.stderr
    assert len(errors(p)) <= 1


def test_copy_free_wire_refuses_data_checks(sim):
    p = sim(2, [*SMALL, "--nmsg", "100", "--test", "ones"], FABRICTEST_VERBS_SIM_WIRE="nocopy")
    assert p.returncode == 2 and errors(p)[0].endswith("use it with --test throughput (a benchmark of the loops)")


def test_an_unknown_provider_is_refused_in_one_line(mpirun):
    env = dict(os.environ, FABRICTEST_VERBS="simulated")
    p = mpirun(2, [*TOOL, *SMALL, "--nmsg", "100"], timeout=60, env=env)
    assert p.returncode == 2
    assert errors(p) == ["ERROR:__main__:FABRICTEST_VERBS=simulated: expected 'sim' (the simulated"
                         " verbs provider) or nothing (pyverbs)"]  # fmt: skip

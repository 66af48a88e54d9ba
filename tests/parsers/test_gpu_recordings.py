"""The parsers and the GPU checks on the outputs of scripts/gpu-check.sh's run on an H100 with a
CUDA-aware Open MPI 4.1.4 (tests/data/real-outputs-local/SOURCES.md): OSU 7.4 with device
buffers, the C programs' device-buffer runs (payloads checked, a corrupted byte caught), txrx
--buffer cuda, and the one-line refusals when Open MPI's CUDA support is switched off at run
time. Whole and cut: tests/parsers/test_completeness.py."""

from __future__ import annotations

import pytest
from recordings import read

from fabrictest.parsers.alltomany import missing as alltomany_missing
from fabrictest.parsers.alltomany import parse_alltomany
from fabrictest.parsers.bisection import parse_bisection
from fabrictest.parsers.osu import missing as osu_missing
from fabrictest.parsers.osu import parse_osu, placement_problems
from fabrictest.parsers.txrx import missing as txrx_missing
from fabrictest.parsers.txrx import parse_txrx

MODES = {"HH": "H H", "HD": "H D", "DD": "D D"}


def osu(bench: str, mode: str):
    return parse_osu(read(f"{bench}-7.4-cuda-{mode}-ompi4.1-h100.txt"))


@pytest.mark.parametrize("bench", ["osu_bw", "osu_bibw"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_osu_74_cuda_runs_are_whole_gpu_runs(bench, mode):
    res = osu(bench, mode)
    assert (res.version, res.accelerator, res.datatype) == ("7.4", "CUDA", "MPI_CHAR")
    assert res.title.startswith("OSU MPI-CUDA ")
    assert res.buffers is None  # 7.4 prints no placement line: the title is what is checked
    assert osu_missing(res) == []  # 1 B .. 4 MiB
    assert placement_problems(res, MODES[mode], "cuda", bench) == []
    assert placement_problems(res, MODES[mode], "rocm", bench) == [
        f"{bench}: OSU ran with CUDA, not rocm"]


def test_osu_gpu_aware_verdict_on_one_gpu():
    """OsuGpuAwareTest's figure, D-D over H-H, on the H100's own runs: both ranks on one GPU,
    so D-D is CUDA IPC inside the GPU (444 GB/s), far above the 0.8 floor."""
    for bench, dd, hh in (("osu_bw", 444095.76, 15257.69), ("osu_bibw", 532562.38, 14432.84)):
        assert (osu(bench, "DD").peak(), osu(bench, "HH").peak()) == (dd, hh)
        assert osu(bench, "DD").peak() / osu(bench, "HH").peak() >= 0.8
    # H-D stages through pageable host memory on that VM (cuMemHostRegister refused)
    assert osu("osu_bw", "HD").peak() == 2144.11


def test_a_host_only_osu_asked_for_device_buffers_fails_the_placement_check():
    host = parse_osu(read("osu_bw-7.4-ompi4.1-local.txt"))
    (why,) = placement_problems(host, "D D", "cuda", "osu_bw D D")
    assert why.startswith("osu_bw D D: the title 'OSU MPI Bandwidth Test v7.4' names no GPU API")


def test_alltomany_device_buffers_and_payloads_checked_on_the_gpu():
    s = parse_alltomany(read("alltomany-cuda-device-ompi4.1-h100.txt"))
    assert alltomany_missing(s, iterations=50, nprocs=4, repetitions=3) == []
    assert s.extra["Buffer memory"] == "device CUDA"
    assert s.extra["Payload check"] == "passed (1200 messages)"  # 4 senders x 2 receivers x 50 x 3
    assert (s.unit_size, s.min_msg_size, s.max_msg_size) == (1024, 1024, 2048)


def test_alltomany_corrupted_byte_on_the_gpu_is_caught():
    s = parse_alltomany(read("alltomany-cuda-device-corrupt-ompi4.1-h100.txt"))
    assert alltomany_missing(s, iterations=3, nprocs=2) == []  # whole, and yet:
    assert s.extra["Buffer memory"] == "device CUDA"
    assert s.extra["Payload check"] == "FAILED (0 wrong sizes, 1 wrong contents, 12 messages)"


def test_bisection_device_buffers():
    res = parse_bisection(read("bisection_bw-cuda-device-ompi4.1-h100.txt"))
    assert (res.nprocs, res.ppn, res.reps) == (2, 1, 20)
    assert [r.size for r in res.rows] == [4096 << k for k in range(11)]
    assert res.at(4194304).node_mbps == 20498.87


@pytest.mark.parametrize(("name", "nrx", "nlink", "messages"), [
    ("txrx-cuda-ompi4.1-h100.txt", 1, 1, 20000),
    ("txrx-cuda-increment-ompi4.1-h100.txt", 1, 2, 5000),
])
def test_txrx_cuda_buffers_every_message_accounted(name, nrx, nlink, messages):
    rep = parse_txrx(read(name))
    assert txrx_missing(rep, nrx, nlink) == []
    assert [(s.received, s.total, s.missed, s.corrupt) for s in rep.streams] == [
        (messages, messages, 0, 0)] * nlink
    assert all(s.gbps > 0 for s in rep.streams) and rep.errors == []


@pytest.mark.parametrize(("name", "prefix"), [
    ("alltomany-cuda-switched-off-ompi4.1-h100-stderr.txt", "alltomany: error: rank 0: -d device"
                                                           " needs a CUDA-aware MPI"),
    ("txrx-cuda-switched-off-ompi4.1-h100-stderr.txt", "ERROR:__main__:--buffer cuda: this MPI "
                                                      "(Open MPI) is not CUDA-aware"),
])
def test_cuda_switched_off_at_run_time_is_refused_in_one_line(name, prefix):
    """Open MPI 4.1's MPIX_Query_cuda_support() answers what was built; before the check read
    opal_cuda_support itself, both programs crashed here with SIGSEGV in the library."""
    ours = [line for line in read(name).splitlines()
            if line.startswith(("alltomany: error:", "ERROR:"))]
    assert len(ours) == 1 and ours[0].startswith(prefix), ours
    assert "built with CUDA support, but opal_cuda_support is off at run time" in ours[0]
    assert "Segmentation fault" not in read(name)

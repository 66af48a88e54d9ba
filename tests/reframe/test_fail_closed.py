"""Fail closed, where the user meets it: ReFrame's verdict on `reframe -r --system local` when the
benchmark is a stand-in that prints a cut-short output, crashes, aborts or exits non-zero. Every
such run FAILs and its reason says what is missing (or that it crashed: signal, rank, node);
complete stand-in outputs pass, so the failures come from what the stand-ins leave out. The
stand-ins replay recorded real outputs (tests/data/real-outputs-local/): OSU 7.4 and IMB 2021.7
through OSU_HOME/IMB_HOME, and `txrx` first on PATH."""

from __future__ import annotations

import os
import re
import resource
import shutil
import stat
from pathlib import Path

import pytest
from _rfm import run_reframe
from recordings import read

pytestmark = [pytest.mark.slow, pytest.mark.mpi]

OSU = "OsuPt2PtTest %benchmark="
IMB = "ImbTest %benchmark={} %transport=tcp"
SAME_NODE = "TxRxTest %scenario=same-node %span=one %method=mpi %buffer=host"
MANY_TO_ONE = "TxRxTest %scenario=many-to-one %span=one %method=mpi %buffer=host"

ABORT_BANNER = """\
--------------------------------------------------------------------------
MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD
with errorcode 1.

NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.
You may or may not see output from other processes, depending on
exactly when Open MPI kills them.
--------------------------------------------------------------------------
"""


def _lines(name: str, keep: int | None = None) -> str:
    lines = read(name).splitlines(keepends=True)
    return "".join(lines if keep is None else lines[:keep])


def _standin(directory: Path, name: str, output: str, after: str = "exit 0") -> None:
    """`name`: rank 0 prints `output` (rank 1 prints nothing, as OSU/IMB do), then runs `after`."""
    (directory / f"{name}.out").write_text(output)
    script = directory / name
    script.write_text(
        "#!/bin/bash\n"
        f"# stand-in for {name} (tests/reframe/test_fail_closed.py)\n"
        'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then\n'
        f'    cat "{directory / (name + ".out")}"\n'
        f"    {after}\n"
        "fi\n"
        "sleep 1\n"
        "exit 0\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _txrx_lines(streams: list[tuple[int, int]], nlink: int, nmsg: int = 20000) -> str:
    out = []
    for r, k in streams:
        who = f"INFO:__main__:Rank {r} receiver from transmitter {k}"
        out += [f"{who}, elapsed time is 0.5 seconds", f"{who}, data rate is 20.0 Gbps",
                f"{who}, message missed is 0", f"{who}, message received is {nmsg}",
                f"{who}, message total is {nmsg}", f"{who}, message loss rate is 0.0"]
    for t in range(nlink):
        out += [f"INFO:__main__:Rank {t} transmitter elapsed time is 0.5 seconds",
                f"INFO:__main__:Rank {t} transmitter data rate is 20.0 Gbps"]
    return "\n".join(out) + "\n"


def _core_files_allowed():
    """Let the jobs dump core (as a site with `ulimit -c unlimited` would): the suite must keep
    core files out of its stage directories itself."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


@pytest.fixture(scope="module")
def standin_run(tmp_path_factory):
    if shutil.which("mpirun") is None or shutil.which("mpicc") is None:
        pytest.skip("mpirun/mpicc not on PATH: run scripts/install.sh and activate .venv")
    tmp = tmp_path_factory.mktemp("standins")
    bins = tmp / "bin"
    bins.mkdir()
    osu_bw = read("osu_bw-7.4-ompi4.1-local.txt")
    # header and 3 sizes (1, 2, 4 B), then the program stops, exit status 0
    _standin(bins, "osu_latency", _lines("osu_latency-7.4-ompi4.1-local.txt", keep=7))
    # a whole output, then a segmentation fault
    _standin(bins, "osu_bw", osu_bw, after="kill -SEGV $$")
    # a whole output, then exit status 3
    _standin(bins, "osu_bibw", read("osu_bibw-7.4-ompi4.1-local.txt"), after="exit 3")
    # a whole output and Open MPI's MPI_ABORT banner (exit status 0: the banner alone fails it)
    _standin(bins, "osu_get_bw", read("osu_get_bw-7.4-ompi4.1-local.txt") + ABORT_BANNER)
    # control: a whole output passes
    _standin(bins, "osu_mbw_mr", read("osu_mbw_mr-7.4-ompi4.1-local.txt"))
    # IMB: every row but no closing '# All processes entering MPI_Finalize' line
    pingpong = read("imb-2021.7-pingpong-ompi4.1-local.txt")
    no_finalize = pingpong[: pingpong.index("# All processes entering MPI_Finalize")]
    biband = read("imb-2021.7-biband-ompi4.1-local.txt")
    cut = biband[: biband.index("        65536")]  # rows up to 32 KiB, then an MPI error
    texts = {
        "pingpong": no_finalize,
        "uniband": read("imb-2021.7-uniband-ompi4.1-local.txt"),  # control: whole
        "biband": cut + "[vm:4242] *** An error occurred in MPI_Recv\n"
        "[vm:4242] *** MPI_ERR_TRUNCATE: message truncated\n",
    }
    for bench, text in texts.items():
        (bins / f"imb-{bench}.out").write_text(text)
    imb = bins / "IMB-MPI1"
    imb.write_text(
        "#!/bin/bash\n"
        'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then cat "' + str(bins) + '/imb-$1.out"; fi\n'
        "exit 0\n"
    )
    imb.chmod(0o755)
    # txrx: same-node crashes before printing anything; many-to-one reports 1 of its 2 streams
    # and exits 3
    txrx = bins / "txrx"
    (bins / "txrx-m2o.out").write_text(_txrx_lines([(0, 0)], nlink=2))
    txrx.write_text(
        "#!/bin/bash\n"
        'case " $* " in\n'
        '  *" --nlink 1 "*) [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] &&\n'
        '     { echo "ERROR:__main__:receiver 0: transmitter 0 stopped" >&2; kill -SEGV $$; } ;;\n'
        # rank 0 reports and exits 3 (txrx's 'completed with missed messages'); the other
        # ranks end after it, as txrx's do: had one exited 3 first, mpirun would kill rank 0
        # before it printed (this race once made the reason only 'exited with status 3')
        '  *) [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] &&\n'
        '     { cat "' + str(bins) + '/txrx-m2o.out"; exit 3; } ;;\n'
        "esac\n"
        "sleep 1\n"
        "exit 0\n"
    )
    txrx.chmod(0o755)
    env = {
        "OSU_HOME": str(bins),
        "IMB_HOME": str(bins),
        "PATH": f"{bins}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    args = ["--system", "local", "-r", "-n", "OsuPt2PtTest", "-n", "OsuMbwMrTest%scope=switch",
            "-n", "ImbTest", "-n", "TxRxTest"]
    return run_reframe(args, tmp, timeout=600, env=env, preexec_fn=_core_files_allowed)


def _reason(run, name: str) -> str:
    case = run.case(name)
    assert case["result"] == "fail", (name, case["result"], run.output[-3000:])
    return case.get("fail_reason") or ""


def test_cut_short_osu_fails_naming_the_missing_sizes(standin_run):
    reason = _reason(standin_run, OSU + "osu_latency")
    assert "osu_latency: 3 of 23 sizes; last 4 B, expected up to 4 MiB" in reason, reason


def test_segfault_is_reported_as_a_crash_with_rank_and_node(standin_run):
    reason = _reason(standin_run, OSU + "osu_bw")
    assert "exited on signal 11 (Segmentation fault)" in reason, reason
    # Open MPI 4.1 names the rank and node ("mpirun noticed that process rank 0 ... on node
    # vm exited on signal 11") in only some runs of the same crash; otherwise it prints
    # "1 process returned a non-zero exit code". Whenever it names them, so does the reason.
    err = (Path(standin_run.case(OSU + "osu_bw")["stagedir"]) / "rfm_job.err").read_text()
    noticed = re.search(r"mpirun noticed that process rank (\d+) with PID \d+ on node (\S+)", err)
    if noticed:
        assert f"rank {noticed[1]} on {noticed[2]}" in reason, (reason, err)


def test_nonzero_exit_fails_a_whole_output(standin_run):
    reason = _reason(standin_run, OSU + "osu_bibw")
    assert "exited with status 3" in reason, reason


def test_mpi_abort_banner_fails_a_whole_output(standin_run):
    reason = _reason(standin_run, OSU + "osu_get_bw")
    assert "MPI_Abort with errorcode 1 on rank 1" in reason, reason


def test_imb_without_its_closing_line_fails(standin_run):
    reason = _reason(standin_run, IMB.format("PingPong"))
    assert "no '# All processes entering MPI_Finalize' line" in reason, reason


def test_imb_mpi_error_is_reported_before_the_missing_sizes(standin_run):
    reason = _reason(standin_run, IMB.format("Biband"))
    assert "MPI_ERR_TRUNCATE" in reason, reason


def test_txrx_crash_is_a_crash_not_a_parse_error(standin_run):
    reason = _reason(standin_run, SAME_NODE)
    assert "exited on signal 11 (Segmentation fault)" in reason, reason
    assert "parse" not in reason.lower() and "empty" not in reason, reason
    assert "ERROR:__main__:receiver 0: transmitter 0 stopped" in reason, reason  # txrx's why


def test_txrx_missing_stream_fails_naming_it(standin_run):
    reason = _reason(standin_run, MANY_TO_ONE)
    # a tool's non-zero exit is its verdict: the reason says both
    assert "exited with status 3" in reason, reason
    assert "1 of 2 streams reported; no receiver 0 <- transmitter 1" in reason, reason


def test_whole_standin_outputs_pass(standin_run):
    for name in ("OsuMbwMrTest %scope=switch %ranks_per_node=1", IMB.format("Uniband")):
        case = standin_run.case(name)
        assert case["result"] == "pass", (name, case.get("fail_reason"), standin_run.output[-3000:])


def test_no_core_files_left_in_stage(standin_run):
    cores = [
        p for p in standin_run.prefix.rglob("core*")
        if p.is_file() and re.fullmatch(r"core(\.\d+)?", p.name)
    ]
    assert cores == [], cores


def _one_figure(name: str, size: int, value: str) -> str:
    """Recording ``name`` with its figure at ``size`` replaced by ``value``."""
    text, n = re.subn(rf"^{size}( +)\S+$", lambda m: f"{size}{m[1]}{value}", read(name),
                      count=1, flags=re.M)
    assert n == 1
    return text


@pytest.fixture(scope="module")
def impossible_figures_run(tmp_path_factory):
    """OSU stand-ins whose whole outputs hold one figure that is not a result."""
    if shutil.which("mpirun") is None or shutil.which("mpicc") is None:
        pytest.skip("mpirun/mpicc not on PATH: run scripts/install.sh and activate .venv")
    tmp = tmp_path_factory.mktemp("impossible")
    bins = tmp / "bin"
    bins.mkdir()
    for bench, size, value in IMPOSSIBLE:
        _standin(bins, bench, _one_figure(f"{bench}-7.4-ompi4.1-local.txt", size, value))
    # a whole osu_mbw_mr output at 1 % of its recorded rates: the drop its reference exists for
    _standin(bins, "osu_mbw_mr", _scaled("osu_mbw_mr-7.4-ompi4.1-local.txt", MBW_DROP))
    env = {"OSU_HOME": str(bins), "IMB_HOME": ""}
    return run_reframe(["--system", "local", "-r", "-n", "OsuPt2PtTest",
                        "-n", "OsuMbwMrTest%scope=switch"], tmp, timeout=600, env=env)


MBW_DROP = 0.01


def _scaled(name: str, factor: float) -> str:
    """Recording ``name`` with every rate row's figures multiplied by ``factor``."""
    return re.sub(r"^(\d+ +)(\S+)( +)(\S+)$",
                  lambda m: f"{m[1]}{float(m[2]) * factor:.2f}{m[3]}{float(m[4]) * factor:.2f}",
                  read(name), flags=re.M)


IMPOSSIBLE = [("osu_bw", 1048576, "inf"), ("osu_bibw", 65536, "nan"),
              ("osu_get_bw", 4096, "-3.25"), ("osu_latency", 1024, "0.00")]


@pytest.mark.parametrize(("bench", "size", "value"), IMPOSSIBLE)
def test_osu_figure_that_is_not_a_number_fails(impossible_figures_run, bench, size, value):
    """A benchmark printing inf, nan, a negative or a zero figure at a requested size FAILs,
    and the reason names the size and the value (it used to pass: peak_bw=inf)."""
    reason = _reason(impossible_figures_run, OSU + bench)
    shown = {1048576: "1 MiB", 65536: "64 KiB", 4096: "4 KiB", 1024: "1 KiB"}[size]
    assert f"{bench}: " in reason and f"at {shown} is {float(value):g}, not a finite positive" \
        " number" in reason, reason


def test_osu_mbw_mr_drop_fails_its_reference(impossible_figures_run):
    """osu_mbw_mr at 1 % of its recorded rates (whole output, exit 0) fails the reference of
    the pair's bandwidth, naming the figure; the recorded rates themselves pass (the control in
    test_whole_standin_outputs_pass)."""
    reason = _reason(impossible_figures_run, "OsuMbwMrTest")
    assert "failed to meet reference" in reason and "peak_bw" in reason, reason

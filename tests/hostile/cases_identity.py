"""Hostile cases of issue 27 item 1 (identity) for the point-to-point families and their
parsers: outputs of another benchmark, direction or unit, tables and rows printed twice,
figures no link can carry, wrapper lines, cuts; each refused in one line, no silent pass.

``fn:cases_identity:judge:TOOL/VARIANT`` judges a recording changed as VARIANT says, the way
the family would (the parser, its ``missing()`` with the benchmark asked for, the line-rate
bound): ``refused: <first reason>`` or ``accepted: <what was read>``.
``fn:cases_identity:rfm:VARIANT`` is one case of a real ``reframe -r --system local`` run (made
once per session) with stand-in ``osu_bw``, ``IMB-MPI1`` and ``txrx`` programs that print
VARIANT's output (each case picked by the iteration count the test passes: ``-P``): its
failure reason, or ``PASSED`` (a silent pass, where a failure was due).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from recordings import DATA, read
from standin_rfm import run_standins
from table import cmd, py

from fabrictest.parsers import ParseError, imb, launch, osu, perftest, rdma_link, txrx
from fabrictest.parsers.ibv_devinfo import missing as devinfo_missing
from fabrictest.parsers.ibv_devinfo import parse_ibv_devinfo

ROOT = Path(os.environ.get("HOSTILE_ROOT") or Path(__file__).resolve().parents[2]).resolve()
LOCAL_GBPS = 40_000  # the `local` system's line rate (its shared memory's ceiling)
BW, LAT = "osu_bw-7.4-ompi4.1-local.txt", "osu_latency-7.4-ompi4.1-local.txt"
PINGPONG, UC, PAIR = ("imb-2021.7-pingpong-ompi4.1-local.txt", "ib_write_bw-roce-uc-qp2-gbits.txt",
                      "seed000-txrx-1pair.txt")
WRAP = "Lmod: loading openmpi/4.1.5\n+ srun -N 2 ./benchmark\n"
AFTER = "real\t0m3.214s\nJob 4242 done\n"


def _sub(text: str, pattern: str, new: str, count: int = 1) -> str:
    out, n = re.subn(pattern, new, text, count=count, flags=re.M)
    assert n, pattern
    return out


def _scaled(text: str, factor: float) -> str:
    return re.sub(r"^(\d+ +)([\d.]+)$", lambda m: f"{m[1]}{float(m[2]) * factor:.2f}", text,
                  flags=re.M)


def _wrapped(name: str) -> str:
    return (DATA / "real-outputs-wrapped" / name).read_text()


# -- what each family asks of its output -----------------------------------------------------
def _osu(text, bench="osu_bw", rate=LOCAL_GBPS, links=1, top=1 << 22, first=None):
    r = osu.parse_osu(text)
    problems = osu.missing(r, top, first, benchmark=bench) + osu.above_line_rate(r, rate, links)
    return problems, f"{bench} {len(r.rows)} sizes, peak {r.peak():g} {r.unit}"


def _imb(text, bench="PingPong", rate=LOCAL_GBPS):
    r = imb.parse_imb(text)
    problems = imb.missing(r, bench) + imb.above_line_rate(r, bench, rate)
    return problems, problems or f"{bench} {len(r.benchmark(bench).rows)} sizes"


def _perftest(text, rate=100):
    r = perftest.parse_perftest(text)
    problems = perftest.missing(r, test="RDMA_Write BW", units="Gb/sec")
    return problems + perftest.above_line_rate(r, rate), f"{r.test} {len(r.rows)} rows"


def _txrx(text, ends=("seren-02", "seren-01"), rate=100, nrx=1, nlink=1):
    rep = txrx.parse_txrx(text)
    hosts = {(s.receiver_rank, s.transmitter): ends for s in rep.streams}
    problems = txrx.missing(rep, nrx, nlink) + txrx.above_line_rate(rep, nrx, rate, 40_000, hosts)
    return problems, f"{len(rep.streams)} streams"


def _devinfo(text):
    return devinfo_missing(parse_ibv_devinfo(text), text), "read"


def _rdma(text):
    return rdma_link.missing(rdma_link.parse_rdma_link(text), text), "read"


def _launch(text):
    failures = launch.launch_failures(text)
    return [launch.describe(failures)] if failures else [], str(launch.exit_statuses(text))


# -- the variants: TOOL/VARIANT -> (judge, text) -----------------------------------------------
def _bw_rows_twice():
    lines = read(BW).splitlines(keepends=True)
    return "".join(lines) + "".join(lines[3:])


def _imb_block_twice():
    text = read(PINGPONG)
    start = text.rindex("\n#---", 0, text.index("# Benchmarking")) + 1
    block = text[start:text.index("# All processes")]
    return text.replace(block, block + block)


VARIANTS = {
    # OsuPt2PtTest %benchmark=osu_bw (local, 40000 Gb/s)
    "osu/latency-table": (_osu, lambda: read(LAT)),
    "osu/bibw-title": (_osu, lambda: read(BW).replace("MPI Bandwidth", "MPI Bi-Directional Bandwidth")),
    "osu/get-bw-title": (_osu, lambda: read(BW).replace("MPI Bandwidth", "MPI_Get Bandwidth")),
    "osu/mbw-mr-title": (_osu, lambda: read(BW).replace(
        "MPI Bandwidth", "MPI Multiple Bandwidth / Message Rate")),
    "osu/cuda-latency-title": (_osu, lambda: read(BW).replace("MPI Bandwidth", "MPI-CUDA Latency")),
    "osu/table-twice-second-at-0.01": (_osu, lambda: read(BW) + _scaled(read(BW), 1e-6)),
    "osu/rows-twice-no-title": (_osu, _bw_rows_twice),
    "osu/row-twice-same-value": (_osu, lambda: _sub(read(BW), r"^(8192 .*\n)", r"\1\1")),
    "osu/4mib-row-0.01": (_osu, lambda: _sub(read(BW), r"^4194304 +12063\.60$", "4194304 0.01")),
    "osu/2mib-row-0.001": (_osu, lambda: _sub(read(BW), r"^2097152 +11913\.00$", "2097152 0.001")),
    "osu/1e12": (_osu, lambda: _sub(read(BW), r"^4194304 +12063\.60$", "4194304 1000000000000.00")),
    "osu/gb-per-s-header": (_osu, lambda: read(BW).replace("(MB/s)", "(GB/s)")),
    "osu/mbit-per-s-header": (_osu, lambda: read(BW).replace("(MB/s)", "(Mbit/s)")),
    "osu/latency-header-bw-title": (_osu, lambda: read(BW).replace("Bandwidth (MB/s)",
                                                                   "Latency (us)")),
    "osu/row-deleted": (_osu, lambda: _sub(read(BW), r"^65536 .*\n", "")),
    "osu/line-inside-table": (_osu, lambda: _sub(read(BW), r"^(65536 .*\n)", r"\1" + AFTER)),
    "osu/sibling-title-before-rows": (_osu, lambda: read(BW).replace(
        "# Datatype", "# OSU MPI Latency Test v7.4\n# Datatype")),
    "osu/cut-mid-line": (_osu, lambda: read(BW).rstrip("\n")[:-3]),
    "osu/row-with-extra-column": (_osu, lambda: _sub(read(BW), r"^(4194304 .*)$", r"\1 7")),
    "osu/150-gbps-on-100": (lambda t: _osu(t, rate=100), lambda: _scaled(read(BW), 1.5)),
    "osu/bibw-250-gbps-on-100": (lambda t: _osu(t, "osu_bibw", 100),
                                 lambda: _scaled(read("osu_bibw-7.4-ompi4.1-local.txt"), 1.3)),
    "osu/mbw-mr-aggregate-one-link": (lambda t: _osu(t, "osu_mbw_mr", 100, links=1),
                                      lambda: read("osu_mbw_mr-5.7-pairs620-slingshot.txt")),
    "osu/latency-in-ms": (lambda t: _osu(t, "osu_latency", first=0),
                          lambda: read("osu_latency-5.3.2-mvapich2-ib.txt").replace("(us)", "(ms)")),
    "osu/two-runs-wrapped": (lambda t: _osu(t, "osu_allreduce", top=1 << 20, first=4),
                             lambda: _wrapped("osu_allreduce-5.8-echo-lines-two-runs-azure-cyclecloud.txt")),
    "osu/wrapper-lines-good": (_osu, lambda: WRAP + read(BW) + AFTER),
    "osu/flux-wrapped-good": (lambda t: _osu(t, rate=200),
                              lambda: _wrapped("osu_bw-5.8-flux-jobspec-eventlog-after-azure-aks.txt")),
    "osu/mbw-mr-31-links-good": (lambda t: _osu(t, "osu_mbw_mr", 100, links=31),
                                 lambda: read("osu_mbw_mr-5.7-pairs620-slingshot.txt")),
    # ImbTest %benchmark=PingPong
    "imb/run-twice": (_imb, lambda: read(PINGPONG) + read(PINGPONG)),
    "imb/block-twice": (_imb, _imb_block_twice),
    "imb/row-twice": (_imb, lambda: _sub(read(PINGPONG), r"^( +1024 .*\n)", r"\1\1")),
    "imb/t-msec-header": (_imb, lambda: read(PINGPONG).replace("t[usec]", "t[msec]")),
    "imb/gbytes-header": (_imb, lambda: read(PINGPONG).replace("Mbytes/sec", "Gbytes/sec")),
    "imb/pingping-block": (_imb, lambda: read(PINGPONG).replace("Benchmarking PingPong",
                                                                "Benchmarking PingPing")),
    "imb/biband-output": (_imb, lambda: read("imb-2021.7-biband-ompi4.1-local.txt")),
    "imb/4mib-collapse": (_imb, lambda: _sub(read(PINGPONG), r"^( +4194304 +10 +)1009\.73 +4153\.89",
                                             r"\g<1>1009730.00         4.15")),
    "imb/1e12": (_imb, lambda: _sub(read(PINGPONG), r"4153\.89$", "1000000000000.00")),
    "imb/line-inside-table": (_imb, lambda: _sub(read(PINGPONG), r"^( +1024 .*\n)", r"\1" + AFTER)),
    "imb/row-deleted": (_imb, lambda: _sub(read(PINGPONG), r"^ +65536 .*\n", "")),
    "imb/cut-mid-line": (_imb, lambda: read(PINGPONG)[:read(PINGPONG).index("      4194304") + 30]),
    "imb/tcp-over-25gbe": (lambda t: _imb(t, rate=25),
                           lambda: read("imb-2021.3-pingpong-azure-hbv3-ib-hpcx.txt")),
    "imb/wrapper-lines-good": (_imb, lambda: WRAP + read(PINGPONG) + AFTER),
    # PerftestWriteBwTest (ib_write_bw -c UC --report_gbits, 100 Gb/s)
    "perftest/send-bw-banner": (_perftest, lambda: read(UC).replace("RDMA_Write BW", "Send BW")),
    "perftest/read-bw-banner": (_perftest, lambda: read(UC).replace("RDMA_Write BW", "RDMA_Read BW")),
    "perftest/mib-units": (_perftest, lambda: read(UC).replace("[Gb/sec]", "[MB/sec]")),
    "perftest/peak-avg-units-differ": (_perftest, lambda: read(UC).replace(
        "BW average[Gb/sec]", "BW average[MB/sec]")),
    "perftest/row-twice": (_perftest, lambda: _sub(read(UC), r"^( 65536 .*\n)", r"\1\1")),
    "perftest/run-twice": (_perftest, lambda: read(UC) + read(UC)),
    "perftest/setting-twice": (_perftest, lambda: read(UC).replace(
        " Mtu             : 4096[B]\n", " Mtu             : 4096[B]\n Mtu             : 1024[B]\n")),
    "perftest/average-x10": (_perftest, lambda: _sub(read(UC), r"98\.03              0\.002921",
                                                     "980.30              0.002921")),
    "perftest/row-deleted": (_perftest, lambda: _sub(read(UC), r"^ 65536 .*\n", "")),
    "perftest/line-inside-rows": (_perftest, lambda: _sub(read(UC), r"^( 65536 .*\n)", r"\1" + AFTER)),
    "perftest/cut-before-closing-rule": (_perftest, lambda: read(UC)[:read(UC).rindex("----") - 80]),
    "perftest/wrapper-lines-good": (_perftest, lambda: WRAP + read(UC) + AFTER),
    # TxRxTest
    "txrx/rate-twice": (_txrx, lambda: read(PAIR) + "INFO:__main__:Rank 0 receiver from "
                        "transmitter 0, data rate is 0.01 Gbps\n"),
    "txrx/log-twice": (_txrx, lambda: read(PAIR) + read(PAIR)),
    "txrx/mbps": (_txrx, lambda: read(PAIR).replace(" Gbps", " Mbps", 1)),
    "txrx/elapsed-in-ms": (_txrx, lambda: read(PAIR).replace(" seconds", " ms", 1)),
    "txrx/count-with-a-unit": (_txrx, lambda: _sub(read(PAIR), r"(message total is \d+)$",
                                                   r"\1 messages")),
    "txrx/1e12-between-nodes": (_txrx, lambda: re.sub(r"data rate is [\d.]+ Gbps",
                                                      "data rate is 1e12 Gbps", read(PAIR))),
    "txrx/1e12-within-a-node": (lambda t: _txrx(t, ("seren-01", "seren-01")),
                                lambda: re.sub(r"data rate is [\d.]+ Gbps",
                                               "data rate is 1e12 Gbps", read(PAIR))),
    "txrx/two-streams-into-one-host": (lambda t: _txrx(t, ("x", "seren-01"), rate=56, nlink=2),
                                       lambda: read("seed000-txrx-1rx-2tx.txt")),
    "txrx/wrapper-lines-good": (_txrx, lambda: WRAP + read(PAIR) + AFTER),
    # launch failures cut mid-line
    "launch/exit-status-13-cut": (_launch, lambda: "fabrictest: exit status of the launch: 1"),
    "launch/srun-exit-code-cut": (_launch, lambda: "srun: error: node03: tasks 0-3: Exited with "
                                  "exit code 1"),
    "launch/abort-errorcode-cut": (_launch, lambda: "MPI_ABORT was invoked on rank 1 in "
                                   "communicator MPI_COMM_WORLD\nwith errorcode 1"),
    # ibv_devinfo, rdma link
    "ibv_devinfo/port-twice": (_devinfo, lambda: _sub(
        read("ibv_devinfo-ib-cx6-mlx5-fw20.41-hdr.txt"), r"^(\s*port:\s*1\s*\n)", r"\1\1")),
    "ibv_devinfo/state-twice": (_devinfo, lambda: _sub(
        read("ibv_devinfo-ib-cx6-mlx5-fw20.41-hdr.txt"), r"^(\s*)(state:.*)\n",
        "\\1\\2\n\\1state:\t\t\tPORT_DOWN (1)\n")),
    "ibv_devinfo/mtu-x1000": (_devinfo, lambda: _sub(
        read("ibv_devinfo-ib-cx6-mlx5-fw20.41-hdr.txt"), r"active_mtu:(\s*)4096", r"active_mtu:\g<1>4096000")),
    "ibv_devinfo/speed-in-mbps": (_devinfo, lambda: read(
        "ibv_devinfo-v-roce-cx4lx-mofed4-spaces.txt").replace("Gbps", "Mbps")),
    "ibv_devinfo/gid-cut-mid-line": (_devinfo, lambda: read(
        "ibv_devinfo-v-roce-cx4lx-mofed4-spaces.txt").rstrip("\n")[:-6]),
    "rdma_link/link-twice": (_rdma, lambda: read("rdma-link-show-irdma-e810.txt") + read(
        "rdma-link-show-irdma-e810.txt").replace("ACTIVE", "DOWN")),
    "rdma_link/state-cut": (_rdma, lambda: read("rdma-link-show-irdma-e810.txt").rstrip()[:-3]),
    "rdma_link/lid-not-a-number": (_rdma, lambda: read(
        "rdma-link-show-ib-down-polling-rccl1423.txt").replace("lid 3403", "lid 34.03")),
    "rdma_link/key-twice": (_rdma, lambda: read("rdma-link-show-irdma-e810.txt").replace(
        "state DOWN", "state DOWN state ACTIVE")),
}


def judge(_d, spec: str) -> str:
    check, make = VARIANTS[spec]
    try:
        problems, what = check(make())
    except ParseError as err:
        return f"refused: {err}"
    return f"refused: {problems[0]}" if problems else f"accepted: {what}"


R = r"^refused: "
EXPECT = {
    "osu/latency-table": R + r"osu_bw: the output is 'OSU MPI Latency Test v7\.4' \(osu_latency\)",
    "osu/bibw-title": R + r"osu_bw: the output is .*\(osu_bibw\), not osu_bw",
    "osu/get-bw-title": R + r".*\(osu_get_bw\), not osu_bw",
    "osu/mbw-mr-title": R + r".*\(osu_mbw_mr\), not osu_bw",
    "osu/cuda-latency-title": R + r".*\(osu_latency\), not osu_bw",
    "osu/table-twice-second-at-0.01": R + r"2 OSU runs in one output",
    "osu/rows-twice-no-title": R + r".*prints size 1 B twice",
    "osu/row-twice-same-value": R + r".*prints size 8 KiB twice",
    "osu/4mib-row-0.01": R + r"osu_bw: 0\.01 MB/s at 4 MiB is below 0\.01 of the 10500\.9 MB/s",
    "osu/2mib-row-0.001": R + r"osu_bw: 0\.001 MB/s at 2 MiB is below 0\.01",
    "osu/1e12": R + r"osu_bw at 4 MiB: 8e\+09 Gb/s \(1e\+12 MB/s\) is above 40000 Gb/s line rate "
                r"x 1\.1 margin = 44000 Gb/s: impossible",
    "osu/gb-per-s-header": R + r"osu_bw: the column header says 'Bandwidth \(GB/s\)' \(GB/s\), "
                           r"expected MB/s",
    "osu/mbit-per-s-header": R + r".*\(Mbit/s\), expected MB/s",
    "osu/latency-header-bw-title": R + r".*'Latency \(us\)' \(us\), expected MB/s",
    "osu/row-deleted": R + r"osu_bw: 22 sizes, expected 23 .*missing 64 KiB",
    "osu/line-inside-table": R + r"osu_bw: a line inside its table that is not OSU's: 'real",
    "osu/sibling-title-before-rows": R + r"OSU output with two titles before its rows",
    "osu/cut-mid-line": R + r"osu_bw: output ends mid-line \(cut short\)",
    "osu/row-with-extra-column": R + r"osu_bw: a line inside|osu_bw: 22 of 23 sizes",
    "osu/150-gbps-on-100": R + r"osu_bw at 128 KiB: 123\.1 Gb/s .* is above 100 Gb/s line rate",
    "osu/bibw-250-gbps-on-100": R + r"osu_bibw at .* is above 2 directions x 100 Gb/s line rate",
    "osu/mbw-mr-aggregate-one-link": R + r"osu_mbw_mr at .* is above 100 Gb/s line rate",
    "osu/latency-in-ms": R + r"osu_latency: the column header says 'Latency \(ms\)' \(ms\), "
                         r"expected us",
    "osu/two-runs-wrapped": R + r"2 OSU runs in one output",
    "osu/wrapper-lines-good": r"^accepted: osu_bw 23 sizes, peak 12755\.2 MB/s$",
    "osu/flux-wrapped-good": r"^accepted: osu_bw 23 sizes, peak 24660\.6 MB/s$",
    "osu/mbw-mr-31-links-good": r"^accepted: osu_mbw_mr 23 sizes",
    "imb/run-twice": R + r"2 IMB runs in one output",
    "imb/block-twice": R + r"IMB output has two PingPong blocks for 2 processes",
    "imb/row-twice": R + r"IMB PingPong \(np=2\) prints 1 KiB twice",
    "imb/t-msec-header": R + r"PingPong: the column header .*t\[msec\].* is not PingPong's",
    "imb/gbytes-header": R + r"PingPong: the column header .*Gbytes/sec.* is not PingPong's",
    "imb/pingping-block": R + r"PingPong: a block of PingPing, which IMB was not asked to run",
    "imb/biband-output": R + r"PingPong: IMB was asked to run Biband",
    "imb/4mib-collapse": R + r"PingPong: 4\.15 MB/s at 4 MiB is below 0\.01",
    "imb/1e12": R + r"PingPong \(np=2\) at 4 MiB: 8e\+09 Gb/s .* impossible",
    "imb/line-inside-table": R + r"PingPong: a line inside its table that is not IMB's",
    "imb/row-deleted": R + r"PingPong: 23 sizes, expected 24 .*missing 64 KiB",
    "imb/cut-mid-line": R + r"PingPong: 23 of 24 sizes; last 2 MiB, expected up to 4 MiB",
    "imb/tcp-over-25gbe": R + r"PingPong \(np=2\) at .* is above 25 Gb/s line rate",
    "imb/wrapper-lines-good": r"^accepted: PingPong 24 sizes$",
    "perftest/send-bw-banner": R + r".*the output is perftest's Send BW Test, not RDMA_Write BW",
    "perftest/read-bw-banner": R + r".*RDMA_Read BW Test, not RDMA_Write BW",
    "perftest/mib-units": R + r".*bandwidth in MB/sec, expected Gb/sec",
    "perftest/peak-avg-units-differ": R + r".*BW peak in Gb/sec, BW average in MB/sec",
    "perftest/row-twice": R + r"perftest RDMA_Write BW prints 64 KiB twice",
    "perftest/run-twice": R + r"two perftest runs in one output",
    "perftest/setting-twice": R + r"perftest RDMA_Write BW prints 'Mtu' twice",
    "perftest/average-x10": R + r".*average at 4 MiB: 980\.3 Gb/s .* is above 100 Gb/s",
    "perftest/row-deleted": R + r".*not every size from 2 B to 8 MiB",
    "perftest/line-inside-rows": R + r".*a line inside its table that is not perftest's",
    "perftest/cut-before-closing-rule": R + r".*no closing rule after the rows \(cut short\)",
    "perftest/wrapper-lines-good": r"^accepted: RDMA_Write BW 23 rows$",
    "txrx/rate-twice": R + r"tx/rx output repeats a line",
    "txrx/log-twice": R + r"tx/rx output repeats a line",
    "txrx/mbps": R + r"not tx/rx output: data rate in Mbps, expected Gbps",
    "txrx/elapsed-in-ms": R + r"not tx/rx output: elapsed time in ms, expected seconds",
    "txrx/count-with-a-unit": R + r"not tx/rx output: message total in messages, expected no unit",
    "txrx/1e12-between-nodes": R + r"stream seren-02->seren-01 .* 1e\+12 Gb/s is above 100 Gb/s",
    "txrx/1e12-within-a-node": R + r".* is above 40000 Gb/s shared-memory ceiling",
    "txrx/two-streams-into-one-host": R + r"seren-01 receives from other hosts: 104 Gb/s is above "
                                      r"56 Gb/s",
    "txrx/wrapper-lines-good": r"^accepted: 1 streams$",
    "launch/exit-status-13-cut": R + r"a failure line cut short .*exit status of the launch: 1'",
    "launch/srun-exit-code-cut": R + r"a failure line cut short",
    "launch/abort-errorcode-cut": R + r"MPI_Abort on rank 1; a failure line cut short",
    "ibv_devinfo/port-twice": R + r"ibv_devinfo lists mlx5_\d port 1 twice",
    "ibv_devinfo/state-twice": R + r"ibv_devinfo prints mlx5_\d/1 state twice",
    "ibv_devinfo/mtu-x1000": R + r".*active_mtu '4096000 \(5\)': not a value ibv_devinfo prints",
    "ibv_devinfo/speed-in-mbps": R + r".*active_speed '10\.0 Mbps \(4\)': not a value",
    "ibv_devinfo/gid-cut-mid-line": R + r"ibv_devinfo: output ends mid-line \(cut short\)",
    "rdma_link/link-twice": R + r"rdma link: irdma0/1 listed twice",
    "rdma_link/state-cut": R + r"rdma link: output ends mid-line",
    "rdma_link/lid-not-a-number": R + r"rdma link: lid '34\.03' is not a number",
    "rdma_link/key-twice": R + r"rdma link: state twice",
}
assert set(EXPECT) == set(VARIANTS), set(EXPECT) ^ set(VARIANTS)
for _spec, _line in EXPECT.items():
    py(f"identity {_spec}", f"fn:cases_identity:judge:{_spec}", _line,
       why="a test passes on the wrong benchmark's output, a table twice, 1e12 MB/s (issue 27)")

# -- bounded loss tolerance ----------------------------------------------------------------------
for _value in ("0.999999", "0.5", "0.02"):
    py(f"-S loss_tolerance={_value} (bounded)", f"rule:loss_tolerance={_value}",
       r"^-S loss_tolerance=.*: loss_tolerance must be a finite number in \[0, 0\.01\]",
       why="-S loss_tolerance=0.999999 passes")
cmd("reframe -S TxRxTest.loss_tolerance=0.999999 is refused",
    ["reframe", "-c", str(ROOT / "reframe_tests"), "--system", "local", "--dry-run",
     "--prefix", "{d}/identity-loss", "--report-file", "{d}/identity-loss/report.json",
     "-n", "TxRxTest%scenario=same-node%span=one%method=mpi%buffer=host",
     "-S", "TxRxTest.loss_tolerance=0.999999"], 1,
    r"loss_tolerance=0\.999999: loss_tolerance must be a finite number in \[0, 0\.01\]",
    stream="out", match="any", why="-S loss_tolerance=0.999999 passes")

# -- through ReFrame: stand-in programs on local, one real run for all of them ------------------
#: the iteration count each case's test passes (-P), and what the stand-in prints for it
STANDIN_OSU = {  # OsuPt2PtTest %benchmark=osu_bw, by its -i
    101: ("latency-table", lambda: read(LAT), r"osu_bw: the output is 'OSU MPI Latency Test v7\.4'"),
    102: ("bibw-title", VARIANTS["osu/bibw-title"][1], r"\(osu_bibw\), not osu_bw"),
    103: ("table-twice-second-at-0.01", VARIANTS["osu/table-twice-second-at-0.01"][1],
          r"2 OSU runs in one output"),
    104: ("4mib-row-0.01", VARIANTS["osu/4mib-row-0.01"][1], r"0\.01 MB/s at 4 MiB is below"),
    105: ("1e12", VARIANTS["osu/1e12"][1],
          r"1e\+12 MB/s\) is above 40000 Gb/s shared-memory ceiling"),
    106: ("rows-twice-no-title", _bw_rows_twice, r"prints size 1 B twice"),
    107: ("gb-per-s-header", VARIANTS["osu/gb-per-s-header"][1], r"\(GB/s\), expected MB/s"),
    108: ("line-inside-table", VARIANTS["osu/line-inside-table"][1], r"a line inside its table"),
    109: ("cut-mid-line", VARIANTS["osu/cut-mid-line"][1], r"output ends mid-line"),
    110: ("wrapper-lines-good", VARIANTS["osu/wrapper-lines-good"][1], r"^PASSED$"),
}
STANDIN_IMB = {  # ImbTest %benchmark=PingPong %transport=tcp, by its -iter
    201: ("run-twice", VARIANTS["imb/run-twice"][1], r"2 IMB runs in one output"),
    202: ("row-twice", VARIANTS["imb/row-twice"][1], r"prints 1 KiB twice"),
    203: ("t-msec-header", VARIANTS["imb/t-msec-header"][1], r"is not PingPong's"),
    204: ("pingping-block", VARIANTS["imb/pingping-block"][1], r"a block of PingPing"),
    205: ("1e12", VARIANTS["imb/1e12"][1], r"1e\+12 MB/s\) is above 40000 Gb/s"),
    206: ("wrapper-lines-good", VARIANTS["imb/wrapper-lines-good"][1], r"^PASSED$"),
}
#: TxRxTest same-node (one node, 1 receiver, 1 transmitter), by its --nmsg
STANDIN_TXRX = {
    3001: ("rate-twice", "twice", r"tx/rx output repeats a line"),
    3002: ("mbps", "Mbps", r"data rate in Mbps, expected Gbps"),
    3003: ("1e12", "1e12", r"1e\+12 Gb/s is above 40000 Gb/s shared-memory ceiling"),
    3004: ("good", "", r"^PASSED$"),
}
TXRX_CASE = "TxRxTest%scenario=same-node%span=one%method=mpi%buffer=host"


def _txrx_out(nmsg: int, how: str) -> str:
    who = "INFO:__main__:Rank 0 receiver from transmitter 0"
    rate = "1e12" if how == "1e12" else "19.5"
    unit = "Mbps" if how == "Mbps" else "Gbps"
    lines = [f"{who}, elapsed time is 0.5 seconds", f"{who}, data rate is {rate} {unit}",
             f"{who}, message missed is 0", f"{who}, message received is {nmsg}",
             f"{who}, message total is {nmsg}", f"{who}, message loss rate is 0.0",
             "INFO:__main__:Rank 0 transmitter elapsed time is 0.5 seconds",
             f"INFO:__main__:Rank 0 transmitter data rate is {rate} {unit}"]
    if how == "twice":
        lines.append(f"{who}, data rate is 0.01 Gbps")
    return "\n".join(lines) + "\n"


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n# stand-in (tests/hostile/cases_identity.py)\n" + body)
    path.chmod(0o755)


def _standins(bins: Path) -> None:
    for n, (_name, make, _line) in STANDIN_OSU.items():
        (bins / f"osu_bw-{n}.out").write_text(make())
    for n, (_name, make, _line) in STANDIN_IMB.items():
        (bins / f"imb-{n}.out").write_text(make())
    for n, (_name, how, _line) in STANDIN_TXRX.items():
        (bins / f"txrx-{n}.out").write_text(_txrx_out(n, how))
    rank0 = 'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then\n'
    pick = 'n=""; prev=""; for a in "$@"; do [ "$prev" = "{flag}" ] && n=$a; prev=$a; done\n'
    for name, flag, out in (("osu_bw", "-i", "osu_bw"), ("IMB-MPI1", "-iter", "imb"),
                            ("txrx", "--nmsg", "txrx")):
        _script(bins / name, pick.replace("{flag}", flag) + rank0
                + f'  cat "{bins}/{out}-$n.out"\n' + "fi\nexit 0\n")


_RUNS: dict[str, dict] = {}


def _run(d: Path) -> dict:
    """One `reframe -r --system local` of every stand-in case: {display name: fail reason or
    PASSED}; made once per inputs directory."""
    if str(d) in _RUNS:
        return _RUNS[str(d)]
    work = d / "identity-rfm"
    bins = work / "bin"
    bins.mkdir(parents=True, exist_ok=True)
    _standins(bins)
    _RUNS[str(d)] = run_standins(work, bins, [
        "-n", "OsuPt2PtTest%benchmark=osu_bw", "-n", "ImbTest%benchmark=PingPong",
        "-n", TXRX_CASE,
        "-P", "osu_iterations=" + ",".join(map(str, STANDIN_OSU)),
        "-P", "max_repetitions=" + ",".join(map(str, STANDIN_IMB)),
        "-P", "nmsg=" + ",".join(map(str, STANDIN_TXRX))])
    return _RUNS[str(d)]


def rfm(d, spec: str) -> str:
    """The verdict of one stand-in case (spec: osu:101, imb:201, txrx:3001)."""
    tool, n = spec.split(":")
    name = {"osu": "OsuPt2PtTest%benchmark=osu_bw%.osu_iterations=",
            "imb": "ImbTest%benchmark=PingPong%transport=tcp%.max_repetitions=",
            "txrx": TXRX_CASE + "%.nmsg="}[tool] + n
    run = _run(Path(d))
    if "hang" in run:
        return run["hang"]
    return run.get(name, f"{name} did not run (not listed: silently left out): {sorted(run)[:3]}")


for _tool, _table in (("osu", STANDIN_OSU), ("imb", STANDIN_IMB), ("txrx", STANDIN_TXRX)):
    for _n, (_name, _make, _line) in _table.items():
        py(f"reframe stand-in {_tool} {_name}", f"fn:cases_identity:rfm:{_tool}:{_n}", _line,
           why="OsuPt2PtTest%benchmark=osu_bw PASSES on an osu_latency table, a Bi-Directional "
               "title, the table twice, 0.01 MB/s at 4 MiB, 1e12 MB/s (issue 27)")

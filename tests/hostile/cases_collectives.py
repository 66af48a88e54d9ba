"""Hostile cases of issue 32 (collectives) and issue 29's collective parts: OSU's and IMB's
collectives fed another collective's output, a non-blocking title, another unit, a table or a
row twice, a series that lost its first sizes or gained a foreign one, OSU's own validation
failing, figures faster than the links, barrier's one figure twice, an OSU build without
``--validation``; each refused in one line, and the whole outputs (OSU 7.5's all-to-all, IMB's
0, 4, 8 ... reductions) accepted.

``fn:cases_collectives:judge:TOOL/VARIANT`` judges a recording changed as VARIANT says, the way
the family would (the parser, ``missing()`` with the benchmark asked for, the link's bounds):
``refused: <first reason>`` or ``accepted: <what was read>``. ``fn:cases_collectives:rfm:N``
is one case of a real ``reframe -r --system local`` run (made once per session) of
``OsuCollectiveTest %benchmark=osu_allreduce`` and ``ImbTest %benchmark=allreduce`` with
stand-in ``osu_allreduce`` and ``IMB-MPI1`` programs printing case N's output (picked by the
iteration count the test passes: ``-P osu_iterations=N`` / ``-P max_repetitions=N``): its
failure reason, or ``PASSED``.
"""

from __future__ import annotations

import re
from pathlib import Path

from recordings import read
from standin_rfm import run_standins
from table import py

from fabrictest.parsers import ParseError, imb, osu

LOCAL_GBPS = 40_000  # local's line rate: the shared-memory ceiling
VCLUSTER_GBPS = 0.2  # the vcluster's tbf-shaped links
ALLREDUCE = "osu_allreduce-7.4-validation-float-ompi4.1-local.txt"
ALLTOALL_75 = "osu_alltoall-7.5-validation-8ranks-slingshot-ompi.txt"
BARRIER = "osu_barrier-7.4-ompi4.1-local.txt"
IMB_ALLREDUCE = "imb-2021.7-allreduce-np2-ompi4.1-local.txt"
WRAP = "module load openmpi/4.1.5\n+ srun -N 2 ./osu_allreduce\n"
AFTER = "real\t0m3.214s\n"


def _sub(text: str, pattern: str, new: str, count: int = 1) -> str:
    out, n = re.subn(pattern, new, text, count=count, flags=re.M)
    assert n, pattern
    return out


def _osu(text, bench="osu_allreduce", rate=LOCAL_GBPS, top=None, first=None):
    r = osu.parse_osu(text)
    problems = osu.missing(r, top, first, benchmark=bench) + osu.too_fast(r, rate)
    if r.validated is False:
        problems.append(f"{bench}: --validation reported a failure")
    return problems, f"{bench} {len(r.rows)} figures, {r.sizes()[0]} B first"


def _imb(text, bench="Allreduce", rate=LOCAL_GBPS, top=1 << 22):
    r = imb.parse_imb(text)
    problems = imb.missing(r, bench, top) + imb.too_fast(r, bench, rate)
    return problems, problems or f"{bench} {len(r.benchmark(bench).rows)} sizes"


def _times(text: str, factor: float) -> str:
    """Every latency row of an OSU table x ``factor``."""
    return re.sub(r"^(\d+ +)([\d.]+)", lambda m: f"{m[1]}{float(m[2]) * factor:.2f}", text,
                  flags=re.M)


VARIANTS = {
    # OsuCollectiveTest %benchmark=osu_allreduce (local) unless said
    "osu/alltoall-7.5-title-good": (lambda t: _osu(t, "osu_alltoall", rate=200),
                                    lambda: read(ALLTOALL_75)),
    "osu/alltoall-output-for-allreduce": (_osu, lambda: read(ALLTOALL_75)),
    "osu/non-blocking-title": (_osu, lambda: read(ALLREDUCE).replace(
        "MPI Allreduce", "MPI Non-blocking Allreduce")),
    "osu/latency-in-ms": (_osu, lambda: read(ALLREDUCE).replace("Latency(us)", "Latency(ms)")),
    "osu/table-twice": (_osu, lambda: read(ALLREDUCE) + _times(read(ALLREDUCE), 10)),
    "osu/size-twice": (_osu, lambda: _sub(read(ALLREDUCE), r"^(8 .*\n)", r"\1\1")),
    "osu/first-size-lost": (_osu, lambda: _sub(read(ALLREDUCE), r"^4 .*\n", "")),
    "osu/char-from-4-bytes": (_osu, lambda: read(ALLREDUCE).replace("MPI_FLOAT", "MPI_CHAR")),
    "osu/validation-fails": (_osu, lambda: read(
        "osu_allreduce-7.4-validation-char-fails-ompi4.1-local.txt")),
    "osu/x1e-3-on-200-mbit": (lambda t: _osu(t, rate=VCLUSTER_GBPS), lambda: _times(read(
        "osu_allreduce-5.6.2-64ranks-ompi4-ucx-ib-alaska.txt"), 1e-3)),
    "osu/line-inside-table": (_osu, lambda: _sub(read(ALLREDUCE), r"^(1024 .*\n)",
                                                  r"\1" + AFTER)),
    "osu/cut-mid-line": (_osu, lambda: read(ALLREDUCE).rstrip("\n")[:-6]),
    "osu/barrier-twice": (lambda t: _osu(t, "osu_barrier"), lambda: read(BARRIER) + read(
        BARRIER).splitlines(keepends=True)[-1]),
    "osu/barrier-for-allreduce": (_osu, lambda: read(BARRIER)),
    "osu/wrapper-lines-good": (_osu, lambda: WRAP + read(ALLREDUCE) + AFTER),
    # ImbTest %benchmark=allreduce (local) unless said
    "imb/allreduce-0-4-8-good": (_imb, lambda: read(IMB_ALLREDUCE)),
    "imb/allreduce-with-a-1-byte-row": (_imb, lambda: _sub(
        read(IMB_ALLREDUCE), r"^( +)(4)( +100 .*\n)", r"\g<1>1\3\g<1>4\3")),
    "imb/bcast-output-for-allreduce": (_imb, lambda: read("imb-2021.7-bcast-np2-ompi4.1-local.txt")),
    "imb/t-min-above-t-max": (_imb, lambda: _sub(
        read(IMB_ALLREDUCE), r"^( +1024 +100 +)([\d.]+)( +)([\d.]+)",
        r"\g<1>999.99\3\4")),
    "imb/x1e-3-on-200-mbit": (lambda t: _imb(t, "Allreduce", VCLUSTER_GBPS), lambda: re.sub(
        r"^( +\d+ +\d+ +)([\d.]+) +([\d.]+) +([\d.]+)$",
        lambda m: f"{m[1]}{float(m[2]) / 1e3:.4f} {float(m[3]) / 1e3:.4f} {float(m[4]) / 1e3:.4f}",
        read(IMB_ALLREDUCE), flags=re.M)),
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
    "osu/alltoall-7.5-title-good": r"^accepted: osu_alltoall 21 figures, 1 B first$",
    "osu/alltoall-output-for-allreduce": R + r"osu_allreduce: the output is 'OSU MPI All-to-All "
                                         r"Personalized Exchange Latency Test v7\.5' "
                                         r"\(osu_alltoall\), not osu_allreduce",
    "osu/non-blocking-title": R + r".*\(osu_iallreduce\), not osu_allreduce",
    "osu/latency-in-ms": R + r"osu_allreduce: the column header says 'Avg Latency\(ms\)' \(ms\), "
                         r"expected us",
    "osu/table-twice": R + r"2 OSU runs in one output",
    "osu/size-twice": R + r"OSU output .* prints size 8 B twice",
    "osu/first-size-lost": R + r"osu_allreduce: 18 sizes, expected 19 from 4 B to 1 MiB: "
                           r"missing 4 B",
    "osu/char-from-4-bytes": R + r"osu_allreduce: 19 sizes, expected 21 from 1 B .*missing 1 B, "
                             r"2 B",
    "osu/validation-fails": R + r"osu_allreduce: 5 of 21 sizes; last 16 B, expected up to 1 MiB",
    "osu/x1e-3-on-200-mbit": R + r"osu_allreduce at 4 B: 0\.01 us is less than 0\.5 x 4 B "
                             r"takes at 0\.2 Gb/s line rate x 1\.1 margin .*: impossible",
    "osu/line-inside-table": R + r"osu_allreduce: a line inside its table that is not OSU's: "
                             r"'real",
    "osu/cut-mid-line": R + r"osu_allreduce: output ends mid-line \(cut short\)",
    "osu/barrier-twice": R + r"OSU output 'OSU MPI Barrier Latency Test v7\.4' prints its figure "
                         r"twice",
    "osu/barrier-for-allreduce": R + r".*\(osu_barrier\), not osu_allreduce",
    "osu/wrapper-lines-good": r"^accepted: osu_allreduce 19 figures, 4 B first$",
    "imb/allreduce-0-4-8-good": r"^accepted: Allreduce 22 sizes$",
    "imb/allreduce-with-a-1-byte-row": R + r"Allreduce: 23 sizes, expected 22 .*unexpected 1 B",
    "imb/bcast-output-for-allreduce": R + r"Allreduce: IMB was asked to run Bcast",
    "imb/t-min-above-t-max": R + r"Allreduce: at 1 KiB t_min 999\.99, .* not min <= avg <= max",
    "imb/x1e-3-on-200-mbit": R + r"Allreduce \(np=2\) at .* is less than 0\.5 x .* 0\.2 Gb/s "
                             r"line rate .*: impossible",
}
assert set(EXPECT) == set(VARIANTS), set(EXPECT) ^ set(VARIANTS)
WHY = ("a collective judged on another collective's output, a non-blocking title, a table "
       "twice, lost sizes, a latency faster than its links; IMB's whole Allreduce judged "
       "incomplete; OSU 7.5's all-to-all not called alltoall (issues 29, 32)")
for _spec, _line in EXPECT.items():
    py(f"collectives {_spec}", f"fn:cases_collectives:judge:{_spec}", _line, why=WHY)


# -- through ReFrame: stand-in programs on local, one real run for all of them ------------------
_FLOAT = read(ALLREDUCE)
#: OsuCollectiveTest %benchmark=osu_allreduce, by its -i: (name, output, exit status, reason)
STANDIN_OSU = {
    301: ("whole-good", _FLOAT, 0, r"^PASSED$"),
    302: ("5x-build-without-validation", "Invalid option [-c]\nUsage: osu_allreduce "
          "[options]\n", 1, r"osu_allreduce refused an option \(an OSU build without "
          r"--validation, 5\.x\?\): run with -S OsuCollectiveTest\.validation=false"),
    303: ("no-validation-column", re.sub(r" +(Validation|Pass)$", "", _FLOAT, flags=re.M), 0,
          r"osu_allreduce: no Validation column, though --validation was asked"),
    304: ("alltoall-output", read("osu_alltoall-7.4-validation-ompi4.1-local.txt"), 0,
          r"\(osu_alltoall\), not osu_allreduce"),
    305: ("x1e-5", _times(_FLOAT, 1e-5), 0, r"osu_allreduce at 1 MiB: 0\.02 us is less than 0\.5 x "
          r"1 MiB takes at 40000 Gb/s shared-memory ceiling"),
    306: ("validation-fail", _FLOAT.replace("Pass", "Fail", 1), 0,
          r"osu_allreduce: --validation reported a failure"),
}
_IMB = read(IMB_ALLREDUCE)
#: ImbTest %benchmark=allreduce %transport=tcp, by its -iter
STANDIN_IMB = {
    401: ("whole-good", _IMB, 0, r"^PASSED$"),
    402: ("np4-block-for-2-ranks", _IMB.replace("#processes = 2", "#processes = 4"), 0,
          r"allreduce: 4 processes, expected 2"),
    403: ("no-4-byte-row", re.sub(r"^ +4 +100 .*\n", "", _IMB, count=1, flags=re.M), 0,
          r"allreduce: 21 sizes, expected 22 .*missing 4 B"),
}
OSU_CASE = "OsuCollectiveTest%benchmark=osu_allreduce%per_node=1%scope=all%.osu_iterations="
IMB_CASE = "ImbTest%benchmark=allreduce%transport=tcp%.max_repetitions="


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n# stand-in (tests/hostile/cases_collectives.py)\n" + body)
    path.chmod(0o755)


def _standins(bins: Path) -> None:
    for prefix, table in (("osu", STANDIN_OSU), ("imb", STANDIN_IMB)):
        for n, (_name, text, status, _line) in table.items():
            (bins / f"{prefix}-{n}.out").write_text(text)
            (bins / f"{prefix}-{n}.rc").write_text(f"{status}\n")
    pick = 'n=""; prev=""; for a in "$@"; do [ "$prev" = "{flag}" ] && n=$a; prev=$a; done\n'
    for name, flag, out in (("osu_allreduce", "-i", "osu"), ("IMB-MPI1", "-iter", "imb")):
        _script(bins / name, pick.replace("{flag}", flag)
                + 'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then\n'
                + f'  cat "{bins}/{out}-$n.out"; exit "$(cat "{bins}/{out}-$n.rc")"\n'
                + "fi\nsleep 1\nexit 0\n")


_RUNS: dict[str, dict] = {}


def _run(d: Path) -> dict:
    """One `reframe -r --system local` of every stand-in case: {display name: fail reason or
    PASSED}; made once per inputs directory."""
    if str(d) in _RUNS:
        return _RUNS[str(d)]
    work = d / "collectives-rfm"
    bins = work / "bin"
    bins.mkdir(parents=True, exist_ok=True)
    _standins(bins)
    _RUNS[str(d)] = run_standins(work, bins, [
        "-n", "OsuCollectiveTest%benchmark=osu_allreduce", "-n", "ImbTest%benchmark=allreduce",
        "-P", "osu_iterations=" + ",".join(map(str, STANDIN_OSU)),
        "-P", "max_repetitions=" + ",".join(map(str, STANDIN_IMB))])
    return _RUNS[str(d)]


def rfm(d, spec: str) -> str:
    """The verdict of one stand-in case (spec: osu:301, imb:401)."""
    tool, n = spec.split(":")
    name = {"osu": OSU_CASE, "imb": IMB_CASE}[tool] + n
    run = _run(Path(d))
    if "hang" in run:
        return run["hang"]
    return run.get(name, f"{name} did not run (not listed: silently left out): {sorted(run)[:3]}")


for _tool, _table in (("osu", STANDIN_OSU), ("imb", STANDIN_IMB)):
    for _n, (_name, _text, _rc, _line) in _table.items():
        py(f"reframe stand-in collective {_tool} {_name}", f"fn:cases_collectives:rfm:{_tool}:{_n}",
           _line, why="OsuCollectiveTest/ImbTest collectives pass on another collective's "
                      "output, a failed validation, a figure no link carries (issue 32)")

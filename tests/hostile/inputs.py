"""The hostile inputs' files: reference files a hand slipped on, tool outputs a fabric or a
benchmark really produces (cut short, of another benchmark, with non-finite figures),
perflogs and run reports with such figures, binary files where text is expected. Written
into one directory per test session (:func:`write_all`)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real-outputs"
SEEDS = ROOT / "tests" / "data" / "seeds"

#: a reference file the sweep can use (`--expect-from F --expect-system local`): the tx/rx
#: paired stream rate of the simulation (1 Gbps per run), within the strict band
SWEEP_REF = """\
$provenance:
  TxRxTest:
    local:
      document: "the hostile-input table: the simulation's healthy rate"
      table: "fabric-sweep --launcher sim"
      measured_with: {msg_size: 65536, num_blks: 10, num_cmsgs: 100, nmsg: 500, transport: null}
TxRxTest:
  $index: ['$system', 'scenario', 'method', 'buffer']
  local:
    paired:
      mpi:
        host:
          stream_gbps: [1.0, -0.3, null, Gbps]
"""

ENTRY = "          stream_gbps: [1.0, -0.3, null, Gbps]\n"
TIME_ENTRY = "          t_stream: [1.0, null, 0.5, s]\n"

#: name -> (what replaces ENTRY in SWEEP_REF, the first line the loader must give)
REFERENCE_MUTATIONS: dict[str, tuple[str, str]] = {
    "lower_-0.99999": ("          stream_gbps: [1.0, -0.99999, null, Gbps]\n",
                       r"lower bound -0\.99999 catches only a drop over 99\.999 %"),
    "lower_-0.9_no_reason": ("          stream_gbps: [1.0, -0.9, null, Gbps]\n",
                             r"lower bound -0\.9 catches only a drop over 90 %.*loose"),
    "ref_1e-300": ("          stream_gbps: [1.0e-300, -0.3, null, Gbps]\n",
                   r"reference 1e-300 is outside"),
    "ref_subnormal": ("          stream_gbps: [5.0e-324, -0.3, null, Gbps]\n",
                      r"reference 4\.94066e-324 is outside"),
    "ref_1e308": ("          stream_gbps: [1.0e+308, -0.3, null, Gbps]\n",
                  r"reference 1e\+308 is outside"),
    "upper_1e308": ("          stream_gbps: [1.0, -0.3, 1.0e+308, Gbps]\n",
                    r"upper bound 1e\+308 catches only a rise"),
    "ref_nan": ("          stream_gbps: [.nan, -0.3, null, Gbps]\n",
                r"reference nan is not a finite number"),
    "ref_inf": ("          stream_gbps: [.inf, -0.3, null, Gbps]\n",
                r"reference inf is not a finite number"),
    "ref_zero": ("          stream_gbps: [0.0, -0.3, null, Gbps]\n", r"reference of 0"),
    "ref_negative": ("          stream_gbps: [-1.0, -0.3, null, Gbps]\n",
                     r"reference -1(\.0)? is negative"),
    "ref_string": ("          stream_gbps: [fast, -0.3, null, Gbps]\n",
                   r"reference 'fast' is not a finite number"),
    "both_null": ("          stream_gbps: [1.0, null, null, Gbps]\n", r"both bounds are null"),
    "lower_positive": ("          stream_gbps: [1.0, 0.2, null, Gbps]\n",
                       r"lower threshold 0\.2 must be <= 0"),
    "upper_negative": ("          stream_gbps: [1.0, -0.3, -0.1, Gbps]\n",
                       r"upper threshold -0\.1 must be >= 0"),
    "lower_nan": ("          stream_gbps: [1.0, .nan, null, Gbps]\n",
                  r"lower threshold nan is not a finite number"),
    "rate_only_upper": ("          stream_gbps: [1.0, null, 0.3, Gbps]\n",
                        r"a rate \(stream_gbps in Gbps\) needs a lower bound"),
    "time_only_lower": (ENTRY + "          t_stream: [1.0, -0.5, null, s]\n",
                        r"t_stream in s \(a time\) needs an upper bound"),
    "short_entry": ("          stream_gbps: [1.0, -0.3]\n", r"expected \[ref, lower, upper, unit\]"),
    "duplicate_key": (ENTRY + ENTRY, r"key 'stream_gbps' is written twice"),
    "unit_number": ("          stream_gbps: [1.0, -0.3, null, 5]\n", r"unit 5 is not a string"),
}

#: accepted: the same rule's good side (they must load, and the sweep must run on them)
REFERENCE_GOOD: dict[str, str] = {
    "strict_band_edge": "          stream_gbps: [1.0, -0.5, null, Gbps]\n",
    "time_upper": ENTRY + TIME_ENTRY,
}

LOOSE_WITH_REASON = SWEEP_REF.replace(
    '      table: "fabric-sweep --launcher sim"\n',
    '      table: "fabric-sweep --launcher sim"\n      loose: "the table\'s own reason"\n'
).replace(ENTRY, "          stream_gbps: [1.0, -0.9, null, Gbps]\n")


def _osu_bw_text() -> str:
    return (REAL / "osu_bw-5.6.3-ompi3-ucx-roce.txt").read_text()


def osu_outputs() -> dict[str, str]:
    """osu_bw outputs as a sweep pair may print them (size 1 MiB requested)."""
    full = _osu_bw_text()
    cut = full[: full.index("\n32768")] + "\n"  # stops after the 16 KiB row
    one_row = "# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n1048576   {v}\n"
    return {
        "whole": full,
        "cut_at_16k": cut,
        "cut_mid_row": full[: full.index("\n1048576") + 12],
        "latency": (REAL / "osu_latency-5.3.2-mvapich2-ib.txt").read_text(),
        "inf": one_row.format(v="inf"),
        "nan": one_row.format(v="nan"),
        "zero": one_row.format(v="0.00"),
        "negative": one_row.format(v="-12.5"),
        "empty": "",
        "garbage": "Segmentation fault (core dumped)\n",
        "other_size": one_row.replace("1048576", "65536").format(v="5000.0"),
    }


def txrx_outputs() -> dict[str, str]:
    whole = (SEEDS / "seed000-txrx-1pair.txt").read_text()
    rate = "data rate is 97.71920957824764 Gbps"
    return {
        "whole": whole,
        "rate_inf": whole.replace(rate, "data rate is inf Gbps"),
        "rate_nan": whole.replace(rate, "data rate is nan Gbps"),
        "rate_zero": whole.replace(rate, "data rate is 0.0 Gbps"),
        "no_total_line": "\n".join(line for line in whole.splitlines()
                                   if "message total" not in line) + "\n",
        "cut_after_rate": whole[: whole.index(rate) + len(rate)] + "\n",
        "empty": "",
    }


def perflog(rows: list[tuple[str, str]]) -> str:
    """A perflog of TxRxTest on local with one figure per row: (value, result)."""
    head = ("job_completion_time|reframe version|display_name|system|partition|environ|jobid|"
            "result|stream_gbps_value|stream_gbps_unit|stream_gbps_ref|"
            "stream_gbps_lower_thres|stream_gbps_upper_thres\n")
    body = "".join(
        f"2026-11-2{i}T10:00:00|reframe 4.10.4|TxRxTest %scenario=paired|local|default|"
        f"openmpi|{100 + i}|{res}|{val}|Gbps|1.0|-0.3|None\n"
        for i, (val, res) in enumerate(rows))
    return head + body


def run_report(uuid: str, checkout: str, value: float) -> dict:
    """A ReFrame run report of one TxRxTest figure on local, run from `checkout`."""
    tc = {"name": "TxRxTest_1", "display_name": "TxRxTest %scenario=paired", "system": "local",
          "partition": "default", "environ": "openmpi", "result": "pass",
          "scenario": "paired", "session_uuid": uuid,
          "perfvalues": {"local:default:stream_gbps": [value, 1.0, -0.3, None, "Gbps", "pass"]}}
    info = {"uuid": uuid, "hostname": "vm", "workdir": checkout,
            "config_files": ["<builtin>", f"{checkout}/config/reframe/settings.py"]}
    return {"session_info": info, "runs": [{"testcases": [tc]}]}


def write_all(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    refs = d / "refs"
    refs.mkdir(exist_ok=True)
    (refs / "good.yaml").write_text(SWEEP_REF)
    (refs / "loose_with_reason.yaml").write_text(LOOSE_WITH_REASON)
    for name, (entry, _line) in REFERENCE_MUTATIONS.items():
        (refs / f"{name}.yaml").write_text(SWEEP_REF.replace(ENTRY, entry))
    for name, entry in REFERENCE_GOOD.items():
        (refs / f"{name}.yaml").write_text(SWEEP_REF.replace(ENTRY, entry))
    (refs / "binary.yaml").write_bytes(bytes(range(256)) * 4)
    (refs / "nul.yaml").write_text("TxRxTest:\x00\n")
    (refs / "empty.yaml").write_text("")
    (refs / "list.yaml").write_text("- 1\n- 2\n")
    (refs / "not_yaml.yaml").write_text("TxRxTest: [1, 2\n")
    (refs / "a_directory.yaml").mkdir(exist_ok=True)
    # the suite's own local.yaml with one slip each (for ReFrame runs with -S reference_file)
    local = (ROOT / "reference" / "local.yaml").read_text()
    rfm = d / "rfmrefs"
    rfm.mkdir(exist_ok=True)
    rfm_slips = {
        "dup.yaml": local.replace("          stream_gbps: [3.789, -0.5, null, Gbps]\n",
                                  "          stream_gbps: [3.789, -0.5, null, Gbps]\n"
                                  "          stream_gbps: [0.001, -0.5, null, Gbps]\n"),
        # bisection and all-to-many are informational on local (no entry): the slip adds one
        "tiny.yaml": local.replace("BisectionTest:\n  $index: ['$system']\n",
                                   "BisectionTest:\n  $index: ['$system']\n  local:\n"
                                   "    node_bw: [1.0e-300, -0.5, null, MB/s]\n"),
        "lower.yaml": local.replace("stream_gbps: [5.15, -0.5, null, Gbps]",
                                    "stream_gbps: [5.15, -0.99999, null, Gbps]"),
        "upper.yaml": local.replace("AllToManyTest:\n  $index: ['$system', 'iterations']\n",
                                    "AllToManyTest:\n  $index: ['$system', 'iterations']\n"
                                    "  local:\n    2:\n"
                                    "      t_per_iteration: [0.001, null, 1.0e+308, s]\n"),
        "time_from_below.yaml": local.replace("end_to_end_growth: [1.0, null, 0.5, x]",
                                              "end_to_end_growth: [1.0, -0.5, null, x]"),
        "subnormal.yaml": local.replace("latency: [1.0, null, 49.0, us]",
                                        "latency: [5.0e-324, null, 0.5, us]"),
    }
    for name, text in rfm_slips.items():
        assert text != local, name  # the slip must have landed
        (rfm / name).write_text(text)
    (rfm / "binary.yaml").write_bytes(b"\xff\xfe" + bytes(range(256)) * 8)
    # tool outputs
    out = d / "outputs"
    out.mkdir(exist_ok=True)
    for name, text in osu_outputs().items():
        (out / f"osu_bw-{name}.txt").write_text(text)
    latency = (REAL / "osu_latency-5.3.2-mvapich2-ib.txt").read_text()
    (out / "osu_latency-site-version.txt").write_text(
        latency.replace("Latency Test v5.3.2", "Latency Test v7.0-site1"))
    (out / "osu_bw-inf-at-4k.txt").write_text(
        _osu_bw_text().replace("4096                 5094.90", "4096                     inf"))
    for name, text in txrx_outputs().items():
        (out / f"txrx-{name}.txt").write_text(text)
    # perflogs and reports
    logs = d / "perflogs"
    for name, rows in {
        "base": [("1.00", "pass"), ("1.01", "pass"), ("0.99", "pass")],
        "target": [("1.02", "pass"), ("0.98", "pass"), ("1.00", "pass")],
        "inf": [("inf", "pass")],
        "nan": [("nan", "pass")],
        "negative": [("-5.0", "pass")],
        "zero": [("0.0", "pass")],
    }.items():
        (logs / name).mkdir(parents=True, exist_ok=True)
        (logs / name / "TxRxTest.log").write_text(perflog(rows))
    (logs / "binary").mkdir(exist_ok=True)
    (logs / "binary" / "TxRxTest.log").write_bytes(bytes(range(256)) * 4)
    (logs / "empty").mkdir(exist_ok=True)
    (d / "report-not-json.json").write_text("{ not json")
    (d / "report-binary.json").write_bytes(b"\x80\x81\xff" * 50)
    (d / "report-not-a-report.json").write_text(json.dumps({"hello": 1}))
    (d / "report-list.json").write_text(json.dumps([1, 2, 3]))
    for i, (checkout, value) in enumerate((("/clone/a", 1.0), ("/clone/b", 1.01),
                                            ("/clone/a", 0.99))):
        (d / f"mixed-{i}.json").write_text(json.dumps(run_report(f"{i}" * 8, checkout, value)))
    (d / "one-checkout.json").write_text(json.dumps(run_report("9" * 8, "/clone/a", 1.0)))
    (d / "sweep-binary.json").write_bytes(b"\xff" * 64)
    (d / "sweep-not-json.json").write_text("[")
    (d / "hostfile-binary").write_bytes(b"\xff\xfe\x00node01\n")
    (d / "hostfile-empty").write_text("")
    (d / "nodes-slow.txt").write_text("node03=0.5\n")
    (d / "nodes-bad.txt").write_text("node03=abc\n")
    (d / "all-slow.txt").write_text("".join(f"node0{i}=0.3\n" for i in range(1, 5)))
    # a sysfs with no RDMA device (fabric-health's "no device" path) and a readable /proc
    (d / "sys").mkdir(exist_ok=True)
    (d / "proc").mkdir(exist_ok=True)
    return d

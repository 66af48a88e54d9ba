"""The hostile-input table: every command and family fed what a careless hand, a broken
benchmark or a degraded fabric gives it, each with the exit status and the first line it must
answer with. ``{d}`` in an argument is the directory of :mod:`inputs`' files.

Kinds: ``cmd`` (a command run in a subprocess under a timeout: the first non-empty line of
stderr, or of stdout with ``stream="out"``, must match ``line``; ``match="any"``: some line),
``py`` (a call in this process: what it raises, or returns, read as a line; ``fn:MODULE:FUNC``
or ``fn:MODULE:FUNC:ARG`` calls ``FUNC(d)`` or ``FUNC(d, ARG)`` of a module beside this file,
``d`` being the inputs' directory), ``rfm`` (one
figure of a batched ReFrame run: the test named by ``argv[0]`` must fail with ``line`` in
its reason; see test_hostile.RFM_BATCHES).

``pending``: a case that passes once the named branch lands (issue 18's other half: finite
figures in the parsers and in fabric-report, the parsers' misreadings, txrx --help); it is
expected to fail until then (xfail, not strict), and the coordinator drops the mark.
``why``: the issue's "Why" line it stands for.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path

USAGE_HEALTH = 64  # fabric-health's usage status (2 is "no RDMA device")
FAULTS = "issue18-faults"


@dataclass(frozen=True)
class Case:
    id: str
    kind: str  # cmd | py | rfm
    argv: tuple[str, ...]
    rc: int | None  # expected exit status (cmd); None for py/rfm
    line: str  # regex: the first line (or any line with match="any")
    stream: str = "err"
    match: str = "first"
    pending: str | None = None
    why: str = ""
    env: dict = field(default_factory=dict)


CASES: list[Case] = []


def cmd(id, argv, rc, line, **kw):
    CASES.append(Case(id, "cmd", tuple(argv), rc, line, **kw))


def py(id, call, line, **kw):
    CASES.append(Case(id, "py", (call,), None, line, **kw))


def rfm(id, test, line, **kw):
    CASES.append(Case(id, "rfm", (test,), None, line, **kw))


# ---------------------------------------------------------------- fabric-health (exit 64)
NO_DEV = ["--sys-root", "{d}/sys", "--proc-root", "{d}/proc", "--no-ibv-devinfo",
          "--node-name", "n01"]
HEALTH_BAD = [
    ("--expect-rate", "-5", r"--expect-rate -5: a port rate"),
    ("--expect-rate", "0", r"--expect-rate 0: a port rate"),
    ("--expect-rate", "nan", r"--expect-rate nan: a port rate"),
    ("--expect-rate", "inf", r"--expect-rate inf: a port rate"),
    ("--expect-rate=-inf", None, r"--expect-rate -inf: a port rate"),
    ("--expect-rate", "1e308", r"--expect-rate 1e\+308: a port rate"),
    ("--expect-rate", "fast", r"argument --expect-rate: invalid float value"),
    ("--netdev-mtu", "0", r"--netdev-mtu 0: an interface MTU is 68 to 65536"),
    ("--netdev-mtu", "-1500", r"--netdev-mtu -1500: an interface MTU"),
    ("--netdev-mtu", "70000", r"--netdev-mtu 70000: an interface MTU"),
    ("--netdev-mtu", "9000.5", r"argument --netdev-mtu: invalid int value"),
    ("--expect-mtu", "0", r"--expect-mtu 0: an RDMA MTU is one of"),
    ("--expect-mtu", "1000", r"--expect-mtu 1000: an RDMA MTU is one of"),
    ("--expect-mtu", "8192", r"--expect-mtu 8192: an RDMA MTU is one of"),
    ("--expect-mtu", "-4096", r"--expect-mtu -4096: an RDMA MTU is one of"),
    ("--port", "0", r"--port 0: an RDMA port number is 1 to 255"),
    ("--port", "256", r"--port 256: an RDMA port number"),
    ("--nodes", "0", r"--nodes and --nics-per-node must be >= 1"),
    ("--nodes", "-4", r"--nodes and --nics-per-node must be >= 1"),
    ("--nics-per-node", "0", r"--nodes and --nics-per-node must be >= 1"),
    ("--link-layer", "token-ring", r"--link-layer 'token-ring': Ethernet \(RoCE\) or InfiniBand"),
    ("--device", "", r"--device needs a device name"),
    ("--bogus", None, r"unrecognized arguments: --bogus"),
]
for opt, val, line in HEALTH_BAD:
    argv = [opt] + ([] if val is None else [val])
    cmd(f"health {' '.join(argv)}", ["fabric-health", *argv], USAGE_HEALTH,
        rf"^fabric-health: error: {line}",
        why="--expect-rate -5 passes every check; nan|inf, --netdev-mtu 0 give 'FAIL 100 < nan'")
    # the same value on a node without an RDMA device: refused, not hidden behind "no device"
    cmd(f"health no-device {' '.join(argv)}", ["fabric-health", *NO_DEV, *argv], USAGE_HEALTH,
        rf"^fabric-health: error: {line}",
        why="with no RDMA device a bad value is hidden behind 'no RDMA device'")
cmd("health no-device (a good command line)", ["fabric-health", *NO_DEV], 2,
    r"^HEALTH n01 no RDMA device: ", stream="out")

# ---------------------------------------------------------------- txrx (exit 2, one line)
TXRX_BAD = [
    (["--nmsg", "0"], r"--nmsg must be positive, got 0"),
    (["--nmsg", "-1"], r"--nmsg must be positive"),
    (["--nmsg", "many"], r"nmsg"),
    (["--msg-size", "0"], r"--msg-size must be positive"),
    (["--msg-size", "3"], r"--msg-size 3 does not fit the buffer limits"),
    (["--msg-size", "99999999999"], r"--msg-size 99999999999 does not fit"),
    (["--num-blks", "0"], r"--num-blks must be positive"),
    (["--num-cmsgs", "0"], r"--num-cmsgs must be positive"),
    (["--nrx", "0"], r"--nrx must be positive"),
    (["--nlink", "0"], r"--nlink must be positive"),
    (["--timeout", "0"], r"--timeout must be a finite number of seconds"),
    (["--timeout", "nan"], r"--timeout must be a finite number of seconds"),
    (["--timeout", "inf"], r"--timeout must be a finite number of seconds"),
    (["--timeout", "-5"], r"--timeout must be a finite number of seconds"),
    (["--inject-loss", "1"], r"--inject-loss must be in \[0, 1\)"),
    (["--inject-loss", "nan"], r"--inject-loss must be in \[0, 1\)"),
    (["--inject-loss", "-0.1"], r"--inject-loss must be in \[0, 1\)"),
    (["--method", "carrier-pigeon"], r"method"),
    (["--test", "nothing"], r"test"),
    (["--buffer", "floppy"], r"buffer"),
    (["--transport", "xx"], r"transport"),
    (["--seed", "-1"], r"--seed must be 0 or more"),
    (["--port", "0"], r"--port must be positive"),
    (["--gid-index", "-1"], r"--gid-index must be 0 or more"),
    (["--num-blks", "100000", "--num-cmsgs", "100000"], r"slots exceeds the limit"),
    (["--method", "rdma", "--nmsg", "99999999999"], r"exceeds .* \(32-bit immediate data\)"),
]
for argv, line in TXRX_BAD:
    cmd(f"txrx {' '.join(argv)}", ["txrx", *argv], 2, line)
cmd("txrx --help has examples and exit codes", ["txrx", "--help"], 0,
    r"(?i)exit (status|code)", stream="out", match="any",
    why="txrx --help has no examples and no exit codes")

# ---------------------------------------------------------------- fabric-sweep options (2)
SIM = ["fabric-sweep", "--launcher", "sim", "node[01-04]", "--sim-pair-seconds", "0", "-q"]
SWEEP_BAD = [
    (["--rounds", "0"], r"--rounds must be at least 1"),
    (["--rounds", "-1"], r"--rounds must be at least 1"),
    (["--rounds", "100000"], r"--rounds must be at most"),
    (["--max-rounds", "0"], r"--max-rounds must be at least 1"),
    (["--rounds", "4", "--max-rounds", "2"], r"--max-rounds 2 is smaller than --rounds 4"),
    (["--max-concurrent", "0"], r"--max-concurrent must be at least 1"),
    (["--pair-timeout", "0"], r"--pair-timeout must be a positive finite number"),
    (["--pair-timeout", "nan"], r"--pair-timeout must be a positive finite number"),
    (["--pair-timeout", "inf"], r"--pair-timeout must be a positive finite number"),
    (["--pair-timeout", "99999"], r"--pair-timeout must be at most 3600"),
    (["--expect", "0"], r"--expect must be a positive finite number"),
    (["--expect", "-5"], r"--expect must be a positive finite number"),
    (["--expect", "nan"], r"--expect must be a positive finite number"),
    (["--expect", "inf"], r"--expect must be a positive finite number"),
    (["--expect", "1e-300"], r"--expect 1e-300: 1e-300 is outside"),
    (["--expect", "5e-324"], r"--expect 4\.94066e-324: .* is outside"),
    (["--expect", "1e300"], r"--expect 1e\+300: 1e\+300 is outside"),
    (["--pair-seconds", "nan"], r"--pair-seconds must be a positive finite number"),
    (["--sim-pair-seconds", "-1"], r"--sim-pair-seconds must be between 0 and 60"),
    (["--sim-pair-seconds", "nan"], r"--sim-pair-seconds must be between 0 and 60"),
    (["--msg-size", "0"], r"--msg-size must be at least 1"),
    (["--nmsg", "0"], r"--nmsg must be at least 1"),
    (["--nmsg", "-5"], r"--nmsg must be at least 1"),
    (["--num-blks", "0"], r"--num-blks must be at least 1"),
    (["--num-cmsgs", "0"], r"--num-cmsgs must be at least 1"),
    (["--osu-size", "0"], r"--osu-size must be at least 1"),
    (["--osu-size", "4294967296"], r"--osu-size must be at most"),
    (["--seed", "-1"], r"--seed must be 0 or more"),
    (["--min-drop", "0"], r"--min-drop must be between 0 and 1"),
    (["--min-drop", "1"], r"--min-drop must be between 0 and 1"),
    (["--min-drop", "nan"], r"--min-drop must be between 0 and 1"),
    (["--fdr", "1.5"], r"--fdr must be between 0 and 1"),
    (["--sim-sigma", "-1"], r"--sim-sigma must be between 0 and 3"),
    (["--sim-sigma", "nan"], r"--sim-sigma must be between 0 and 3"),
    (["--rounds", "two"], r"invalid integer 'two'"),
    (["--json", "{d}"], r"--json .*: is a directory"),
    (["--json", "{d}/no/such/dir/x.json"], r"--json .*: directory .* does not exist"),
    (["--expect", "1.0", "--expect-from", "{d}/refs/good.yaml"],
     r"give --expect or --expect-from, not both"),
    (["--expect-system", "local"], r"--expect-system needs --expect-from"),
    (["--expect-from", "{d}/no-such.yaml"], r"--expect-from .*no-such\.yaml: no such file"),
    (["--sim-slow", "node03=abc"], r"node03=abc|abc"),
    (["--sim-slow", "@{d}/nodes-bad.txt"], r"abc"),
]
for argv, line in SWEEP_BAD:
    cmd(f"sweep {' '.join(argv)}", [*SIM, *argv], 2, rf"^fabric-sweep: error: .*{line}")
cmd("sweep --sim-slow without sim", ["fabric-sweep", "node[01-04]", "--sim-slow", "node03=0.5"],
    2, r"^fabric-sweep: error: --sim-slow and --sim-down need --launcher sim")
cmd("sweep --hostfile missing", ["fabric-sweep", "--launcher", "sim", "--hostfile",
                                 "{d}/no-hostfile"], 2, r"^fabric-sweep: error: --hostfile .*: no such file")
cmd("sweep --hostfile binary", ["fabric-sweep", "--launcher", "sim", "--hostfile",
                                "{d}/hostfile-binary"], 2, r"^fabric-sweep: error: ")
cmd("sweep --hostfile empty", ["fabric-sweep", "--launcher", "sim", "--hostfile",
                               "{d}/hostfile-empty"], 2, r"^fabric-sweep: error: ")
cmd("sweep one node", ["fabric-sweep", "--launcher", "sim", "node01"], 2,
    r"^fabric-sweep: error: .*2")
cmd("sweep bad hostlist", ["fabric-sweep", "--launcher", "sim", "node[01-"], 2,
    r"^fabric-sweep: error: ")
cmd("sweep --expect-from with osu_bw", [*SIM, "--test", "osu_bw", "--expect-from",
                                        "{d}/refs/good.yaml"], 2,
    r"^fabric-sweep: error: --expect-from holds tx/rx streams' references: it needs --test txrx")

# --expect-from reference files: the loader's rule, one line naming the file (exit 2)
EXPECT_FROM = [*SIM, "--expect-system", "local", "--expect-from"]
from inputs import REFERENCE_MUTATIONS  # noqa: E402

for name, (_entry, line) in REFERENCE_MUTATIONS.items():
    cmd(f"sweep --expect-from {name}", [*EXPECT_FROM, f"{{d}}/refs/{name}.yaml"], 2,
        rf"^fabric-sweep: error: .*{name}\.yaml.*{line}",
        why="references that can fail only in theory are accepted")
for name, line in (("binary", r"binary\.yaml: not a text file"),
                   ("nul", r"nul\.yaml: not YAML"),
                   ("empty", r"empty\.yaml: top level must be a mapping"),
                   ("list", r"list\.yaml: top level must be a mapping"),
                   ("not_yaml", r"not_yaml\.yaml: not YAML"),
                   ("a_directory", r"--expect-from .*a_directory\.yaml: no such file|"
                                   r"a_directory\.yaml: cannot read")):
    cmd(f"sweep --expect-from {name}", [*EXPECT_FROM, f"{{d}}/refs/{name}.yaml"], 2,
        rf"^fabric-sweep: error: .*{line}",
        why="--expect-from a binary file gives a UnicodeDecodeError")
# the good side of the rule: these load and the (healthy, simulated) sweep passes on them
for name in ("good", "loose_with_reason", "strict_band_edge", "time_upper"):
    cmd(f"sweep --expect-from {name} (accepted)", [*EXPECT_FROM, f"{{d}}/refs/{name}.yaml",
                                                   "--seed", "1"], 0,
        r"^suspects: none$", stream="out", match="any")

# the verdict of a whole cluster below its expected rate names the cluster (exit 1)
cmd("sweep every node below --expect", [*SIM[:3], "node[01-16]", *SIM[4:], "--expect", "1000",
                                        "--seed", "1"], 1,
    r"^below reference: cluster level .* below the expected 1000 Gbps", stream="out",
    match="any", why="when the whole cluster is below --expect, it says 'undecided' 16 times")
cmd("sweep every node below --expect-from", [*EXPECT_FROM, "{d}/refs/good.yaml", "--seed", "1",
                                             "--sim-slow", "@{d}/all-slow.txt"], 1,
    r"^below reference: cluster level", stream="out", match="any")
cmd("sweep healthy at --expect", [*SIM, "--expect", "1.0", "--seed", "1"], 0,
    r"^suspects: none$", stream="out", match="any")
cmd("sweep one slow node named", [*SIM, "--sim-slow", "node03=0.3", "--seed", "1"], 1,
    r"^suspect: node03", stream="out", match="any")

# ------------------------------------------- fabric-sweep reads each tool through its parser
OSU = "fabrictest.sweep.measure:OsuBw"
for name, line in (("cut_at_16k", r"osu_bw printed no row for 1048576 B \(last size 16384 B: cut short\?\)"),
                   ("cut_mid_row", r"output ends inside the 1048576 B row|no row for 1048576"),
                   ("latency", r"not osu_bw output: .*Latency.* in us"),
                   ("inf", r"a rate of inf MB/s is not a measurement"),
                   ("nan", r"a rate of nan MB/s is not a measurement|no row"),
                   ("zero", r"a rate of 0(\.0)? MB/s is not a measurement"),
                   ("negative", r"a rate of -12\.5 MB/s is not a measurement|no row"),
                   ("empty", r"."),
                   ("garbage", r"."),
                   ("other_size", r"osu_bw printed no row for 1048576 B \(last size 65536 B")):
    py(f"sweep osu_bw output {name}", f"{OSU}:osu_bw-{name}.txt", rf"^MeasurementError: {line}",
       why="fabric-sweep --test osu_bw takes the last row whatever its size or header")
py("sweep osu_bw output whole", f"{OSU}:osu_bw-whole.txt", r"^5781\.95$")
TX = "fabrictest.sweep.measure:Txrx"
for name, line in (("rate_inf", r".*data rate not a finite number|a rate of inf Gbps"),
                   ("rate_nan", r".*data rate not a finite number|a rate of nan Gbps"),
                   ("rate_zero", r"a rate of 0(\.0)? Gbps is not a measurement"),
                   ("no_total_line", r"no 'message total' line|message total"),
                   ("cut_after_rate", r".*no .*line"),
                   ("empty", r".")):
    py(f"sweep txrx output {name}", f"{TX}:txrx-{name}.txt", rf"^MeasurementError: {line}",
       why="an inf gives an OverflowError traceback")
py("sweep txrx output whole", f"{TX}:txrx-whole.txt", r"^97\.719")

# the parsers (the other half of issue 18): a site's own OSU build keeps its benchmark name, a
# non-finite figure makes an output incomplete
py("osu title with a version suffix", "osu-name:osu_latency-site-version.txt", r"^latency$",
   why="an OSU title with a version suffix loses its version")
py("osu_bw output with inf at 4 KiB is not whole", "osu-missing:osu_bw-inf-at-4k.txt",
   r"(?i)inf|finite|not a number",
   why="a benchmark that prints inf, nan, a negative or zero bandwidth passes OsuPt2PtTest")

# ---------------------------------------------------------------- fabric-report (exit 2)
P = "{d}/perflogs"
REPORT_BAD = [
    (["compare"], r"compare needs two sources"),
    (["compare", "--perflog", f"{P}/base"], r"compare needs two sources"),
    (["compare", "--perflog", f"{P}/base", "--perflog", "{d}/none"], r"none"),
    (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/empty"], r"empty|no "),
    (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/binary"], r"."),
    (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/target", "--tolerance", "-1"],
     r"tolerance"),
    (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/target", "--tolerance", "nan"],
     r"tolerance"),
    (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/target", "--tolerance", "1.5"],
     r"tolerance"),
    (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/target", "--noise-factor", "-1"],
     r"noise-factor|positive"),
    (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/target", "--noise-factor", "nan"],
     r"noise-factor|positive|finite"),
    (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/target", "--json", "{d}"],
     r"--json"),
    (["compare", "--against-references", "--perflog", f"{P}/base", "--perflog", f"{P}/target"],
     r"--against-references takes exactly one source"),
    (["compare", "--report", "{d}/report-not-json.json", "--report", "{d}/report-list.json"],
     r"report-not-json\.json"),
    (["compare", "--report", "{d}/report-binary.json", "--perflog", f"{P}/base"],
     r"report-binary\.json"),
    (["compare", "--report", "{d}/report-not-a-report.json", "--perflog", f"{P}/base"],
     r"report-not-a-report\.json"),
    (["compare", "--report", "{d}/no-such-*.json", "--perflog", f"{P}/base"], r"no-such"),
    (["compare", "--tag", "novalue", "--perflog", f"{P}/base"], r"KEY=VALUE|novalue"),
    (["calibrate"], r"calibrate needs stored sessions"),
    (["calibrate", "--perflog", f"{P}/base"], r"perflogs do not record sessions"),
    (["calibrate", "--report", "{d}/report-list.json", "--factor", "nan"], r"factor|finite"),
    (["calibrate", "--report", "{d}/report-list.json", "--factor", "0"], r"factor|positive"),
    (["calibrate", "--report", "{d}/report-list.json", "--floor", "-0.1"], r"floor"),
    (["calibrate", "--report", "{d}/report-list.json", "--floor", "nan"], r"floor"),
    (["calibrate", "--report", "{d}/report-list.json", "--max-bound", "0"], r"max-bound"),
    (["calibrate", "--report", "{d}/report-list.json", "--floor", "0.3", "--max-bound", "0.2"],
     r"--max-bound|--floor"),
    (["calibrate", "--report", "{d}/report-list.json", "--only", "("], r"--only"),
    (["html"], r"."),
    (["html", "--perflog", f"{P}/base", "-o", "/proc/no/such"], r"-o|/proc"),
    (["html", "--perflog", f"{P}/base", "--sweep", "{d}/sweep-binary.json", "-o", "{d}/h1"],
     r"sweep-binary\.json"),
    (["html", "--perflog", f"{P}/base", "--sweep", "{d}/sweep-not-json.json", "-o", "{d}/h2"],
     r"sweep-not-json\.json"),
    (["html", "--perflog", f"{P}/base", "--tolerance", "nan", "-o", "{d}/h3"], r"tolerance"),
    (["history", "--perflog", f"{P}/base", "--tolerance", "nan"], r"tolerance"),
    (["history", "--perflog", f"{P}/base", "--tolerance", "-1"], r"tolerance"),
    (["history", "--perflog", "{d}/none"], r"none"),
    (["history", "--perflog", f"{P}/binary"], r"."),
    (["history", "--report", "{d}/report-not-json.json"], r"report-not-json\.json"),
    (["history", "--since", "yesterday-ish", "--perflog", f"{P}/base"], r"since|yesterday"),
    (["--bogus"], r"."),
]
for argv, line in REPORT_BAD:
    cmd(f"report {' '.join(argv)}", ["fabric-report", *argv], 2,
        rf"^fabric-report[ a-z]*: .*{line}")
cmd("report history of 3 sessions", ["fabric-report", "history", "--perflog", f"{P}/base"], 2,
    r"^(fabric-report[ a-z]*: )?too few runs to judge \(3 of 10\)")
cmd("report history (inf figure)", ["fabric-report", "history", "--perflog", f"{P}/inf"], 2,
    r"^fabric-report[ a-z]*: .*(value inf .* is not a finite number|= inf .* is not a finite "
    r"positive rate: refused)")
cmd("report compare healthy perflogs", ["fabric-report", "compare", "--perflog", f"{P}/base",
                                        "--perflog", f"{P}/target"], 0, r".", stream="out")
# sessions of several checkouts (a site's shared results database): said, or refused
cmd("report compare a side of two checkouts", ["fabric-report", "compare", "--report",
                                               "{d}/mixed-*.json", "--report",
                                               "{d}/one-checkout.json"], 0,
    r"^fabric-report: note: .*the sessions come from 2 checkouts: vm:/clone/a \(2 sessions\); "
    r"vm:/clone/b \(1 session\)", why="every clone of the suite shares one results database")
cmd("report calibrate sessions of two checkouts", ["fabric-report", "calibrate", "--report",
                                                   "{d}/mixed-*.json", "--dry-run"], 2,
    r"^fabric-report: .*the sessions come from 2 checkouts: .*calibrate from the sessions of "
    r"one checkout")

# non-finite and impossible figures in the records (the other half of issue 18: refused in one
# line, exit 2, never a traceback)
for name in ("inf", "nan", "negative", "zero"):
    for sub in (["compare", "--perflog", f"{P}/base", "--perflog", f"{P}/{name}"],
                ["compare", "--perflog", f"{P}/{name}", "--perflog", f"{P}/base"],
                ["html", "--perflog", f"{P}/{name}", "-o", f"{{d}}/html-{name}"]):
        cmd(f"report {sub[0]} {' '.join(sub[1:])} ({name} figure)", ["fabric-report", *sub], 2,
            rf"^fabric-report: .*({name}|finite|positive|impossible)",
            why="peak_bw=inf lands in the perflog; compare, calibrate, html crash on it")

# ---------------------------------------------------------------- vcluster usage (exit 2)
VC = ["vcluster", "--state-dir", "{d}/vcluster-state"]
VCLUSTER_BAD = [
    ([], r"the following arguments are required: COMMAND"),
    (["up", "--nodes", "0"], r"--nodes must be between 1 and 64, not 0"),
    (["up", "--nodes", "-3"], r"--nodes must be between 1 and 64"),
    (["up", "--nodes", "1000"], r"--nodes must be between 1 and 64"),
    (["up", "--nodes", "four"], r"invalid int value"),
    (["up", "--rate", "fast"], r"bad rate 'fast'"),
    (["up", "--rate", "1kbit"], r"below 8kbit"),
    (["up", "--rate", "1e30gbit"], r"bad rate|above"),
    (["up", "--timeout", "nan"], r"--timeout must be a number of seconds"),
    (["up", "--timeout", "0"], r"--timeout must be a number of seconds"),
    (["up", "--timeout", "-1"], r"--timeout must be a number of seconds"),
    (["up", "--timeout", "inf"], r"--timeout must be a number of seconds"),
    (["degrade", "node03", "fast"], r"bad rate 'fast'"),
    (["degrade", "node03", "0"], r"bad rate|below 8kbit"),
    (["degrade", "nodeX", "50mbit"], r"'nodeX' is not a node name"),
    (["degrade", "node03", "50mbit", "--direction", "up"], r"invalid choice: 'up'"),
    (["degrade", "node03"], r"degrade needs a RATE, --loss P, or both"),
    (["degrade", "node03", "--loss", "150"], r"loss '150' must be above 0 and below 100"),
    (["flap", "node03", "--times", "0"], r"--times 0: flap at least once"),
    (["degrade-uplink", "sw9", "fast"], r"bad rate 'fast'"),
    (["link-down", "eth0"], r"'eth0' is not a node name"),
    (["restore", "node"], r"'node' is not a node name"),
    (["frobnicate"], r"invalid choice: 'frobnicate'"),
]
# `up` is given a state directory it cannot create (under /proc): were a bad value ever not
# refused, `up` would stop there, before any namespace, daemon or link is made
VC_UP = ["vcluster", "--state-dir", "/proc/fabrictest-hostile/state"]
for argv, line in VCLUSTER_BAD:
    base = VC_UP if argv[:1] == ["up"] else VC
    cmd(f"vcluster {' '.join(argv)}", [*base, *argv], 2, rf"^vcluster: error: .*{line}")
cmd("vcluster status with no cluster", [*VC, "status"], 1,
    r"^vcluster: error: no cluster in .*: run `vcluster up`")

# ---------------------------------------------------------------- reference files (the loader)
for sysname in ("local", "vcluster", "seren", "orfeo", "slingshot", "crusher", "cori"):
    py(f"reference/{sysname}.yaml loads", f"load:reference/{sysname}.yaml", r"^loaded$")
for name, (_entry, line) in REFERENCE_MUTATIONS.items():
    py(f"load refs/{name}.yaml", f"load:{{d}}/refs/{name}.yaml", rf"^ReferenceError: .*{line}")

# ---------------------------------------------------------------- family variables (-S)
# the rule table itself for every family's variables, including families that need hardware
# (perftest, GPU-aware, health) and cannot be listed on `local`
RULES = [
    ("nmsg", "0"), ("nmsg", "-5"), ("msg_size", "0"), ("num_blks", "0"), ("num_cmsgs", "-1"),
    ("num_reps", "0"), ("ppn", "0"), ("num_nodes", "0"), ("max_size", "0"),
    ("osu_iterations", "0"), ("mbw_nodes", "0"), ("max_repetitions", "0"),
    ("perftest_iters", "0"), ("msglog", "0"), ("msglog", "40"), ("unit_size", "0"),
    ("loss_tolerance", "nan"), ("loss_tolerance", "1.0"), ("loss_tolerance", "-0.1"),
    ("txrx_timeout", "inf"), ("txrx_timeout", "0"), ("max_growth", "inf"),
    ("max_growth", "0.5"), ("max_growth", "nan"), ("min_fraction", "0"),
    ("min_fraction", "nan"), ("min_fraction", "1.5"), ("repetitions", "2"),
    ("repetitions", "-1"), ("inject", "'17'"), ("inject", "'17:0'"), ("pair_timeout", "0"), ("rounds", "0"), ("seed", "-7"),
    ("launcher", "'mpirun'"),
]
for name, value in RULES:
    py(f"-S {name}={value} (rule)", f"rule:{name}={value}", rf"^-S {name}=.*: {name} must ")

# batched ReFrame runs on `local` (test_hostile.RFM_BATCHES): each class fails at setup with
# the line of its own bad value; nothing runs
RFM_S = {
    "TxRxTest": [("nmsg", "0"), ("loss_tolerance", "nan"), ("txrx_timeout", "inf"),
                 ("num_blks", "0"), ("msg_size", "-1")],
    "BisectionTest": [("num_reps", "0"), ("ppn", "-2")],
    "AllToManyTest": [("unit_size", "0"), ("ppn", "0")],
    "AllToManyScalingTest": [("max_growth", "inf"), ("repetitions", "2")],
    "OsuPt2PtTest": [("max_size", "0"), ("osu_iterations", "-5")],
    "OsuMbwMrTest": [("mbw_nodes", "0")],
    "ImbTest": [("msglog", "0"), ("max_repetitions", "0")],
    "SweepTest": [("rounds", "0"), ("pair_timeout", "0"), ("nmsg", "0")],
}
for test, pairs in RFM_S.items():
    for name, value in pairs:
        rfm(f"reframe -S {test}.{name}={value}", f"bad-S:{test}",
            rf"-S {name}={value}: {name} must ",
            why="reframe -S nmsg=0, num_reps=0, loss_tolerance=nan, max_growth=inf run and PASS")
RFM_REFS = {
    "TxRxTest": ("dup.yaml", r"key 'stream_gbps' is written twice"),
    "BisectionTest": ("tiny.yaml", r"reference 1e-300 is outside"),
    "AllToManyTest": ("upper.yaml", r"upper bound 1e\+308 catches only a rise"),
    "AllToManyScalingTest": ("time_from_below.yaml", r"end_to_end_growth in x .* needs an upper"),
    "OsuPt2PtTest": ("subnormal.yaml", r"reference 4\.94066e-324 is outside"),
    "ImbTest": ("binary.yaml", r"binary\.yaml: not a text file"),
    "OsuMbwMrTest": ("lower.yaml", r"lower bound -0\.99999 catches only a drop over 99\.999 %"),
}
for test, (fname, line) in RFM_REFS.items():
    rfm(f"reframe {test} with {fname}", f"bad-ref:{test}", line,
        why="a lower bound of -0.99999, a reference of 1e-300, an upper bound of 1e+308, a key "
            "written twice, a time bounded only from below; a binary file: a codec traceback")
rfm("reframe --dry-run with good values passes", "good:TxRxTest", r"^pass$")
rfm("reframe a loose bound says what it catches", "good:loose",
    r"^BisectionTest on local: node_bw, aggregate_bw informational here, not judged \(",
    why="a reference that fails only in theory passes without a word (on local, issue 30: "
        "bisection is informational, said once)")
rfm("reframe --dry-run writes no perflog", "good:perflogs", r"^no perflog$",
    why="reframe --dry-run appends empty pass rows to the perflogs and rotates the history")
rfm("reframe a second run on one stage directory", "locked:", r"another ReFrame run .* is using "
    r"the stage directory",
    why="two reframe -r in one directory: the second dies with 'No such file ... rfm_build.sh'")

# ---------------------------------------------------------------- each area's own cases
# cases_<area>.py beside this file add their cases with cmd/py/rfm above (one file per area,
# so that work on several areas at once merges without touching this table)
for _area in sorted(Path(__file__).resolve().parent.glob("cases_*.py")):
    importlib.import_module(_area.stem)

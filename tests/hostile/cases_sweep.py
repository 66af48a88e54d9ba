"""fabric-sweep's hostile cases of issue 27: verdicts that could not fail.

Two nodes (one pair: never one node, never healthy without a reference), half the cluster
slow (the median is the slow nodes' figure), `--min-drop` and `--expect` that let anything
pass, a reference file with an impossible rate, and `--json` onto what must not be replaced.
The simulated launcher throughout (seeds chosen as described at each case); the cases that
need files of their own make them in the inputs' directory (``fn:cases_sweep:FUNC:ARG``).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from table import SIM, cmd, py

WHY_UNDECIDABLE = "Sweep verdicts that cannot fail (issue 27)"
SIM2 = [*SIM[:3], "node[01-02]", *SIM[4:], "--seed", "1"]
SIM16 = [*SIM[:3], "node[01-16]", *SIM[4:]]
HALF = ["--sim-slow", "node[01-08]=0.3"]

# ------------------------------------------------------------------------- two nodes: one pair
cmd("sweep 2 nodes, one at 0.3x, no reference", [*SIM2, "--sim-slow", "node01=0.3"], 3,
    r"^undecidable: node01–node02 \(node01->node02 0\.3.*no reference to hold them against",
    stream="out", match="any", why=WHY_UNDECIDABLE)
cmd("sweep 2 nodes, one at 0.3x, --expect", [*SIM2, "--sim-slow", "node01=0.3", "--expect", "1"],
    1, r"^slow pair: node01–node02 .*cannot tell which with 2 nodes$", stream="out",
    match="any", why=WHY_UNDECIDABLE)
cmd("sweep 2 nodes, one sending at 0.3x", [*SIM2, "--sim-slow", "node01=0.3:tx"], 1,
    r"^slow pair: node01->node02 .*node01 sending or node02 receiving is slow, cannot tell "
    r"which", stream="out", match="any", why=WHY_UNDECIDABLE)
cmd("sweep 2 nodes, one receiving at 0.3x", [*SIM2, "--sim-slow", "node02=0.3:rx"], 1,
    r"^slow pair: node01->node02 .*node01 sending or node02 receiving", stream="out",
    match="any", why=WHY_UNDECIDABLE)
cmd("sweep 2 healthy nodes, no reference", SIM2, 3, r"^undecidable: node01–node02 \(",
    stream="out", match="any", why=WHY_UNDECIDABLE)
cmd("sweep 2 healthy nodes at --expect (accepted)", [*SIM2, "--expect", "1"], 0,
    r"^suspects: none$", stream="out", match="any")
cmd("sweep 2 nodes, both at 0.3x, --expect", [*SIM2, "--sim-slow", "node[01-02]=0.3",
                                              "--expect", "1"], 1,
    r"^slow pair: node01–node02 .*below the expected 1 Gbps", stream="out", match="any")

# ---------------------------------------------------------------------- half the cluster slow
for seed in ("1", "2", "3"):
    cmd(f"sweep 8 of 16 at 0.3x (seed {seed})", [*SIM16, *HALF, "--seed", seed], 1,
        r"^cluster-wide: most runs are at about 0\.3\dx of the level (0\.9|1\.)\d* Gbps", stream="out",
        match="any", why=WHY_UNDECIDABLE)
cmd("sweep 8 of 16 at 0.3x: the slow half named", [*SIM16, *HALF, "--seed", "2"], 1,
    r"^suspect: node0[1-8] send 0\.\d+ Gbps, receive", stream="out", match="any")
cmd("sweep 8 of 16 sending at 0.3x", [*SIM16, "--sim-slow", "node[01-08]=0.3:tx", "--seed", "1"],
    1, r"^suspect: node01 send 0\.\d+ Gbps vs cluster", stream="out", match="any",
    why=WHY_UNDECIDABLE)
cmd("sweep 12 of 16 at 0.3x", [*SIM16, "--sim-slow", "node[01-12]=0.3", "--seed", "4"], 1,
    r"^(cluster-wide|undecidable): ", stream="out", match="any")
# 4 nodes, node01-02 slow: node03 with node04 is the one fast pair, and the faster level is
# the healthy one (issue 41): named cluster-wide
cmd("sweep 2 of 4 at 0.3x: one fast pair", [*SIM, "--sim-slow", "node[01-02]=0.3", "--seed", "5"],
    1, r"^cluster-wide: most runs are at about 0\.3\dx of the level .* \(1 pairs, 2 runs\)",
    stream="out", match="any")
cmd("sweep healthy 16 nodes: the level said unjudged", [*SIM16, "--seed", "1"], 0,
    r"^the cluster level is unjudged \(a simulation has no system reference\)", stream="out",
    match="any")

# ------------------------------------------------------------------------------- --min-drop
for drop in ("0.999", "0.51", "0.01"):
    cmd(f"sweep --min-drop {drop}", [*SIM, "--min-drop", drop], 2,
        rf"^fabric-sweep: error: --min-drop {drop}: must be between 0\.05 and 0\.5",
        why="--min-drop 0.999 with a node at 1 % -> ok")
cmd("sweep --min-drop 0.5, a node at 1%", [*SIM, "--min-drop", "0.5", "--sim-slow", "node03=0.01",
                                          "--seed", "1"], 1,
    r"^suspect: node03 send 0\.0(099|100)", stream="out", match="any")

# ------------------------------------------------------------------------ --expect and its unit
EXPECT_BAD = [
    ("1e-9", r"--expect 1e-9: 1e-09 Gbps is 1 bit/s: a healthy pair runs at 0\.001 to 10000 Gbps"),
    ("1e-9Gbps", r"--expect 1e-9Gbps: 1e-09 Gbps is 1 bit/s"),
    ("20000", r"--expect 20000: 20000 Gbps is 20 Tbit/s"),
    ("500bps", r"--expect 500bps: 500 bps is 500 bit/s"),
    ("12furlongs", r"argument --expect: unknown unit 'furlongs'"),
    ("fast", r"argument --expect: invalid rate 'fast'"),
]
for value, line in EXPECT_BAD:
    cmd(f"sweep --expect {value}", [*SIM, "--expect", value], 2, rf"^fabric-sweep: error: {line}",
        why="--expect 1e-9 accepted, every node at 0.3x exits 0")
cmd("sweep --test osu_bw --expect 1e-9", [*SIM, "--test", "osu_bw", "--expect", "1e-9"], 2,
    r"^fabric-sweep: error: --expect 1e-9: 1e-09 MB/s is .*a healthy pair runs at 0\.125 to",
    why="--expect 1e-9 accepted, every node at 0.3x exits 0")
cmd("sweep --expect 125MB/s, every node at 0.3x", [*SIM, "--sim-slow", "node[01-04]=0.3",
                                                  "--expect", "125MB/s", "--seed", "1"], 1,
    r"^below reference: cluster level 0\.3\d* Gbps is [67]\d% below the expected 1 Gbps "
    r"\(--expect 125MB/s", stream="out", match="any")
cmd("sweep --expect far below the level", [*SIM, "--sim-slow", "node[01-04]=0.3", "--expect",
                                           "0.001", "--seed", "1"], 1,
    r"^expectation off: cluster level 0\.3\d* Gbps is 3\d\dx the expected 0\.001 Gbps",
    stream="out", match="any", why="--expect 1e-9 accepted, every node at 0.3x exits 0")
cmd("sweep --expect 1000Mbps (accepted)", [*SIM, "--expect", "1000Mbps", "--seed", "1"], 0,
    r"^suspects: none$", stream="out", match="any")
cmd("sweep --no-reference with --expect", [*SIM, "--no-reference", "--expect", "1"], 2,
    r"^fabric-sweep: error: --no-reference with --expect or --expect-from: give one")
cmd("sweep --no-topology with --topology", [*SIM, "--no-topology", "--topology", "{d}/t.txt"], 2,
    r"^fabric-sweep: error: --no-topology with --topology: give one")


def _sweep(argv: list[str]) -> str:
    """`exit N: first line of stderr (or stdout)` of a fabric-sweep with `argv`."""
    exe = Path(sys.executable).parent / "fabric-sweep"
    proc = subprocess.run([str(exe) if exe.exists() else "fabric-sweep", *argv],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    text = proc.stderr.strip() or proc.stdout.strip()
    return f"exit {proc.returncode}: {text.splitlines()[0] if text else ''}"


def expect_from_value(d: Path, value: str) -> str:
    """--expect-from a reference file whose paired rate is `value` Gbps."""
    from inputs import ENTRY, SWEEP_REF

    path = d / "sweep-issue27" / f"rate-{value}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(SWEEP_REF.replace(ENTRY, f"          stream_gbps: [{value}, -0.3, null, "
                                             "Gbps]\n"))
    return _sweep([*SIM[1:], "--expect-system", "local", "--expect-from", str(path)])


py("sweep --expect-from a rate of 1e-9 Gbps", "fn:cases_sweep:expect_from_value:1.0e-09",
   r"^exit 2: fabric-sweep: error: .*rate-1\.0e-09\.yaml:TxRxTest:local\.paired\.mpi\.host\."
   r"stream_gbps: reference 1e-09 Gbps is below what a data rate of a fabric can be",
   why="--expect 1e-9 (or a reference file "
   "with it) accepted, every node at 0.3x exits 0")
py("sweep --expect-from a rate of 1e5 Gbps", "fn:cases_sweep:expect_from_value:1.0e+05",
   r"^exit 2: fabric-sweep: error: .*100000 Gbps is 100 Tbit/s")


def json_onto(d: Path, kind: str) -> str:
    """--json onto a symbolic link, a named pipe or a character device (made here, never a
    device of the system: the code before replaced it with a file, as root)."""
    where = d / "sweep-issue27"
    where.mkdir(exist_ok=True)
    path = where / f"json-{kind}"
    if not os.path.lexists(path):
        if kind == "link":
            (where / "precious").write_text("keep me\n")
            path.symlink_to(where / "precious")
        elif kind == "fifo":
            os.mkfifo(path)
        elif os.geteuid() == 0:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
        else:
            return "exit 2: (not root: no device node to try) is a character device"
    before = os.lstat(path)
    line = _sweep([*SIM[1:], "--seed", "1", "--json", str(path)])
    after = os.lstat(path)
    if (before.st_mode, before.st_ino) != (after.st_mode, after.st_ino):
        return f"{path.name} was replaced: {line}"
    return line


for kind, why in (("link", "is a symbolic link"), ("fifo", "is a named pipe"),
                  ("device", "is a character device")):
    py(f"sweep --json onto a {kind}", f"fn:cases_sweep:json_onto:{kind}",
       rf"^exit 2: fabric-sweep: error: --json .*json-{kind}: {why}",
       why="--json onto a symlink or a device node replaces it (as root, /dev/full)")

"""alltomany (src/c/alltomany.c) run for real with 1-4 MPI ranks: the all-to-many (Cori) notes'
block, payloads checked, bad input refused with one line and a non-zero exit."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.mpi

DASHES = "-" * 59
# The all-to-many (Cori) notes' block, label by label, in order; ours adds lines after
# "(Max means ...)".
SEED_LABELS = [
    "Total number of MPI processes",
    "Total number of sender   processes",
    "Total number of receiver processes",
    "Total number of iterations",
    "Message block unit size",
    "Max message size",
    "Min message size",
    "Max time of posting irecv",
    "Max time of posting isend",
    "Max time of MPI_Waitall()",
    "Max end-to-end time",
]
LINE = re.compile(r"^(?P<label>\S.*?)\s+= (?P<value>.+)$")


def parse_block(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, value) pairs and all lines of the block between the two dash lines."""
    lines = text.splitlines()
    assert lines.count(DASHES) == 2, text
    first = lines.index(DASHES)
    last = lines.index(DASHES, first + 1)
    body = lines[first + 1 : last]
    pairs = []
    for line in body:
        m = LINE.match(line)
        if m:
            # label padded to 37 columns then "= ", as in the notes
            assert line.index("= ") == 37, line
            pairs.append((m["label"], m["value"]))
    return pairs, body


def check_block(text: str, nprocs: int, receivers: int, iters: int, unit: int) -> dict[str, str]:
    pairs, body = parse_block(text)
    labels = [label for label, _ in pairs]
    assert labels[: len(SEED_LABELS)] == SEED_LABELS
    values = dict(pairs)
    assert values["Total number of MPI processes"] == str(nprocs)
    assert values["Total number of sender   processes"] == str(nprocs)
    assert values["Total number of receiver processes"] == str(receivers)
    assert values["Total number of iterations"] == str(iters)
    assert values["Message block unit size"] == f"{unit} bytes"
    # documented rule: unit * ((sender + receiver) % receivers + 1)
    assert values["Max message size"] == f"{unit * receivers} bytes"
    assert values["Min message size"] == f"{unit} bytes"
    for label in SEED_LABELS[7:]:
        assert re.fullmatch(r"\d+\.\d{4} sec", values[label]), (label, values[label])
    assert body[len(SEED_LABELS)] == f"(Max means the maximum among all {nprocs} processes)"
    assert values["Payload check"] == f"passed ({nprocs * receivers * iters} messages)"
    return values


def test_seed_block_matches_seed_text(shared_dir):
    """The labels we check are the notes' own (guards against typos in SEED_LABELS)."""
    seed = next((shared_dir / "seeds").glob("004_*.txt")).read_text()
    block = seed.split("-p 64 -b 32 -n 2\n", 1)[1]
    labels = [m["label"] for m in map(LINE.match, (x.strip() for x in block.splitlines())) if m]
    assert labels[: len(SEED_LABELS)] == SEED_LABELS
    for line in block.splitlines()[1:13]:
        stripped = line.strip()
        if LINE.match(stripped):
            assert stripped.index("= ") == 37


@pytest.mark.parametrize(
    ("np", "ppn", "receivers"),
    [(4, 2, 2), (4, 1, 4), (3, 3, 1), (2, 1, 2)],
)
def test_block_and_payload(mpirun, c_build, np, ppn, receivers):
    proc = mpirun(
        np, [c_build / "alltomany", "-p", ppn, "-b", 32, "-n", 20], timeout=120, check=True
    )
    check_block(proc.stdout, np, receivers, 20, 32)


def test_seed_command_line_shape(mpirun, c_build):
    """The all-to-many (Cori) notes' option set (-p -b -n) with values that fit 4 ranks; 1k
    suffix of ours."""
    proc = mpirun(4, [c_build / "alltomany", "-p", "4", "-b", "1k", "-n", "3"], check=True)
    check_block(proc.stdout, 4, 1, 3, 1024)


def test_default_ppn_is_ranks_on_the_node(mpirun, c_build):
    """Without -p, one node (this machine) holds all ranks: one receiver; defaults -b 10 -n 100."""
    proc = mpirun(2, [c_build / "alltomany"], check=True)
    check_block(proc.stdout, 2, 1, 100, 10)


def test_help(mpirun, c_build):
    proc = mpirun(1, [c_build / "alltomany", "-h"], check=True)
    assert proc.stdout.startswith("Usage: alltomany [OPTION]...")
    for opt in ("[-h]", "[-p]", "[-b]", "[-n]", "[-d]"):
        assert opt in proc.stdout


@pytest.mark.parametrize(
    ("np", "argv", "message"),
    [
        (3, ["-p", "2"], "-p 2 does not divide the number of MPI processes (3)"),
        (2, ["-b", "0"], "-b expects a unit message size >= 1 byte, not '0'"),
        (2, ["-n", "0"], "-n expects a number of iterations >= 1"),
        (2, ["-n", "x"], "-n expects a number of iterations >= 1, not 'x'"),
        (2, ["-p", "-3"], "-p expects a number of processes per node >= 1"),
        (2, ["-p"], "option -p needs a value"),
        (2, ["-z"], "unknown option -z"),
        (2, ["extra"], "unexpected argument 'extra'"),
        (2, ["-d", "gpu"], "-d expects host or device"),
    ],
)
def test_bad_input_refused(mpirun, c_build, np, argv, message):
    proc = mpirun(np, [c_build / "alltomany", *argv], timeout=60)
    assert proc.returncode != 0
    ours = [line for line in proc.stderr.splitlines() if line.startswith("alltomany: error:")]
    assert len(ours) == 1, proc.stderr
    assert message in ours[0]
    assert DASHES not in proc.stdout


def test_device_buffers_refused_by_host_build(mpirun, c_build):
    proc = mpirun(2, [c_build / "alltomany", "-d", "device"], timeout=60)
    assert proc.returncode != 0
    ours = [line for line in proc.stderr.splitlines() if line.startswith("alltomany: error:")]
    assert len(ours) == 1 and "no GPU support" in ours[0]


def test_corrupted_payload_detected(mpirun, c_build):
    proc = mpirun(3, [c_build / "alltomany", "-p", "1", "-n", "4", "-x"], timeout=60)
    assert proc.returncode != 0
    pairs, _ = parse_block(proc.stdout)
    assert dict(pairs)["Payload check"].startswith("FAILED (0 wrong sizes, 1 wrong contents")
    assert "alltomany: error: payload check failed" in proc.stderr
    assert "message from rank 0 differs at byte 0" in proc.stderr


def test_an_injection_below_the_clock_tick_is_refused(mpirun, c_build):
    """1e-300 us (or 1e-6 us) is no delay the MPI clock can time: refused, not run as a
    fault that injects nothing; one tick (Open MPI's: 1 ns) is a delay, and runs."""
    for bad in ("3:1e-300", "17:0.000001"):
        proc = mpirun(2, [c_build / "alltomany", "-n", 2, "-i", bad], timeout=60)
        assert proc.returncode == 2, (bad, proc.stdout, proc.stderr)
        [line] = [x for x in proc.stderr.splitlines() if x.startswith("alltomany: error:")]
        assert "microseconds is below the MPI clock's tick (MPI_Wtick() = " in line, line
        assert line.endswith("the run cannot show it, nothing would be injected"), line
    proc = mpirun(2, [c_build / "alltomany", "-n", 4, "-i", "3:0.001"], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "0.001 us more posting irecv from iteration 3 on" in proc.stdout, proc.stdout

"""``fabric-sweep`` on its simulator (``--launcher sim``): 8 nodes, node03 faulty."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from recordings import read

from fabrictest.sweep.cli import main
from fabrictest.sweep.measure import MeasurementError, Txrx

from .cell import Cell, failed, na, passed
from .inproc import call

NODES = "node[01-08]"
FAULTY = "node03"
SIM = ["--launcher", "sim", NODES, "--sim-pair-seconds", "0", "--seed", "1", "-q"]


def _verdict(*extra: str) -> tuple[int, str]:
    rc, out, err = call(main, *SIM, *extra)
    lines = out.splitlines()
    if "verdict:" in lines:
        return rc, " ".join(lines[lines.index("verdict:") + 1:]).strip()
    return rc, (err or out).strip()


def _cell(rc: int, said: str) -> Cell:
    if rc == 0:
        return passed(said)
    return failed(said, FAULTY)


NA = {
    "flap": "the sweep measures pair rates, not counters: a link that flaps during a pair "
            "shows as a failed or slow run (the link-down and 0.5x cells); its counters are "
            "the counters verdict's",
    "error_burst": "the sweep reads no error counter (the counters verdict's row)",
    "saturated": "the sweep reads no counter (the counters verdict's row)",
    "stale_foreign": "the sweep judges the runs it starts itself in this invocation; "
                     "its JSON feeding another run is the acceptance page's cell",
}


def cells() -> dict[str, Cell]:
    out = {f: na(why) for f, why in NA.items()}
    out["healthy"] = _cell(*_verdict())
    out["link_down"] = _cell(*_verdict("--sim-down", FAULTY))
    out["bw_0_5"] = _cell(*_verdict("--sim-slow", f"{FAULTY}=0.5"))
    rc, said = _verdict("--sim-slow", f"{FAULTY}=0.85")
    if rc == 0:
        rc2, said2 = _verdict("--sim-slow", f"{FAULTY}=0.85", "--min-drop", "0.1")
        out["bw_0_85"] = na(f"the sweep names a direction below 0.75x of the cluster level by "
                            f"default (--min-drop 0.25), a band wider than 15 % (a finding): "
                            f"0.85x reads '{said}'; with --min-drop 0.1: '{said2}'")
    else:
        out["bw_0_85"] = _cell(rc, said)
    out["empty_selection"] = _empty()
    out.update(_pair_outputs())
    return out


def _pair_outputs() -> dict[str, Cell]:
    """A pair's tx/rx output as the sweep reads it (``measure.Txrx.parse``): a run without a
    figure is a failed run of the pair."""
    whole = read("seed000-txrx-1pair.txt")
    rate = "data rate is 97.71920957824764 Gbps"
    texts = {"healthy": whole, "truncated": whole[: whole.index(rate) + 10],
             "doubled": whole + whole, "other_benchmark": read("osu_bw-7.4-ompi4.1-local.txt")}
    out = {}
    for fault, text in texts.items():
        out[fault if fault != "healthy" else "healthy_pair"] = _measured(text)
    bad = [_measured(whole.replace(rate, f"data rate is {v} Gbps")) for v in
           ("nan", "inf", "-97.7")]
    passing = [c for c in bad if c.outcome != "FAIL"]
    out["nonfinite"] = passing[0] if passing else failed("; ".join(c.text for c in bad))
    del out["healthy_pair"]
    return out


def _measured(text: str) -> Cell:
    try:
        value = Txrx().parse(text)
    except MeasurementError as err:
        return failed(f"no figure, a failed run: {err}")
    return passed(f"a run of {value:g} Gbps")


def _empty() -> Cell:
    with tempfile.TemporaryDirectory(prefix="fault-matrix-") as tmp:
        hostfile = Path(tmp) / "hostfile"
        hostfile.write_text("")
        rc, _, err = call(main, "--launcher", "sim", "--hostfile", hostfile, "-q")
    line = re.sub(r"\s+", " ", err.strip().splitlines()[0] if err.strip() else "")
    return passed(line) if rc == 0 else failed(f"exit {rc}: {line}")

"""The congestion program's parser on our own recordings (real runs on the vcluster,
tests/data/real-outputs-local/SOURCES.md): figures, impact factors in GPCNeT's sense, and what
keeps an output from being whole (every cut, a missing phase, aggressors that sent nothing)."""

from __future__ import annotations

import math

import pytest
from recordings import read, recordings

from fabrictest.parsers import ParseError
from fabrictest.parsers.congestion import missing, parse_congestion

FILES = recordings("congestion-*.txt")
INCAST = "congestion-incast-vcluster.txt"
ALL_TO_ALL = "congestion-all-to-all-vcluster.txt"


def test_recordings_are_there():
    assert {p.name for p in FILES} >= {INCAST, ALL_TO_ALL}


def test_incast_recording():
    res = parse_congestion(read(INCAST))
    assert (res.nodes, res.ranks, res.mode, res.aggressor_ranks) == (4, 8, "incast", 4)
    assert res.victim == ("node01", "node02") and not res.one_host
    iso, load = res.phases["isolated"], res.phases["loaded"]
    assert 0.17 < iso.bw_gbps < 0.2  # the shaped 200 Mbit/s link
    assert res.impact("bw_gbps") == pytest.approx(iso.bw_gbps / load.bw_gbps)
    assert res.impact("lat_avg_us") == pytest.approx(load.lat_avg_us / iso.lat_avg_us)
    assert res.impact("bw_gbps") >= 2  # sharing the victim's receiving link
    assert res.aggressors.bytes > 0 and res.done
    assert missing(res, mode="incast", nodes=4, ranks=8, one_host=False) == []


def test_all_to_all_recording():
    res = parse_congestion(read(ALL_TO_ALL))
    assert res.mode == "all-to-all" and res.aggressor_ranks == 4
    assert res.impact("bw_gbps") <= 1.2  # none of the victim's links
    assert missing(res, mode="all-to-all", nodes=4, ranks=8, one_host=False) == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_cut_is_incomplete(path):
    text = path.read_text()
    assert missing(parse_congestion(text)) == []
    for end in range(len(text) - 1, 0, -1):
        cut = text[:end]
        try:
            problems = missing(parse_congestion(cut))
        except ParseError:
            continue
        assert problems, f"cut at {end} of {len(text)} passes:\n{cut}"


def _edit(old: str, new: str, name: str = INCAST) -> list[str]:
    text = read(name)
    assert old in text
    return missing(parse_congestion(text.replace(old, new, 1)))


def test_faults_are_named():
    text = read(INCAST)
    res = parse_congestion(text)
    assert "aggressors incast, expected all-to-all" in " ".join(missing(res, mode="all-to-all"))
    assert "expected separate nodes" in " ".join(
        missing(parse_congestion(text.replace("node02\n", "node02, one host\n", 1)),
                one_host=False))
    assert "3 nodes, expected 4" not in " ".join(missing(res, nodes=4))
    assert "4 nodes, expected 3" in " ".join(missing(res, nodes=3))
    assert "8 ranks, expected 6" in " ".join(missing(res, ranks=6))
    # a phase gone, a figure not a number or zero, aggressors that sent nothing, no closing line
    loaded = next(ln for ln in text.splitlines() if ln.startswith("phase loaded"))
    assert "no 'phase loaded' line" in " ".join(_edit(loaded + "\n", ""))
    assert "not a positive number" in " ".join(_edit(loaded, loaded.replace(
        loaded.split()[-1], "nan")))
    assert "not a positive number" in " ".join(_edit(loaded, loaded.replace(
        loaded.split()[-1], "0.0000")))
    agg = next(ln for ln in text.splitlines() if ln.startswith("aggressors:"))
    sent = agg.split()[3]
    assert "did not load the network" in " ".join(_edit(f" {sent} bytes", " 0 bytes"))
    assert "no closing" in " ".join(_edit("congestion: done\n", ""))


def test_not_congestion_output():
    for text in ("", "hello\n", read("osu_bw-7.4-ompi4.1-local.txt")):
        with pytest.raises(ParseError):
            parse_congestion(text)
    with pytest.raises(ParseError, match="not a number"):  # a mangled figure
        parse_congestion(read(INCAST).replace("bw_gbps ", "bw_gbps x", 1))


def test_zero_loaded_bandwidth_is_infinite_impact():
    text = read(INCAST)
    loaded = next(ln for ln in text.splitlines() if ln.startswith("phase loaded"))
    res = parse_congestion(text.replace(loaded, loaded.rsplit(" ", 1)[0] + " 0.0000"))
    assert math.isinf(res.impact("bw_gbps"))

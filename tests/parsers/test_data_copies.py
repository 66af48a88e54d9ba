"""The copies under tests/data/real-outputs are the shared recordings, byte for byte, and every
recording is read by some parser test (its name starts with a tool the tests glob for)."""

from __future__ import annotations

from pathlib import Path

import pytest

REAL = Path(__file__).resolve().parents[1] / "data" / "real-outputs"
SEEDS = Path(__file__).resolve().parents[1] / "data" / "seeds"
PREFIXES = ("ibv_devinfo", "rdma-link", "ib_", "osu_", "imb-", "sinfo-", "perfquery-",
            "ethtool-S-", "cxi_stat-", "gpcnet-", "nccl-", "rccl-", "lldptool-", "lldpctl-",
            "ip-a")


def test_every_recording_is_covered_by_a_parser_glob():
    names = [p.name for p in REAL.glob("*.txt")]
    assert len(names) >= 30
    assert [n for n in names if not n.startswith(PREFIXES)] == []
    assert (REAL / "SOURCES.md").is_file()
    assert (SEEDS / "SOURCES.md").is_file()


def test_copies_match_shared(shared_dir):
    shared = shared_dir / "real-outputs"
    missing = [p.name for p in shared.iterdir() if not (REAL / p.name).is_file()]
    assert missing == [], f"copy these into tests/data/real-outputs: {missing}"
    for src in shared.iterdir():
        if (REAL / src.name).read_bytes() != src.read_bytes():
            pytest.fail(f"{src.name} differs from {src}")


def test_seed_extracts_are_verbatim(shared_dir):
    """Every line of every seed extract occurs in its seed document."""
    seeds = {p.name[:3]: p.read_text() for p in (shared_dir / "seeds").glob("0*.txt")}
    for extract in SEEDS.glob("seed*.txt"):
        source = seeds[extract.name[4:7]]
        for line in extract.read_text().splitlines():
            assert line in source, f"{extract.name}: {line!r} not in seed {extract.name[4:7]}"

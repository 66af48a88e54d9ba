"""Real outputs the parsers used to misread: an OSU title with a site's version suffix
(`v7.0-<tag>`), a complete IMB run with `-msglog a:b` (IMB prints 0 bytes, then 2^a ... 2^b:
the "MINMSGLOG" row of Intel's "Parameters Controlling Intel(R) MPI Benchmarks", 2021.8)."""

from __future__ import annotations

import re

import pytest
from recordings import read

from fabrictest.parsers import imb, osu


@pytest.mark.parametrize(("suffix", "version"), [
    ("v7.0-sitebuild", "7.0-sitebuild"), ("v7.4-ompi4.1_local.2", "7.4-ompi4.1_local.2"),
    ("v5.6.3+cray", "5.6.3+cray"), ("v7.4", "7.4"),
])
@pytest.mark.parametrize(("name", "benchmark"), [
    ("osu_latency-7.4-ompi4.1-local.txt", "latency"), ("osu_bw-7.4-ompi4.1-local.txt", "bw"),
    ("osu_mbw_mr-7.4-ompi4.1-local.txt", "mbw_mr"),
])
def test_osu_title_with_a_version_suffix(name, benchmark, suffix, version):
    text = re.sub(r"(# OSU .*Test) v7\.4", rf"\1 {suffix}", read(name))
    result = osu.parse_osu(text)
    assert (result.benchmark, result.version) == (benchmark, version)
    assert osu.missing(result) == []


def _msglog_run(low: int, high: int) -> str:
    """The recorded IMB 2021.7 PingPong as `-msglog low:high` prints it: 0 bytes, then 2^low
    ... 2^high (rows of other sizes left out, the header and closing lines kept)."""
    keep = {0} | {1 << k for k in range(low, high + 1)}
    lines = []
    for line in read("imb-2021.7-pingpong-ompi4.1-local.txt").splitlines(keepends=True):
        m = re.match(r"^\s+(\d+)\s+\d+\s+[\d.]+\s+[\d.]+\s*$", line)
        if m is None or int(m.group(1)) in keep:
            lines.append(line)
    return "".join(lines)


@pytest.mark.parametrize(("low", "high"), [(3, 10), (0, 12), (10, 22), (22, 22)])
def test_imb_msglog_range_is_whole(low, high):
    result = imb.parse_imb(_msglog_run(low, high))
    rows = [r.bytes for r in result.benchmark("PingPong").rows]
    assert rows == [0, *(1 << k for k in range(low, high + 1))]
    assert imb.missing(result, "PingPong", 1 << high, 1 << low) == []
    # what the old rule demanded: every size from 1 byte
    if low > 0:
        assert imb.missing(result, "PingPong", 1 << high) != []


def test_imb_msglog_range_cut_short_is_still_incomplete():
    text = _msglog_run(3, 10)
    text = re.sub(r"^\s+1024\s+.*\n", "", text, flags=re.M)
    problems = imb.missing(imb.parse_imb(text), "PingPong", 1 << 10, 1 << 3)
    assert problems == ["PingPong: 8 of 9 sizes; last 512 B, expected up to 1 KiB"], problems

"""GPCNeT's network_test and network_load_test outputs: our runs of a real build
(tests/data/real-outputs-local), the public format samples of a default and a -DVERBOSE build
(tests/data/real-outputs, placeholder figures), a site's run wrapped by its job script (the HPE
Slingshot fabric validation guide: counts before, the NICs' counters after), their errors, and
every cut. Identity (counts, one run, each key once, impact factors against the tables):
tests/parsers/test_programs_identity.py."""

from __future__ import annotations

import pytest
from recordings import read, recordings

from fabrictest.parsers import ParseError
from fabrictest.parsers.gpcnet import (
    ISOLATED,
    KEY_RESULTS,
    LOADED,
    missing,
    parse_gpcnet,
)

NT_LOCAL = "gpcnet-network_test-1.3-ompi4.1-local-2-hosts.txt"
NLT_LOCAL = "gpcnet-network_load_test-1.3-ompi4.1-local-10-hosts.txt"
NT_VCLUSTER = "gpcnet-network_test-1.3-ompi4.1-vcluster-2-nodes.txt"
NLT_VCLUSTER = "gpcnet-network_load_test-1.3-ompi4.1-vcluster-10-nodes.txt"
NT_SAMPLE = "gpcnet-network_test-1.3-superbench-sample.txt"
NLT_VERBOSE = "gpcnet-network_load_test-1.3-verbose-superbench-sample.txt"
NT_HPE = "gpcnet-network_test-1.3-slingshot-hpe-site-wrapped.txt"
NLT_HPE = "gpcnet-network_load_test-1.3-slingshot-hpe-site-wrapped.txt"
WHOLE = [NT_LOCAL, NLT_LOCAL, NT_VCLUSTER, NLT_VCLUSTER, NT_SAMPLE, NT_HPE, NLT_HPE]
ERRORS = ["gpcnet-network_test-1.3-ompi4.1-local-one-host-error.txt",
          "gpcnet-network_load_test-1.3-ompi4.1-local-one-host-error.txt",
          "gpcnet-network_load_test-superbench-too-few-nodes.txt"]


def test_every_recording_is_read_here():
    names = {p.name for p in recordings("gpcnet-*.txt")}
    assert names == {*WHOLE, NLT_VERBOSE, *ERRORS}


def test_network_test_local_run():
    res = parse_gpcnet(read(NT_LOCAL))
    assert (res.program, res.version, res.ranks, res.nodes) == ("network_test", "1.3", 2, 2)
    assert [t.title for t in res.tables] == [ISOLATED]
    assert res.table(ISOLATED).columns == ["Avg", "99%", "Units"]
    lat = res.isolated("RR Two-sided Lat")
    assert (lat.name, lat.units, lat.values) == ("RR Two-sided Lat (8 B)", "usec",
                                                 {"Avg": 5.8, "99%": 0.6})
    bw = res.isolated("RR Two-sided BW")
    assert (bw.units, bw.values["Avg"]) == ("MiB/s/rank", 2260.1)
    assert len(res.table(ISOLATED).rows) == 8 and res.closed and not res.verbose
    assert missing(res, program="network_test", ranks=2, verbose=False) == []


def test_network_load_test_local_run():
    res = parse_gpcnet(read(NLT_LOCAL))
    assert (res.program, res.ranks, res.nodes, res.test_nodes, res.congestor_nodes) == (
        "network_load_test", 10, 10, 2, 8)
    assert [t.title for t in res.tables] == [ISOLATED, LOADED, KEY_RESULTS]
    assert res.impact("RR Two-sided Lat") == (1.4, 0.8)
    assert res.impact("RR Two-sided BW+Sync") == (0.4, 0.8)
    assert res.impact("Multiple Allreduce") == (1.3, 0.3)
    assert res.table(LOADED).row("RR Two-sided Lat").values == {"Avg": 19.8, "99%": 89.6}
    assert missing(res, program="network_load_test", ranks=10, verbose=False) == []
    assert "expected network_test" in " ".join(missing(res, program="network_test"))
    assert "10 ranks, expected 12" in " ".join(missing(res, ranks=12))
    assert "expected a -DVERBOSE one" in " ".join(missing(res, verbose=True))


def test_vcluster_runs_over_tcp_between_nodes():
    """Real traffic between emulated nodes (200 Mbit/s links): bandwidth per rank near the
    link's 23.8 MiB/s; the impact factors as GPCNeT printed them (0.2X: loaded latency below
    the isolated one, 10 ranks on 2 cores)."""
    nt = parse_gpcnet(read(NT_VCLUSTER))
    assert (nt.program, nt.ranks, nt.nodes) == ("network_test", 2, 2)
    assert nt.isolated("RR Two-sided BW").values == {"Avg": 12.4, "99%": 8.2}
    assert missing(nt, program="network_test", ranks=2, verbose=False) == []
    nlt = parse_gpcnet(read(NLT_VCLUSTER))
    assert (nlt.ranks, nlt.test_nodes, nlt.congestor_nodes) == (10, 2, 8)
    assert nlt.impact("RR Two-sided Lat") == (0.2, 0.8)
    assert nlt.impact("RR Two-sided BW+Sync") == (1.0, 1.0)
    assert nlt.impact("Multiple Allreduce") == (1.9, 1.2)
    assert missing(nlt, program="network_load_test", ranks=10, verbose=False) == []


def test_verbose_sample_is_read_and_its_zero_impact_factors_refused():
    res = parse_gpcnet(read(NLT_VERBOSE))
    assert res.verbose and res.program == "network_load_test"
    assert res.per_congestor == 100  # the sample's placeholder (8 congestor nodes make 2)
    titles = [t.title for t in res.tables]
    assert titles[:2] == [ISOLATED, "Isolated Congestion Tests"]
    assert f"{LOADED} (RR Two-sided BW+Sync Network Test)" in titles
    assert res.table(ISOLATED).columns == ["Min", "Max", "Avg", "Avg(Worst)", "99%", "99.9%",
                                           "Units"]
    assert len(res.loaded_tables()) == 3
    assert all(len(t.rows) == 5 for t in res.loaded_tables())
    assert res.impact("Multiple Allreduce") == (0.0, 0.0)
    problems = missing(res, verbose=True)
    zero = [p for p in problems if "is not a positive number" in p]
    assert len(zero) == 6 and all(KEY_RESULTS in p for p in zero)
    # its 0.0X factors contradict its tables (10000.0 / 10000.0), and its node split
    contradicts = [p for p in problems if "contradicts the tables" in p]
    assert len(contradicts) == 6, problems
    assert problems[0] == "gpcnet: min 100 nodes per congestor, but 8 congestor nodes make 2"
    assert len(problems) == 13


@pytest.mark.parametrize("name", ERRORS)
def test_error_outputs_fail_with_their_line(name):
    res = parse_gpcnet(read(name))
    problems = missing(res)
    assert problems and problems[0].startswith("gpcnet: ERROR: this application must be run on "
                                               "at least"), problems


def test_a_site_wrapped_run_is_read_whole():
    """The HPE Slingshot fabric validation guide's run_gpc_tests.sh prints the node and rank
    counts before GPCNeT and the 8 NICs' tx/rx counters after its last table (64 nodes x 32
    ranks): those lines are the site's, GPCNeT's output is whole."""
    nt = parse_gpcnet(read(NT_HPE))
    assert (nt.program, nt.ranks, nt.nodes, nt.runs, nt.foreign) == ("network_test", 2048, 64,
                                                                     1, [])
    assert nt.isolated("RR Two-sided BW").values == {"Avg": 4086.5, "99%": 2504.7}
    assert missing(nt, program="network_test", ranks=2048, nodes=64, verbose=False) == []
    nlt = parse_gpcnet(read(NLT_HPE))
    assert (nlt.test_nodes, nlt.congestor_nodes, nlt.per_congestor) == (13, 51, 12)
    assert nlt.impact("RR Two-sided BW+Sync") == (1.0, 1.0)
    assert missing(nlt, program="network_load_test", ranks=2048, nodes=64, verbose=False) == []


@pytest.mark.parametrize("name", WHOLE)
def test_every_cut_is_read_exactly_or_incomplete(name):
    """A cut inside GPCNeT's output is never whole; a cut in the lines a site printed after it
    (after its last bar) reads GPCNeT's tables exactly as the whole output does."""
    text = read(name)
    whole = parse_gpcnet(text)
    assert missing(whole) == []
    tool_end = text.rindex("-+\n") + 3
    for end in range(len(text) - 1, 0, -1):
        try:
            cut = parse_gpcnet(text[:end])
        except ParseError:
            continue
        problems = missing(cut)
        if end >= tool_end:
            assert problems == [] and cut.tables == whole.tables, (name, end, problems)
        else:
            assert problems, f"{name} cut at {end} of {len(text)} passes"


def test_a_lost_row_or_unit_or_figure_is_named():
    text = read(NLT_LOCAL)
    row = "|        Multiple Allreduce (8 B) |         33.5 |         63.0 |         usec |\n"
    assert row in text
    assert f"'{LOADED}' has no Multiple Allreduce row" in " ".join(
        missing(parse_gpcnet(text.replace(row, ""))))
    assert "in 'MiB/s/rank', expected 'usec'" in " ".join(
        missing(parse_gpcnet(text.replace(row, row.replace("        usec", "  MiB/s/rank")))))
    assert "has no 99%" in " ".join(
        missing(parse_gpcnet(text.replace(row, row.replace("|         63.0 ", "")))))
    with pytest.raises(ParseError, match="is not a number"):
        parse_gpcnet(text.replace(row, row.replace("33.5", "3x.5")))
    nan = missing(parse_gpcnet(text.replace(row, row.replace("  33.5", "-nan"))))
    assert "is not a positive number" in " ".join(nan), nan


def test_not_gpcnet_output():
    for text in ("", "hello\n", read("osu_bw-7.4-ompi4.1-local.txt")):
        with pytest.raises(ParseError):
            parse_gpcnet(text)

"""One hostlist library (parsers/hostlists.py, python-hostlist) for every hostlist: the forms
Slurm writes, each bad one refused in one line, and the size bound refused at once."""

from __future__ import annotations

import time

import pytest

from fabrictest.parsers.errors import ParseError
from fabrictest.parsers.hostlists import MAX_NODES, compress, expand
from fabrictest.parsers.node_sets import compress_hostlist
from fabrictest.parsers.sinfo import parse_sinfo
from fabrictest.parsers.topology import parse_scontrol_topology


@pytest.mark.parametrize("text, names", [
    ("node[01-03,07]", ["node01", "node02", "node03", "node07"]),
    ("nid[008-010,012],login1", ["nid008", "nid009", "nid010", "nid012", "login1"]),
    ("a[1-2]b[3-4]", ["a1b3", "a1b4", "a2b3", "a2b4"]),
    ("g3-129-[235,237],g3-130-[001,003]", ["g3-129-235", "g3-129-237", "g3-130-001",
                                          "g3-130-003"]),
    ("switch.2.[1-2]", ["switch.2.1", "switch.2.2"]),
    ("n1,n1,n2", ["n1", "n2"]),  # each name once
    ("", []),
])
def test_the_forms_slurm_writes(text, names):
    assert expand(text) == names


@pytest.mark.parametrize("text, why", [
    ("node[3-1]", "start > stop"),  # was [] (silently no node)
    ("x[1-2", "unbalanced brackets"),  # was ['x[1-2']
    ("n[ 1-2]", "no spaces"),  # was two nodes
    ("node[[01-02]]", "nested brackets"),  # was a traceback
    ("node[a-b]", "bad range"),
    ("node[-1-2]", "bad range"),
    ("node[0-99999999]", f"more than {MAX_NODES} names"),  # hung
    ("a[0-99999],b[0-99999]", f"more than {MAX_NODES} names"),  # the bound is for the whole
])
def test_bad_hostlists_are_one_line(text, why):
    t0 = time.monotonic()
    with pytest.raises(ParseError) as err:
        expand(text, "Nodes=")
    assert time.monotonic() - t0 < 2
    msg = str(err.value)
    assert msg.startswith("bad Nodes= ") and why in msg and "\n" not in msg


def test_compress_as_slurm_does():
    assert compress(["n9", "n10", "n11"]) == "n[9-11]"  # not n9,n[10-11]
    assert compress(["nid003", "nid001", "nid002", "nid010"]) == "nid[001-003,010]"
    assert compress([]) == "" and compress_hostlist(["a1", "b2"]) == "a1,b2"
    assert expand(compress([f"nid{i:05d}" for i in range(20000)])) == [
        f"nid{i:05d}" for i in range(20000)]


def test_every_reader_uses_it():
    with pytest.raises(ParseError, match="start > stop"):
        parse_sinfo("node[3-1] idle\n")
    with pytest.raises(ParseError, match="unbalanced"):
        parse_scontrol_topology("SwitchName=s1 Nodes=x[1-2\n")
    from fabrictest.sweep.nodes import NodeSetError
    from fabrictest.sweep.nodes import expand as sweep_expand

    with pytest.raises(NodeSetError, match="nested brackets"):
        sweep_expand("node[[01-02]]")

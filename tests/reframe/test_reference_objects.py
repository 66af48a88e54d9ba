"""A reference file is parsed once into checked objects (issue 28, item 2): the entry a test
gets (`resolve`), what ReFrame is handed (`for_reframe`) and the failure message all read the
objects `load` made; pure, no ReFrame run."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from _rfm import ROOT
from fabric_references import ReferenceChecks, ReferenceState

from fabrictest import references as refs
from fabrictest.references import loading

REF_DIR = ROOT / "reference"
TXRX = {"scenario": "paired", "method": "mpi", "buffer": "host", "span": "one"}


@pytest.fixture
def parses(monkeypatch):
    """Counts of the file reads (`read_yaml`) and entry parses (`parse_entry`) from here on."""
    count = {"read_yaml": 0, "parse_entry": 0}

    def counted(name):
        real = getattr(loading, name)

        def wrapper(*args, **kwargs):
            count[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(loading, name, wrapper)

    counted("read_yaml")
    counted("parse_entry")
    return count


def _key_paths(tree: dict, depth: int):
    """The key paths of a class's checked tree, with the file's own keys (integers stay)."""
    for key, child in tree.items():
        if depth == 1:
            yield (key,)
        else:
            yield from ((key, *rest) for rest in _key_paths(child, depth - 1))


@pytest.mark.parametrize("path", sorted(REF_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_a_reference_file_is_parsed_once(path, parses):
    """`load` reads the file once and parses each figure once; looking every entry up,
    judging it and building ReFrame's reference from it parse nothing more (before, `resolve`
    parsed the entry's figures again and `for_reframe` walked the raw YAML)."""
    ref_file = refs.load(path, require_provenance=False)
    figures = sum(len(v) for c in ref_file.classes.values() for v in c.entries.values())
    assert parses == {"read_yaml": 1, "parse_entry": figures}
    for name, cref in ref_file.classes.items():
        for real in _key_paths(cref.tree, len(cref.index)):
            params = dict(zip(cref.index[1:], real[1:], strict=True))
            keys, found = refs.resolve(ref_file, name, path.stem, params)
            assert keys == tuple(map(str, real)) and found == cref.entries[keys]
            refs.refusals(ref_file, name, path.stem, keys, found, {})
            refs.for_reframe(ref_file, name, keys, {f: f for f in found})
    assert parses == {"read_yaml": 1, "parse_entry": figures}


def test_reframe_is_handed_the_checked_objects():
    """`resolve` returns the loaded file's own Reference objects, with their provenance, and
    ReFrame's `(value, lower, upper, unit)` tuples are made from those objects: change the
    object and the handed tuple follows."""
    ref_file = refs.load(REF_DIR / "vcluster.yaml", require_provenance=False)
    cref = ref_file.classes["TxRxTest"]
    keys, found = refs.resolve(ref_file, "TxRxTest", "vcluster", TXRX)
    for var, ref in found.items():
        assert ref is cref.entries[keys][var]
        assert ref.measured_with == cref.measured_with(keys, var)
        assert ref.provenance == cref.provenance_for(keys, var)
    stream = found["stream_gbps"]
    assert stream.measured_with, "the figure carries what it was measured with"
    handed = refs.for_reframe(ref_file, "TxRxTest", keys, {"stream_gbps": "stream_gbps"})
    node = handed[keys[0]]  # the entry under its system alone
    assert node["stream_gbps"] == stream.for_reframe() == (
        stream.value, stream.lower, stream.upper, stream.unit)

    cref.entries[keys]["stream_gbps"] = replace(stream, value=stream.value * 2, lower=-0.25)
    node = refs.for_reframe(ref_file, "TxRxTest", keys, {"stream_gbps": "stream_gbps"})[keys[0]]
    assert node["stream_gbps"] == (stream.value * 2, -0.25, stream.upper, stream.unit)


def test_a_reference_without_a_unit_is_handed_without_one():
    """ReFrame warns about a reference whose fourth item is not the figure's unit: a figure
    written without a unit is handed as (value, lower, upper)."""
    assert refs.Reference(2.0, -0.1, None, None).for_reframe() == (2.0, -0.1, None)
    assert refs.Reference(2.0, -0.1, None, "s").for_reframe() == (2.0, -0.1, None, "s")
    assert refs.Reference(2.0, -0.1, None, "s", {"document": "d"}) == refs.Reference(
        2.0, -0.1, None, "s")  # the provenance takes no part in comparisons


def _plugin(judged: dict, perfvalues: dict, scenario: str = "paired"):
    """Just what `placed_failures` reads of a test: ReFrame's `perfvalues`, the references
    state the base kept, the family's place and aliases."""
    test = SimpleNamespace(perfvalues=perfvalues, reference_state=ReferenceState(judged=judged),
                           scenario=scenario, display_name="TxRxTest", reference_aliases={
                               r"stream_.+_to_.+_gbps": "stream_gbps"})
    test.headline_of = lambda var: ReferenceChecks.headline_of(test, var)
    test.figure_place = lambda var, failed: ("node03", "stream node03->node01")
    return test


def test_the_failure_message_states_the_references_own_bounds():
    """The reference, its bound and the accepted interval in the message are the checked
    reference's the figure was judged against, not numbers read back from ReFrame's verdict
    (here deliberately different, to tell the two apart); the measured value is ReFrame's."""
    stream = refs.Reference(0.19, -0.05, None, "Gbps", {"document": "d", "table": "t"})
    latency = refs.Reference(2.0, None, 0.1, "us")
    perfvalues = {  # [value, ref, lower, upper, unit, result] as ReFrame keeps them
        "vcluster:default:stream_gbps": [0.161, 0.5, -0.9, None, "Gbps", "fail"],
        "vcluster:default:stream_node03_to_node01_gbps": [0.16, 0.5, -0.9, None, "Gbps", "fail"],
        "vcluster:default:lat_us": [2.5, 9.0, None, 0.9, "us", "fail"],
        "vcluster:default:node_gbps": [0.19, 0.19, -0.05, None, "Gbps", "pass"],
    }
    judged = {"stream_gbps": stream, "stream_node03_to_node01_gbps": stream, "lat_us": latency}
    msg = ReferenceChecks.placed_failures(_plugin(judged, perfvalues), "ReFrame's own message")
    assert msg.startswith("failed to meet reference(s): node03 (paired, stream node03->node01): "
                          "stream_gbps 0.161 Gbps is 15.3 % below its reference 0.19 (lower "
                          "bound -5 %); "), msg
    assert "lat_us 2.5 us is 25 % above its reference 2 (upper bound +10 %)" in msg
    low, high = stream.bounds()
    assert f"[stream_gbps=0.161 Gbps, expected 0.19 (l={low:.4g}, u=inf); " in msg
    assert "lat_us=2.5 us, expected 2 (l=-inf, u=2.2)]" in msg
    assert "0.5" not in msg and "-90 %" not in msg and "9.0" not in msg, msg
    assert "node_gbps" not in msg  # passed


def test_the_base_hands_reframe_and_keeps_the_same_objects():
    """The base's hook before the performance stage: ReFrame's `reference` holds the tuples of
    the objects it keeps for the failure message (`ReferenceState.judged`), a per-item figure
    its headline's object."""
    import reframe.utility.sanity as sn

    ref_file = refs.load(REF_DIR / "vcluster.yaml", require_provenance=False)
    cref = ref_file.classes["TxRxTest"]
    measured = cref.measured_with(refs.resolve(ref_file, "TxRxTest", "vcluster", TXRX)[0],
                                  "stream_gbps")
    class TxRxTest(SimpleNamespace):  # the entry is the class name's
        pass

    test = TxRxTest(
        **TXRX, reference_state=ReferenceState(file=ref_file), display_name="TxRxTest",
        current_system=SimpleNamespace(name="vcluster"), shaped_by=tuple(measured),
        shaping_used=measured, informational_perf_vars=[], reference_file="",
        reference_aliases={r"stream_.+_to_.+_gbps": "stream_gbps"}, perf_variables={
            var: sn.make_performance_function(sn.defer(1.0), "Gbps")
            for var in ("stream_gbps", "stream_vc1_to_vc2_gbps")})
    for name in ("reference_entry", "shaping", "informational", "dynamic_perf_variables",
                 "headline_of", "reference_path", "_hand_reference"):
        setattr(test, name, getattr(ReferenceChecks, name).__get__(test))
    test._hand_reference()
    judged = test.reference_state.judged
    keys, found = refs.resolve(ref_file, "TxRxTest", "vcluster", TXRX)
    assert set(judged) == {"stream_gbps", "stream_vc1_to_vc2_gbps"}
    assert judged["stream_gbps"] is judged["stream_vc1_to_vc2_gbps"] is found["stream_gbps"]
    node = test.reference[keys[0]]
    assert node == {var: ref.for_reframe() for var, ref in judged.items()}


def test_one_reference_directory_lookup_for_every_reader(tmp_path, monkeypatch):
    """The performance references (ReFrame's plugin, fabric-report, the sweep) and the counter
    thresholds (ReFrame's plugin, fabric-report counters, fabric-health counters) all find the
    reference directory through `fabrictest.references.reference_dir`, which alone reads
    RFM_REFERENCE_PREFIX."""
    import re

    from fabric_references import reference_path

    from fabrictest.counters import files as counter_files
    from fabrictest.references import location
    from fabrictest.report.calibrate import cmd as calibrate_cmd
    from fabrictest.sweep import system_defaults

    assert calibrate_cmd.reference_dir is counter_files.reference_dir is location.reference_dir
    assert system_defaults.reference_file is refs.reference_file is location.reference_file
    moved = tmp_path / "site-references"
    monkeypatch.setenv("RFM_REFERENCE_PREFIX", str(moved))
    assert reference_path("vcluster") == str(moved / "vcluster.yaml")
    assert counter_files.system_thresholds("vcluster")[2] == moved / "counters" / "vcluster.yaml"
    assert refs.reference_dir("elsewhere") == type(moved)("elsewhere")  # the option first
    # the variable's name as a string (to read it from the environment) in one module only
    readers = [p for d in ("src/fabrictest", "reframe_tests", "config") for p in
               (ROOT / d).rglob("*.py")
               if re.search(r"[\"']RFM_REFERENCE_PREFIX[\"']", p.read_text())]
    assert [p.relative_to(ROOT).as_posix() for p in readers] == [
        "src/fabrictest/references/location.py"]


def test_a_loaded_file_survives_reframe_copying_the_test():
    """ReFrame deep-copies a test case (its references state with it) to retry it."""
    import copy

    ref_file = refs.load(REF_DIR / "vcluster.yaml", require_provenance=False)
    twin = copy.deepcopy(ReferenceState(file=ref_file, judged=refs.lookup(
        ref_file, "TxRxTest", "vcluster", TXRX)))
    assert twin.judged == refs.lookup(ref_file, "TxRxTest", "vcluster", TXRX)
    assert twin.judged["stream_gbps"].measured_with == refs.lookup(
        ref_file, "TxRxTest", "vcluster", TXRX)["stream_gbps"].measured_with

"""reference/*.yaml: every file loads, carries provenance, and matches the tests' parameters,
variables and performance units; ReFrame's own reader accepts it (the `$provenance` block is
invisible to it); the symptoms in the users' notes (docs/sources.md) fall outside their
references."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest
import yaml
from _rfm import ROOT, SYSTEMS

from fabrictest import references as refs

#: every family module (found, not listed: a new family's references are checked from day one)
MODULES = tuple(sorted(p.stem for p in (ROOT / "reframe_tests").glob("*.py")
                       if "@rfm.simple_test" in p.read_text()))
REF_DIR = ROOT / "reference"
#: the documented starting file of a system with no figures yet (docs/architecture.md)
STARTING_FILE = REF_DIR / "templates" / "new-system.yaml"


def _perf_units(cls) -> dict[str, str]:
    """Performance variables of a test class and their units (from @performance_function)."""
    units = {}
    for name, fn in cls._rfm_perf_fns.items():
        cells = [c.cell_contents for c in (fn.__closure__ or ())]
        unit = next((c for c in cells if isinstance(c, str)), None)
        units[name] = unit
    var_space = cls._rfm_var_space
    aliases = (
        var_space["reference_aliases"].default_value if "reference_aliases" in var_space else {}
    )
    for pattern, headline in (aliases or {}).items():
        if headline in units:
            units[pattern] = units[headline]
    units.update(getattr(cls, "counter_figure_units", {}))  # the base's counters_* figures
    return units


def _indexable(cls) -> dict[str, tuple | None]:
    out: dict[str, tuple | None] = {}
    for name in cls.param_space.params:
        out[name] = tuple(cls.param_space[name])
    for name in cls._rfm_var_space:
        out.setdefault(name, None)
    return out


@pytest.fixture(scope="module")
def specs() -> dict[str, refs.TestSpec]:
    out = {}
    for mod_name in MODULES:
        # by path, under a name of our own: `txrx`, `osu`, ... must not shadow anything
        path = ROOT / "reframe_tests" / f"{mod_name}.py"
        spec = importlib.util.spec_from_file_location(f"fabrictest_rfm_{mod_name}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # ReFrame looks its test classes' files up there
        spec.loader.exec_module(mod)
        for obj in vars(mod).values():
            if (
                isinstance(obj, type)
                and getattr(obj, "_rfm_regression_class_kind", 0)
                and obj.__module__ == mod.__name__
            ):
                out[obj.__name__] = refs.TestSpec(
                    obj.__name__, _indexable(obj), _perf_units(obj), tuple(obj.shaped_by)
                )
    return out


def test_every_system_has_a_reference_file():
    files = {p.stem for p in REF_DIR.glob("*.yaml")}
    assert set(SYSTEMS) <= files, (
        f"no reference/<name>.yaml for {sorted(set(SYSTEMS) - files)}: start from "
        f"{STARTING_FILE.relative_to(ROOT)} (docs/architecture.md, 'Adding a system', step 3)")


def is_starting_file(path) -> bool:
    """The file is the starting file, figures not yet written: its data is the template's."""
    return yaml.safe_load(path.read_text()) == yaml.safe_load(STARTING_FILE.read_text())


def test_the_starting_file_loads_with_no_figures(specs):
    ref_file = refs.load(STARTING_FILE)
    assert ref_file.classes == {} and refs.check_against(ref_file, specs) == []
    assert not is_starting_file(REF_DIR / "local.yaml")  # a file with figures is not it


@pytest.mark.parametrize("path", sorted(REF_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_reference_file_loads_and_matches_the_tests(path, specs):
    ref_file = refs.load(path, require_provenance=path.stem != "vcluster")
    # no class: only as the starting file (no figures yet), whose every test fails, not a file
    # whose classes were lost
    assert ref_file.classes or is_starting_file(path), f"{path.name} has no test class"
    assert refs.check_against(ref_file, specs) == []


@pytest.mark.parametrize("path", sorted(REF_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_reframe_reads_the_file(path, specs):
    """ReFrame's own reader (the `$ref` machinery) accepts every class entry."""
    from reframe.core.pipeline import _ReferenceDict

    ref_file = refs.load(path, require_provenance=False)
    for name in ref_file.classes:
        rd = _ReferenceDict.__new__(_ReferenceDict)
        rd._ReferenceDict__test_entry_name = name
        parsed = rd._read_ref_file(str(path))
        assert parsed["$index"][0] == "$system"
        if not ref_file.classes[name].entries:  # informational there: nothing to look up
            assert ref_file.classes[name].informational_reason(path.stem), name
            continue
        assert path.stem in parsed or any(
            re.fullmatch(k, path.stem) for k in parsed if k != "$index"
        )


@pytest.mark.parametrize("path", sorted(REF_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_reframe_takes_the_reference_the_tests_hand_it(path):
    """What the base hands ReFrame (`for_reframe`) for every entry of every file: ReFrame's
    `reference` type accepts it, it holds that entry only, under the file's system key alone
    (ReFrame does not look the entry up again by the test's attributes), and the bounds of
    the figure each takes."""
    from reframe.core.pipeline import RegressionTestDict
    from reframe.utility import typecheck as typ

    entry_type = typ.Dict[str, typ.Tuple[object, object, object, object]]
    ref_file = refs.load(path, require_provenance=False)
    for name, cref in ref_file.classes.items():
        for keys, figures in cref.entries.items():
            first = next(iter(figures))
            judged = {f: f for f in figures} | {"per_item_figure": first}
            handed = refs.for_reframe(ref_file, name, keys, judged)
            assert refs.PROVENANCE_KEY not in handed
            assert handed["$index"] == list(cref.index[:1])
            rd = RegressionTestDict(handed, value_type=entry_type)
            (only,) = rd.data  # this entry alone, under its system
            assert str(only) == keys[0]
            node = rd.data[only]
            assert set(node) == {*figures, "per_item_figure"}
            assert node["per_item_figure"] == node[first]
            ref = figures[first]
            assert node[first][:3] == (ref.value, ref.lower, ref.upper)
            dropped = refs.for_reframe(ref_file, name, keys, {})
            assert "per_item_figure" not in str(dropped)


def test_local_references_cover_what_runs_on_local():
    f = refs.load(REF_DIR / "local.yaml")
    for scenario in ("same-node", "many-to-one"):
        got = refs.lookup(
            f, "TxRxTest", "local", {"scenario": scenario, "method": "mpi", "buffer": "host"}
        )
        assert {"stream_gbps", "node_gbps", "tx_gbps"} <= set(got)
    # all-to-many's timings and bisection's bandwidth are informational on local (their
    # spread on 2 shared cores leaves no bound that can fail usefully): no entry, a reason
    for cls in ("AllToManyTest", "BisectionTest"):
        assert not f.classes[cls].entries
        assert "2 shared cores" in f.classes[cls].informational_reason("local")
        assert f.classes[cls].informational_reason("vcluster") is None
    assert refs.lookup(f, "AllToManyScalingTest", "local", {})


def test_seed_figures_and_symptoms():
    seren = refs.load(REF_DIR / "seren.yaml")
    r = refs.lookup(
        seren, "TxRxTest", "seren", {"scenario": "same-node", "method": "rdma", "buffer": "host"}
    )["stream_gbps"]
    assert r.accepts(96.06) and r.accepts(97.57)  # the SEREN tx/rx notes' 10-node range
    assert not r.accepts(0.6 * 97.0)  # "this link is 40% below its reference"
    m2o = refs.lookup(
        seren, "TxRxTest", "seren", {"scenario": "many-to-one", "method": "rdma", "buffer": "host"}
    )
    assert m2o["stream_gbps"].accepts(51.985) and m2o["node_gbps"].accepts(103.97)

    orfeo = refs.load(REF_DIR / "orfeo.yaml")
    ib = refs.lookup(orfeo, "ImbTest", "orfeo", {"benchmark": "PingPong", "transport": "rdma"})
    tcp = refs.lookup(orfeo, "ImbTest", "orfeo", {"benchmark": "PingPong", "transport": "tcp"})
    assert ib["latency"].accepts(1.81) and ib["peak_bw"].accepts(12333.91)
    assert tcp["latency"].accepts(16.20) and tcp["peak_bw"].accepts(2482.27)
    # the 25 GbE figures are not acceptable for InfiniBand
    assert not ib["latency"].accepts(16.20) and not ib["peak_bw"].accepts(2482.27)

    crusher = refs.load(REF_DIR / "crusher.yaml")
    gpu = refs.lookup(crusher, "OsuGpuAwareTest", "crusher", {"benchmark": "osu_bibw"})
    assert gpu["bw_hh"].accepts(19500.0)
    assert not gpu["bw_dd"].accepts(10900.0)  # the Crusher GPU notes' symptom
    assert not gpu["dd_over_hh"].accepts(10.9 / 19.5)

    cori = refs.load(REF_DIR / "cori.yaml")
    scaling = refs.lookup(cori, "AllToManyScalingTest", "cori", {})
    assert not scaling["end_to_end_growth"].accepts(4.72)
    assert not scaling["irecv_growth"].accepts(30.3)
    t32 = refs.lookup(cori, "AllToManyTest", "cori", {"iterations": 32})
    assert not t32["t_irecv"].accepts(5.6778)  # the all-to-many (Cori) notes' degraded -n 32
    t2 = refs.lookup(cori, "AllToManyTest", "cori", {"iterations": 2})
    assert t2["t_end_to_end"].accepts(0.0829)

    sling = refs.load(REF_DIR / "slingshot.yaml")
    grp = refs.lookup(sling, "OsuMbwMrTest", "slingshot", {"scope": "group", "ranks_per_node": 20})
    assert grp["node_pair_bw"].accepts(12195.0) and grp["peak_bw"].accepts(378065.80)
    glb = refs.lookup(sling, "OsuMbwMrTest", "slingshot", {"scope": "global", "ranks_per_node": 8})
    assert glb["node_pair_bw"].accepts(9271.0)


def test_every_value_has_provenance():
    for path in REF_DIR.glob("*.yaml"):
        if path.stem == "vcluster":
            continue
        f = refs.load(path)
        for cref in f.classes.values():
            for keys, values in cref.entries.items():
                for var in values:
                    src = cref.provenance_for(keys, var)
                    assert src and src.get("document") and src.get("table"), (path, keys, var)


def _write(tmp_path, name, data) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data))
    return p


def test_loader_rejects_what_reframe_would_and_missing_provenance(tmp_path):
    good = {"BisectionTest": {"$index": ["$system"], "x": {"node_bw": [1.0, -0.1, None, "MB/s"]}}}
    with pytest.raises(refs.ReferenceError, match="no provenance"):
        refs.load(_write(tmp_path, "x.yaml", good))
    assert refs.load(_write(tmp_path, "x.yaml", good), require_provenance=False)
    # provenance inside a class entry: ReFrame's reader would take it for a reference value
    inline = {
        "BisectionTest": {
            "$index": ["$system"],
            "x": {"node_bw": [1.0, -0.1, None, "MB/s"], "document": "s"},
        }
    }
    with pytest.raises(refs.ReferenceError, match="expected \\[ref"):
        refs.load(_write(tmp_path, "x.yaml", inline), require_provenance=False)
    bad_index = {"BisectionTest": {"$index": ["scenario"], "x": {}}}
    with pytest.raises(refs.ReferenceError, match="must start with"):
        refs.load(_write(tmp_path, "x.yaml", bad_index), require_provenance=False)
    other_system = {"BisectionTest": {"$index": ["$system"], "seren": {"node_bw": [1, -0.1, None]}}}
    with pytest.raises(refs.ReferenceError, match="does not match the file's system"):
        refs.load(_write(tmp_path, "x.yaml", other_system), require_provenance=False)
    positive_lower = {"BisectionTest": {"$index": ["$system"], "x": {"node_bw": [1, 0.1, None]}}}
    with pytest.raises(refs.ReferenceError, match="lower threshold"):
        refs.load(_write(tmp_path, "x.yaml", positive_lower), require_provenance=False)


def test_check_against_reports_mismatches(tmp_path, specs):
    data = {
        "$provenance": {"TxRxTest": {"x": {"document": "d", "table": "t"}}},
        "TxRxTest": {
            "$index": ["$system", "scenario", "method", "buffer"],
            "x": {
                "same-node": {
                    "mpi": {
                        "host": {
                            "stream_gbps": [1, -0.5, None, "MB/s"],
                            "bogus": [1, -0.5, None, "Gbps"],
                        }
                    }
                },
                "nowhere": {"mpi": {"host": {"node_gbps": [1, -0.5, None, "Gbps"]}}},
            },
        },
    }
    problems = refs.check_against(refs.load(_write(tmp_path, "x.yaml", data)), specs)
    text = "\n".join(problems)
    assert "unit 'MB/s' != the test's 'Gbps'" in text
    assert "no performance variable 'bogus'" in text
    assert "scenario='nowhere'" in text


# -- references that can fail (issue 10) --------------------------------------------------------

NEVER_FAIL = [
    ([1.0, None, None, "MB/s"], "both bounds are null"),
    ([0.0, -0.1, None, "MB/s"], "reference of 0"),
    ([0, None, 0.5, "MB/s"], "reference of 0"),
    ([1.0, -1, None, "MB/s"], "lower threshold of -1"),
    ([1.0, -1.5, 0.5, "MB/s"], "lower threshold of -1.5"),
    ([1.0, -0.1, float("inf"), "MB/s"], "not a finite number"),
    ([float("nan"), -0.1, None, "MB/s"], "not a finite number"),
    ([-5.0, -0.1, None, "MB/s"], "negative"),
    ([1.0, None, -0.2, "MB/s"], "upper threshold -0.2 must be >= 0"),
    # issue 40: physically impossible references (physical.PLAUSIBLE)
    ([1e-9, -0.1, None, "Gbps"], "1e-09 Gbps is below what a data rate of a fabric can be"),
    ([1e15, None, 0.1, "us"], "1e+15 us is above what a time of a fabric can be"),
]


@pytest.mark.parametrize(("value", "why"), NEVER_FAIL, ids=[w for _, w in NEVER_FAIL])
def test_loader_refuses_a_reference_that_can_never_fail(tmp_path, value, why):
    data = {"BisectionTest": {"$index": ["$system"], "x": {"node_bw": value}}}
    with pytest.raises(refs.ReferenceError) as err:
        refs.load(_write(tmp_path, "x.yaml", data), require_provenance=False)
    line = str(err.value)
    assert "\n" not in line and why in line, line
    assert line.startswith("x.yaml:BisectionTest:x.node_bw:"), line  # file, key path, figure


def _shaped(tmp_path, measured_with, values=None):
    prov = {"document": "d", "table": "t", "measured_with": measured_with}
    if values:
        prov["values"] = values
    data = {
        "$provenance": {"TxRxTest": {"x": prov}},
        "TxRxTest": {
            "$index": ["$system", "scenario", "method", "buffer"],
            "x": {"same-node": {"mpi": {"host": {
                "stream_gbps": [50.0, -0.5, None, "Gbps"],
                "node_gbps": [50.0, -0.5, None, "Gbps"],
            }}}},
        },
    }
    return refs.load(_write(tmp_path, "x.yaml", data))


def _refused(ref_file, shaping):
    params = {"scenario": "same-node", "method": "mpi", "buffer": "host"}
    keys, found = refs.resolve(ref_file, "TxRxTest", "x", params)
    return refs.refusals(ref_file, "TxRxTest", "x", keys, found, shaping)


def test_a_figure_measured_with_another_message_size_has_no_reference(tmp_path):
    f = _shaped(tmp_path, {"msg_size": 65536, "nmsg": [20000, 100000], "transport": None})
    assert _refused(f, {"msg_size": 65536, "nmsg": 20000, "transport": None}) == {}
    got = _refused(f, {"msg_size": 1024, "nmsg": 20000, "transport": None})
    assert set(got) == {"stream_gbps", "node_gbps"}
    assert got["stream_gbps"].startswith("no reference for msg_size=1024: x.yaml holds TxRxTest "
                                         "figures on x measured with msg_size=65536")
    assert "nmsg=20000 or 100000" in _refused(f, {"msg_size": 65536, "nmsg": 5})["node_gbps"]
    # a variable the file does not mention: no reference either
    unsaid = _refused(f, {"msg_size": 65536, "num_blks": 10})
    assert unsaid["stream_gbps"].startswith("no reference for num_blks=10: x.yaml does not say")
    # rdma's transport against figures measured where it did not apply
    assert "transport=uc" in _refused(f, {"transport": "uc"})["stream_gbps"]


def test_per_value_measured_with_overrides_the_block(tmp_path):
    f = _shaped(tmp_path, {"msg_size": 65536, "nmsg": 100000},
                values={"same-node.mpi.host.node_gbps": {"measured_with": {"nmsg": 1000000}}})
    got = _refused(f, {"msg_size": 65536, "nmsg": 100000})
    assert list(got) == ["node_gbps"] and "nmsg=1000000" in got["node_gbps"]
    # the per-value entry inherits the block's source
    prov = f.classes["TxRxTest"].provenance_for(("x", "same-node", "mpi", "host"), "node_gbps")
    assert prov["document"] == "d" and prov["measured_with"] == {"msg_size": 65536, "nmsg": 1000000}


def test_measured_with_must_hold_values(tmp_path):
    with pytest.raises(refs.ReferenceError, match="measured_with.msg_size must be a value"):
        _shaped(tmp_path, {"msg_size": {"a": 1}})


def test_unit_mismatch_is_reported(tmp_path):
    f = _shaped(tmp_path, {})
    keys, found = refs.resolve(f, "TxRxTest", "x", {"scenario": "same-node", "method": "mpi",
                                                       "buffer": "host"})
    assert refs.unit_mismatches(f, "TxRxTest", keys, found, {"stream_gbps": "Gbps"}) == []
    assert refs.unit_mismatches(f, "TxRxTest", keys, found, {"stream_gbps": "MB/s"}) == [
        "x.yaml:TxRxTest:x.same-node.mpi.host.stream_gbps: reference unit 'Gbps' is not the "
        "performance function's 'MB/s'"
    ]


def test_check_against_wants_every_shaping_variable(tmp_path, specs):
    f = _shaped(tmp_path, {"msg_size": 65536, "bogus": 1})
    text = "\n".join(refs.check_against(f, specs))
    assert "does not say which num_blks, num_cmsgs, nmsg, transport it was measured with" in text
    assert "measured_with names ['bogus']" in text


def test_the_bed_keys_are_no_shaping_variable_and_no_problem(tmp_path, specs):
    """host_cores and bed_nodes say what the figures were measured on (the sweep refuses a
    shared bed's reference at another size), not a test variable: no consistency problem."""
    every = {"msg_size": 65536, "num_blks": 10, "num_cmsgs": 100, "nmsg": 2000,
             "transport": None}
    bed = _shaped(tmp_path, {**every, "host_cores": 2, "bed_nodes": 4})
    assert refs.check_against(bed, specs) == []
    assert refs.BED_KEYS == ("host_cores", "bed_nodes")


def test_every_family_declares_its_shaping_variables(specs):
    for name in ("TxRxTest", "AllToManyTest", "BisectionTest", "OsuPt2PtTest", "OsuMbwMrTest",
                 "OsuGpuAwareTest", "ImbTest", "PerftestWriteBwTest", "AllToManyScalingTest"):
        assert specs[name].shaped_by, name
        for var in specs[name].shaped_by:
            assert var in specs[name].params, (name, var)  # a variable the user can set (-S)


def test_every_measuring_test_is_under_the_reference_policy():
    """Every class that reports a figure goes through the base's reference checks, the sweep
    included (FabricCheck: the policies every test shares; FabricTest adds the binaries)."""
    from fabric_base import FabricCheck

    for mod_name in (*MODULES, "sweep"):
        path = ROOT / "reframe_tests" / f"{mod_name}.py"
        spec = importlib.util.spec_from_file_location(f"fabrictest_rfm_policy_{mod_name}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        for obj in vars(mod).values():
            if not (isinstance(obj, type) and getattr(obj, "_rfm_regression_class_kind", 0)
                    and obj.__module__ == mod.__name__):
                continue
            measures = bool(obj._rfm_perf_fns) or "dynamic_perf_variables" in vars(obj)
            if measures or obj.__name__ == "SweepTest":
                assert issubclass(obj, FabricCheck), obj.__name__

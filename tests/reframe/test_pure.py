"""Pure helpers of the ReFrame suite: the GPU-aware and all-to-many derived checks (on the
Crusher GPU and all-to-many (Cori) notes' own figures), the tx/rx layouts, where OSU/IMB binaries
are found, the settings contract."""

from __future__ import annotations

import importlib.util
import os
import stat
from pathlib import Path

import pytest
from _rfm import ROOT, SETTINGS, SYSTEMS
from scenario_math import (
    MAX_GROWTH,
    device_fraction,
    gpu_aware_ok,
    iteration_growth,
    scaling,
    txrx_layout,
)

from fabrictest.binaries import find_imb, find_osu

# the Crusher GPU notes: d->d 10.9 GB/s/rank, h->h 19.5 GB/s/rank
CRUSHER_D2D, CRUSHER_H2H = 10.9, 19.5
# the all-to-many (Cori) notes: Cori KNL, 512 ranks, -b 32: end-to-end and posting-irecv times
# per -n
CORI_E2E = {2: 0.0829, 8: 0.1895, 16: 0.6427, 32: 6.2541}
CORI_IRECV = {2: 0.0117, 8: 0.0824, 16: 0.4630, 32: 5.6778}


def test_crusher_gpu_notes_fail_the_gpu_aware_check():
    assert device_fraction(CRUSHER_D2D, CRUSHER_H2H) == pytest.approx(0.559, abs=1e-3)
    assert not gpu_aware_ok(CRUSHER_D2D, CRUSHER_H2H, 0.8)
    assert gpu_aware_ok(18.5, CRUSHER_H2H, 0.8)
    with pytest.raises(ValueError):
        device_fraction(1.0, 0.0)


def test_cori_all_to_many_notes_degrade():
    # time per iteration: 0.0415 s at -n 2, 0.195 s at -n 32 (4.7x); irecv 30x
    assert iteration_growth(CORI_E2E) == pytest.approx(4.72, abs=0.01)
    assert iteration_growth(CORI_IRECV) == pytest.approx(30.3, abs=0.1)
    # as three repetitions of the same figures: fails, naming the growth
    figures = scaling([(CORI_E2E, CORI_IRECV)] * 3, 2, 32)
    # posting irecv adds 4.1 iterations' worth (0.0415 s) to each iteration at 32
    assert "grows 5.14x from 2 to 32 iterations" in figures.problem(MAX_GROWTH, 2, 32)
    # as the one run the notes give: no noise measured, still a failure
    assert "posting irecv 5.14x" in scaling([(CORI_E2E, CORI_IRECV)], 2, 32).problem(
        MAX_GROWTH, 2, 32)
    healthy = {n: 0.04 * n for n in (2, 8, 16, 32)}
    assert scaling([(healthy, healthy)] * 3, 2, 32).problem(MAX_GROWTH, 2, 32) is None
    # one run has no measured noise: a growth below the limit is undecided, not a pass
    assert scaling([(healthy, healthy)], 2, 32).problem(MAX_GROWTH, 2, 32).startswith(
        "undecided")
    with pytest.raises(ValueError):
        iteration_growth({2: 1.0})
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(ValueError):
            iteration_growth({2: 1.0, 32: bad})


def _rep(per_iteration_few: float, per_iteration_many: float) -> tuple[dict, dict]:
    times = {2: 2 * per_iteration_few, 32: 32 * per_iteration_many}
    return times, times


def test_growth_is_the_median_repetition_and_the_noise_is_measured():
    # a neighbour slows two repetitions of ten (either way): the median is unmoved
    healthy = [_rep(1e-6, 1e-6)] * 8 + [_rep(1e-6, 9e-6), _rep(9e-6, 1e-6)]
    figures = scaling(healthy, 2, 32)
    assert figures.end_to_end == pytest.approx(1.0) and figures.end_to_end_noise == 0.0
    assert figures.problem(MAX_GROWTH, 2, 32) is None
    # a fault doubles every repetition: it fails, naming the growth
    faulty = [_rep(1e-6, 2e-6)] * 8 + [_rep(1e-6, 9e-6), _rep(9e-6, 1e-6)]
    assert scaling(faulty, 2, 32).problem(MAX_GROWTH, 2, 32).startswith(
        "time per iteration grows 2.00x")
    # repetitions that disagree leave the verdict undecided: a failure, not a pass
    scattered = [_rep(1e-6, g * 1e-6) for g in (0.2, 0.5, 1.0, 1.5, 2.0, 0.3, 1.8, 1.1)]
    problem = scaling(scattered, 2, 32).problem(MAX_GROWTH, 2, 32)
    assert problem.startswith("undecided: the growth from 2 to 32 iterations"), problem
    assert "is within twice its measured noise of 1.5x" in problem
    with pytest.raises(ValueError):
        scaling([], 2, 32)


@pytest.mark.parametrize(
    "scenario, span, nodes, expect",
    [
        ("same-node", "one", 1, (1, 2, 1, 1)),
        ("same-node", "many", 10, (10, 2, 10, 10)),  # SEREN notes: --nrx 10 --nlink 10, ppr:2:node
        ("paired", "one", 10, (2, 1, 1, 1)),  # SEREN notes: 2 nodes slots=1, --nrx 1 --nlink 1
        ("paired", "many", 10, (10, 1, 5, 5)),
        ("paired", "many", 4, (4, 1, 2, 2)),  # SEREN notes: 4 nodes, --nrx 2 --nlink 2
        ("many-to-one", "one", 1, (1, 3, 1, 2)),  # SEREN notes: mpirun -c 3 --nrx 1 --nlink 2
        ("many-to-one", "many", 10, (10, 3, 10, 20)),
        ("pairs-of-three", "one", 3, (3, 1, 1, 2)),
        ("pairs-of-three", "many", 10, (9, 1, 3, 6)),
    ],
)
def test_txrx_layouts(scenario, span, nodes, expect):
    lay = txrx_layout(scenario, span, nodes)
    assert (lay.nodes, lay.ppn, lay.nrx, lay.nlink) == expect
    # --rank-by node: every transmitter's receiver is where the scenario says
    for t in range(lay.nlink):
        tx_rank = lay.nrx + t
        rx_rank = t % lay.nrx
        same = (tx_rank % lay.nodes) == (rx_rank % lay.nodes)
        assert same == (scenario in ("same-node", "many-to-one")), (t, lay)


@pytest.mark.parametrize(
    "scenario, span, nodes",
    [
        ("same-node", "many", 1),
        ("paired", "one", 1),
        ("paired", "many", 3),
        ("many-to-one", "many", 1),
        ("pairs-of-three", "one", 2),
        ("pairs-of-three", "many", 5),
    ],
)
def test_txrx_layout_does_not_fit(scenario, span, nodes):
    with pytest.raises(ValueError, match="needs >="):
        txrx_layout(scenario, span, nodes)


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize(
    "layout",
    [
        "libexec/osu-micro-benchmarks/mpi/one-sided/osu_get_bw",  # 5.x / 7.x install prefix
        "c/mpi/one-sided/osu_get_bw",  # 7.x build tree
        "mpi/one-sided/osu_get_bw",  # 5.x build tree
    ],
)
def test_find_osu_layouts(tmp_path, layout):
    exe = _exe(tmp_path / layout)
    assert find_osu("osu_get_bw", {"OSU_HOME": str(tmp_path), "PATH": ""}) == str(exe)


def test_find_osu_pt2pt_7x_build_tree_and_path(tmp_path):
    exe = _exe(tmp_path / "c/mpi/pt2pt/standard/osu_bw")
    assert find_osu("osu_bw", {"OSU_HOME": str(tmp_path), "PATH": ""}) == str(exe)
    bindir = tmp_path / "bin2"
    onpath = _exe(bindir / "osu_latency")
    assert find_osu("osu_latency", {"PATH": str(bindir)}) == str(onpath)
    assert find_osu("osu_mbw_mr", {"OSU_HOME": str(tmp_path), "PATH": ""}) is None


def test_find_imb(tmp_path):
    assert find_imb({"IMB_HOME": str(tmp_path), "PATH": ""}) is None
    exe = _exe(tmp_path / "bin" / "IMB-MPI1")
    assert find_imb({"IMB_HOME": str(tmp_path), "PATH": ""}) == str(exe)
    exe2 = _exe(tmp_path / "IMB-MPI1")
    assert find_imb({"IMB_HOME": str(tmp_path), "PATH": ""}) == str(exe2)


def _settings():
    spec = importlib.util.spec_from_file_location("fabrictest_settings_under_test", SETTINGS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_settings_merge_every_system_file_local_last():
    mod = _settings()
    names = [s["name"] for s in mod.site_configuration["systems"]]
    for system in SYSTEMS:
        assert system in names
    assert names[-1] == "local", "the catch-all local system must come last"
    files = {
        p.stem for p in (ROOT / "config/reframe/systems").glob("*.py") if not p.name.startswith("_")
    }
    assert files <= set(names) | {"vcluster"}, "every systems/*.py contributes its system"
    modes = {m["name"] for m in mod.site_configuration["modes"]}
    assert {"acceptance", "quick", "regression"} <= modes
    storage = mod.site_configuration["storage"][0]
    assert storage["enable"] is True
    perflog = mod.site_configuration["logging"][0]["handlers_perflog"][0]
    assert perflog["type"] == "filelog" and perflog["basedir"].endswith("perflogs")


def test_settings_contract_both_spellings(tmp_path):
    mod = _settings()
    (tmp_path / "a.py").write_text(
        "ORDER = 5\nsite_configuration = {'systems': [{'name': 'a'}], "
        "'environments': [{'name': 'e'}]}\n"
    )
    (tmp_path / "b.py").write_text("system = {'name': 'b'}\nenvironments = [{'name': 'f'}]\n")
    (tmp_path / "_helper.py").write_text("raise RuntimeError('helpers are not loaded')\n")
    frags = mod.load_system_fragments(tmp_path)
    assert [name for _, name, _ in frags] == ["a", "b"]
    assert frags[0][2]["environments"] == [{"name": "e"}]
    assert frags[1][2]["systems"] == [{"name": "b"}]
    (tmp_path / "c.py").write_text("x = 1\n")
    with pytest.raises(TypeError, match="site_configuration"):
        mod.load_system_fragments(tmp_path)


def test_partition_features_are_the_documented_ones():
    mod = _settings()
    allowed = {"mpi", "rdma", "gpu", "slurm", "spack", "osu", "imb", "perftest", "gpcnet",
               "nccl"}
    for system in mod.site_configuration["systems"]:
        for part in system["partitions"]:
            extra = set(part.get("features", [])) - allowed
            assert not extra or system["name"] == "vcluster", (system["name"], extra)
    by_name = {s["name"]: s for s in mod.site_configuration["systems"]}
    crusher = by_name["crusher"]["partitions"][0]
    assert "gpu" in crusher["features"]
    env = dict(crusher["env_vars"])
    assert env["MPICH_GPU_SUPPORT_ENABLED"] == "1" and env["MPICH_OFI_NIC_POLICY"] == "NUMA"
    assert os.path.basename(str(SETTINGS)) == "settings.py"


def test_posting_growth_is_what_posting_adds_to_an_iteration():
    from scenario_math import posting_growth

    e2e = {2: 2 * 12e-3, 32: 32 * 12e-3}  # the vcluster: 12 ms per iteration
    # posting doubles from 2 to 4 us: its own ratio is 2x, but it adds 2 us to 12 ms
    assert posting_growth(e2e, {2: 2 * 2e-6, 32: 32 * 4e-6}, 2, 32) == pytest.approx(1.0, abs=2e-4)
    # 6 ms more posting per iteration: half an iteration more
    assert posting_growth(e2e, {2: 2 * 2e-6, 32: 32 * 6.002e-3}, 2, 32) == pytest.approx(1.5)
    with pytest.raises(ValueError):
        posting_growth({2: 0.0, 32: 1.0}, {2: 0.0, 32: 1.0}, 2, 32)

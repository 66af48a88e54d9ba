"""`reframe -l` per system: a case is listed where the partition has the features it needs
(+rdma, +gpu) and its static facts allow it (nodes, transports, ranks per node), and only there,
so `reframe -l --system X` lists what runs on X: `-r` on local runs every listed case and skips
none; `-vv` says why a case is not listed; the suite loads without warnings."""

from __future__ import annotations

import ast
import importlib.util
import os
import re

import pytest
from _rfm import ROOT, SETTINGS, SYSTEMS, run_reframe
from scenario_math import txrx_layout

from fabrictest.binaries import benchmark_features

#: families every case of which needs a partition feature (rdma, gpu)
NEEDS = {"OsuGpuAwareTest": "gpu", "NicHealthTest": "rdma", "PerftestWriteBwTest": "rdma",
         "GpuExchangeTest": "gpu", "NcclTest": "gpu"}
#: the features each family needs, the benchmark suites (osu, imb, perftest) included: local
#: and vcluster have those when fabrictest.binaries finds them, +spack systems by declaration
FAMILY_NEEDS = {
    "OsuPt2PtTest": ("osu",),
    "OsuMbwMrTest": ("osu",),
    "OsuCollectiveTest": ("osu",),
    "OsuGpuAwareTest": ("osu", "gpu"),
    "ImbTest": ("imb",),
    "PerftestWriteBwTest": ("rdma", "perftest"),
    "NicHealthTest": ("rdma",),
    "GpuExchangeTest": ("gpu",),
    "NcclTest": ("nccl", "gpu"),
}
#: parameter values that need one
PARAM_NEEDS = {"%method=rdma": "rdma", "%buffer=cuda": "gpu", "%transport=rdma": "rdma"}
#: ... and the features the family of those cases needs besides
PARAM_FAMILY_NEEDS = {"%transport=rdma": ("imb",)}


def system_config(name: str) -> dict:
    """The system's entry of the configuration file."""
    spec = importlib.util.spec_from_file_location("fabrictest_settings_for_listing", SETTINGS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (system,) = [s for s in mod.site_configuration["systems"] if s["name"] == name]
    return system


def system_features(name: str) -> set[str]:
    """The features of the system's partitions, from its configuration file."""
    return {f for part in system_config(name)["partitions"] for f in part.get("features", [])}


def system_nodes(name: str) -> int:
    """The nodes of the system's (one) partition, from its configuration file."""
    (part,) = system_config(name)["partitions"]
    extras = part.get("extras", {})
    return int(extras.get("num_nodes", len(extras.get("nodes", [])) or 1))


def system_transports(name: str) -> set[str]:
    """The transports (extras.transports) the system's (one) partition defines."""
    (part,) = system_config(name)["partitions"]
    return set(part.get("extras", {}).get("transports", {}))


def listed_cases(output: str) -> list[str]:
    """The display names `reframe -l` prints (a test others depend on under them with '^')."""
    found = re.findall(r"^\s*[-^] ?(\w+(?: %\S+)*)(?: ~\S+)?(?: '\w+)? /[0-9a-f]{8}$", output,
                       re.MULTILINE)
    return sorted(set(found))

FAMILIES = (
    "TxRxTest",
    "AllToManyTest",
    "AllToManyScalingTest",
    "BisectionTest",
    "OsuPt2PtTest",
    "OsuMbwMrTest",
    "OsuCollectiveTest",
    "OsuGpuAwareTest",
    "ImbTest",
    "PerftestWriteBwTest",
    "NicHealthTest",
    "GpuExchangeTest",
    "NcclTest",
)


def family_fits(family: str, features, transports) -> bool:
    """The family is listed on a partition with these features and transports (FAMILY_NEEDS;
    IMB: a transport the partition defines, extras.transports)."""
    fits = all(f in features for f in FAMILY_NEEDS.get(family, ("mpi",)))
    return fits and (bool(transports) if family == "ImbTest" else True)


#: families whose listing is checked elsewhere (by scale, node sets or a cluster), and where
LISTED_ELSEWHERE = {
    "CongestionTest": "test_congestion_listing.py",
    "GpcnetNetworkTest": "test_gpcnet_family.py",
    "GpcnetLoadTest": "test_gpcnet_family.py",
    "SweepTest": "test_listing.py",  # test_vcluster_lists_against_its_four_node_default
}


def registered_families() -> set[str]:
    """The classes of reframe_tests/ under `@rfm.simple_test`, read from the source."""
    found = set()
    for path in (ROOT / "reframe_tests").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    ast.unparse(d).endswith("simple_test") for d in node.decorator_list):
                found.add(node.name)
    return found


def test_every_family_has_a_listing_statement():
    """A new family is stated here (FAMILIES, with what it needs in FAMILY_NEEDS), or named
    with the file that checks its listing: it cannot go unchecked for being new."""
    unstated = registered_families() - set(FAMILIES) - set(LISTED_ELSEWHERE)
    assert not unstated, (f"{sorted(unstated)}: add to FAMILIES (and FAMILY_NEEDS, what it "
                          "needs) in tests/reframe/test_listing.py")
    gone = (set(FAMILIES) | set(LISTED_ELSEWHERE)) - registered_families()
    assert not gone, f"{sorted(gone)} in tests/reframe/test_listing.py are no family any more"
    for family, where in LISTED_ELSEWHERE.items():
        assert family in (ROOT / "tests" / "reframe" / where).read_text(), (family, where)


@pytest.mark.parametrize("system", SYSTEMS)
def test_listing(system, tmp_path):
    run = run_reframe(["--system", system, "-l"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    assert "skipping test file" not in run.output, run.output
    features, transports = system_features(system), system_transports(system)
    for family in FAMILIES:
        # a test others depend on is listed under them with '^'
        listed = re.search(rf"[-^] ?{family}\b", run.output) is not None
        assert listed == family_fits(family, features, transports), (family, features,
                                                                      transports)
    cases = [line for line in run.output.splitlines() if line.lstrip().startswith(("-", "^"))]
    for value, feature in PARAM_NEEDS.items():
        with_value = [c for c in cases if value in c.replace(" ", "")]
        needs = (feature, *PARAM_FAMILY_NEEDS.get(value, ()))
        fits = all(f in features for f in needs)
        if value.startswith("%transport="):
            fits = fits and value.split("=")[1] in transports
        assert bool(with_value) == fits, (value, features, transports, with_value[:3])
    for transport in ("tcp", "rdma"):
        imb = [c for c in cases if f"%transport={transport}" in c.replace(" ", "")]
        needs = ("imb", PARAM_NEEDS.get(f"%transport={transport}", "mpi"))
        assert bool(imb) == (transport in transports and all(f in features for f in needs)), (
            transport, transports)
    # a tx/rx scenario is listed where its layout fits the partition's nodes, and only there
    nodes, names = system_nodes(system), listed_cases(run.output)
    for scenario in ("same-node", "paired", "many-to-one", "pairs-of-three"):
        for span in ("one", "many"):
            case = f"TxRxTest %scenario={scenario} %span={span} %method=mpi %buffer=host"
            try:
                fits = bool(txrx_layout(scenario, span, nodes))
            except ValueError:
                fits = False
            assert (case in names) == fits, (system, nodes, case)


def test_local_lists_no_gpu_or_rdma_test(tmp_path):
    """(With a GPU and CUDA here, local is +gpu: tests/reframe/test_local_gpu.py.)"""
    run = run_reframe(["--system", "local", "-l"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    listed = [line for line in run.output.splitlines() if re.match(r"\s*[-^] \w", line)]
    assert any("TxRxTest" in line for line in listed), run.output
    needs = (*NEEDS, *PARAM_NEEDS)
    if "gpu" in system_features("local"):
        needs = (*(n for n, f in NEEDS.items() if f != "gpu"),
                 *(p for p, f in PARAM_NEEDS.items() if f != "gpu"))
    assert [line for line in listed if any(x in line.replace(" ", "") for x in needs)] == []


def test_local_lists_no_osu_or_imb_test_without_a_build(tmp_path):
    """Without OSU_HOME/IMB_HOME (and none on PATH) local has neither +osu nor +imb: their tests
    are not listed (they used to be listed and then skipped, 'osu_bw not found')."""
    env = {"OSU_HOME": "", "IMB_HOME": ""}
    found = benchmark_features({**os.environ, **env})
    if {"osu", "imb"} & set(found):
        pytest.skip(f"this host has {found} on PATH: nothing to check")
    run = run_reframe(["--system", "local", "-l"], tmp_path, timeout=180, env=env)
    assert run.returncode == 0, run.output[-3000:]
    listed = [line for line in run.output.splitlines() if re.match(r"\s*[-^] \w", line)]
    assert any("TxRxTest" in line for line in listed), run.output
    assert [line for line in listed if re.search(r"\b(Osu|Imb)\w*Test\b", line)] == []


def test_gpu_listing_on_crusher(tmp_path):
    run = run_reframe(["--system", "crusher", "-l", "-t", "gpu-aware"], tmp_path, timeout=180)
    assert run.returncode == 0, run.output[-3000:]
    assert "OsuGpuAwareTest %benchmark=osu_bw" in run.output
    assert "OsuGpuAwareTest %benchmark=osu_bibw" in run.output


def stub_benchmarks(tmp_path) -> dict:
    """OSU_HOME and IMB_HOME holding stub programs (listing only: nothing runs them)."""
    osu, imb = tmp_path / "osu" / "bin", tmp_path / "imb"
    for path in (*(osu / n for n in ("osu_latency", "osu_bw", "osu_bibw", "osu_mbw_mr",
                                     "osu_get_bw")), imb / "IMB-MPI1"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
    return {"OSU_HOME": str(osu.parent), "IMB_HOME": str(imb)}


def test_not_listed_where_a_static_fact_forbids_it(tmp_path):
    """What used to be listed and then skipped in setup is not listed, and the reason is logged
    (-vv); where the facts allow it, the same case is listed."""
    # OSU and IMB "installed": the static facts, not a missing build, keep cases off
    run = run_reframe(["--system", "local", "-l", "-vv"], tmp_path / "local", timeout=180,
                      env=stub_benchmarks(tmp_path))
    assert run.returncode == 0, run.output[-3000:]
    names = listed_cases(run.output)
    reasons = {
        "TxRxTest %scenario=paired %span=one %method=mpi %buffer=host":
            "not listed on local:default: paired/one needs >= 2 nodes, partition has 1",
        "OsuMbwMrTest %scope=switch %ranks_per_node=8":
            "not listed on local:default: osu_mbw_mr on one host: 2 x 8 ranks exceed the 2 it "
            "allows (extras.max_host_ranks)",
        "ImbTest %benchmark=PingPong %transport=rdma": "not listed on local:default: has no +rdma",
    }
    for case, why in reasons.items():
        assert case not in names, case
        assert f"{case}: {why}" in run.output, (case, why)
    assert "OsuMbwMrTest %scope=switch %ranks_per_node=1" in names
    assert "ImbTest %benchmark=PingPong %transport=tcp" in names
    seren = run_reframe(["--system", "seren", "-l", "-vv"], tmp_path / "seren", timeout=180)
    names = listed_cases(seren.output)
    assert "TxRxTest %scenario=paired %span=one %method=mpi %buffer=host" in names
    assert "OsuMbwMrTest %scope=switch %ranks_per_node=8" in names
    assert "ImbTest %benchmark=PingPong %transport=rdma" in names
    assert "ImbTest %benchmark=PingPong %transport=tcp" not in names
    assert ("ImbTest %benchmark=PingPong %transport=tcp: not listed on seren:roce: defines no "
            "'tcp' transport (extras.transports)") in seren.output


def test_num_nodes_is_honoured_by_the_listing(tmp_path):
    """-S num_nodes=N is set before the filter runs: local with 3 nodes lists the 3-node case."""
    case = "TxRxTest %scenario=pairs-of-three %span=one %method=mpi %buffer=host"
    plain = run_reframe(["--system", "local", "-l"], tmp_path / "plain", timeout=180)
    assert case not in listed_cases(plain.output)
    # without -vv the reason is in the log file (debug level)
    log = (tmp_path / "plain" / "reframe.log").read_text()
    assert f"{case}: not listed on local:default: pairs-of-three/one needs >= 3 nodes" in log
    three = run_reframe(["--system", "local", "-l", "-S", "num_nodes=3"], tmp_path / "three",
                        timeout=180)
    assert three.returncode == 0, three.output[-3000:]
    assert case in listed_cases(three.output)
    assert "TxRxTest %scenario=pairs-of-three %span=many %method=mpi %buffer=host" not in (
        listed_cases(three.output))


def test_vcluster_lists_against_its_four_node_default(tmp_path):
    """No cluster running: the 4 nodes and 4 ranks per node of the default plan."""
    (tmp_path / "no-vcluster").mkdir()
    run = run_reframe(["--system", "vcluster", "-l"], tmp_path, timeout=180,
                      env={"VCLUSTER_STATE_DIR": str(tmp_path / "no-vcluster"),
                           **stub_benchmarks(tmp_path)})
    assert run.returncode == 0, run.output[-3000:]
    names = listed_cases(run.output)
    assert "TxRxTest %scenario=pairs-of-three %span=one %method=mpi %buffer=host" in names
    assert "TxRxTest %scenario=pairs-of-three %span=many %method=mpi %buffer=host" not in names
    assert "OsuMbwMrTest %scope=switch %ranks_per_node=1" in names
    # 8 ranks per node exceed the default plan's max_ranks_per_node=4
    assert "OsuMbwMrTest %scope=switch %ranks_per_node=8" not in names
    assert "SweepTest %method=mpi" in names and "SweepTest %method=rdma" not in names


def _benchmark_standins(directory) -> dict[str, str]:
    """OSU and IMB stand-ins that replay recorded whole outputs of this kind of machine (rank 0
    prints, every rank exits 0): OSU_HOME/IMB_HOME for a local run that finds every binary."""
    from recordings import read

    directory.mkdir()
    outputs = {name: read(f"{name}-7.4-ompi4.1-local.txt") for name in
               ("osu_latency", "osu_bw", "osu_bibw", "osu_get_bw", "osu_mbw_mr")}
    outputs |= {f"imb-{b}": read(f"imb-2021.7-{b}-ompi4.1-local.txt") for b in
                ("pingpong", "uniband", "biband")}
    for name, text in outputs.items():
        (directory / f"{name}.out").write_text(text)
    for name in (*[n for n in outputs if n.startswith("osu_")], "IMB-MPI1"):
        out = f"{directory}/{name}.out" if name.startswith("osu_") else f"{directory}/imb-$1.out"
        script = directory / name
        script.write_text('#!/bin/bash\nif [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then '
                          f'cat "{out}"; fi\nexit 0\n')
        script.chmod(0o755)
    return {"OSU_HOME": str(directory), "IMB_HOME": str(directory)}


@pytest.mark.slow
@pytest.mark.mpi
def test_local_runs_exactly_what_it_lists(tmp_path):
    """`reframe -l --system local` lists exactly the cases `-r` runs: none is skipped (the OSU
    and IMB binaries are given, stand-ins of recorded outputs: a binary missing on this host is
    the one skip known only at run time)."""
    import shutil

    if shutil.which("mpirun") is None or shutil.which("mpicc") is None:
        pytest.skip("mpirun/mpicc not on PATH: run scripts/install.sh and activate .venv")
    env = _benchmark_standins(tmp_path / "bin")
    listing = run_reframe(["--system", "local", "-l"], tmp_path / "list", timeout=180, env=env)
    assert listing.returncode == 0, listing.output[-3000:]
    hashes = set(re.findall(r" /([0-9a-f]{8})$", listing.output, re.MULTILINE))
    run = run_reframe(["--system", "local", "-r"], tmp_path / "run", timeout=900, env=env)
    skipped = [c["display_name"] for c in run.cases() if c["result"] == "skip"]
    assert skipped == [], (skipped, run.output[-3000:])
    assert "SKIP" not in run.output, run.output[-3000:]
    ran = {c["hashcode"] for c in run.cases()}
    assert ran == hashes, (sorted(ran ^ hashes), listing.output)
    # and every family that fits local ran: stated by FAMILY_NEEDS, not by a count of cases to
    # edit with each new case (ran == hashes above already holds the count to the listing)
    features = system_features("local") | set(benchmark_features({**os.environ, **env}))
    families = {c["display_name"].split()[0] for c in run.cases()}
    expected = {f for f in FAMILIES if family_fits(f, features, system_transports("local"))}
    assert expected <= families, (sorted(expected - families), sorted(families))

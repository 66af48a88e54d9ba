"""OSU, IMB and perftest come from one search (``fabrictest.binaries``), read twice: by the
configuration of the systems without Spack (``local``, ``vcluster``: the partition features
``osu``/``imb``/``perftest``) and by the ``FabricBinaries`` fixture (the path a test runs).
So ``reframe -l --system local`` lists the OSU/IMB tests exactly when ``OSU_HOME``/``IMB_HOME``
hold a build, and their job scripts run the full path found; ``+spack`` systems run the names
(the Spack environment's view is on PATH)."""

from __future__ import annotations

import importlib.util
import os
import re
import stat
from pathlib import Path

import pytest
from _rfm import ROOT, run_reframe

from fabrictest.binaries import (
    OSU_BENCHMARKS,
    benchmark_features,
    find_benchmark,
    find_perftest,
)

SYSTEMS_DIR = ROOT / "config" / "reframe" / "systems"


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _osu_prefix(home: Path, names=OSU_BENCHMARKS) -> Path:
    """An OSU install prefix as Spack's recipe (autotools) lays it out, with stub programs."""
    for name in names:
        kind = "one-sided" if name == "osu_get_bw" else "pt2pt"
        _exe(home / "libexec" / "osu-micro-benchmarks" / "mpi" / kind / name)
    return home


@pytest.fixture
def bare_env(monkeypatch, tmp_path):
    """No OSU_HOME/IMB_HOME and a PATH without any benchmark (this machine has ib_write_bw)."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("OSU_HOME", "")
    monkeypatch.setenv("IMB_HOME", "")
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("VCLUSTER_STATE_DIR", str(tmp_path / "no-vcluster"))
    return tmp_path


def _system(name: str) -> dict:
    """Load config/reframe/systems/<name>.py as settings.py does, in this process."""
    path = SYSTEMS_DIR / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"system_under_test_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.system


# -- the search ---------------------------------------------------------------------------------
def test_features_follow_the_search(tmp_path):
    empty = {"OSU_HOME": "", "IMB_HOME": "", "PATH": ""}
    assert benchmark_features(empty) == []
    osu = _osu_prefix(tmp_path / "osu")
    imb = _exe(tmp_path / "imb" / "IMB-MPI1").parent
    bindir = tmp_path / "bin"
    _exe(bindir / "ib_write_bw")
    assert benchmark_features({"OSU_HOME": str(osu), "PATH": ""}) == ["osu"]
    assert benchmark_features({"IMB_HOME": str(imb), "PATH": ""}) == ["imb"]
    assert benchmark_features({"PATH": str(bindir)}) == ["perftest"]
    full = {"OSU_HOME": str(osu), "IMB_HOME": str(imb), "PATH": str(bindir)}
    assert benchmark_features(full) == ["osu", "imb", "perftest"]
    # a directory that holds no build is no feature
    assert benchmark_features({"OSU_HOME": str(tmp_path / "imb"), "PATH": ""}) == []


def test_find_benchmark_is_the_one_search(tmp_path):
    osu = _osu_prefix(tmp_path / "osu")
    env = {"OSU_HOME": str(osu), "IMB_HOME": str(tmp_path), "PATH": str(tmp_path / "bin")}
    want = osu / "libexec/osu-micro-benchmarks/mpi/one-sided/osu_get_bw"
    assert find_benchmark("osu", "osu_get_bw", env) == str(want)
    assert find_benchmark("imb", "IMB-MPI1", env) is None
    imb = _exe(tmp_path / "bin" / "IMB-MPI1")  # IMB_HOME/bin/IMB-MPI1, and on PATH
    assert find_benchmark("imb", "IMB-MPI1", env) == str(imb)
    assert find_perftest("ib_write_bw", env) is None
    perf = _exe(tmp_path / "bin" / "ib_write_bw")
    assert find_benchmark("perftest", "ib_write_bw", env) == str(perf)


# -- the configuration reads it --------------------------------------------------------------------
@pytest.mark.parametrize("name", ["local", "vcluster"])
def test_partition_features_follow_the_search(bare_env, monkeypatch, name):
    part = _system(name)["partitions"][0]
    assert not {"osu", "imb", "perftest"} & set(part["features"]), part["features"]
    osu = _osu_prefix(bare_env / "osu")
    imb = _exe(bare_env / "imb" / "IMB-MPI1").parent
    monkeypatch.setenv("OSU_HOME", str(osu))
    monkeypatch.setenv("IMB_HOME", str(imb))
    part = _system(name)["partitions"][0]
    assert {"osu", "imb"} <= set(part["features"]), part["features"]
    assert "perftest" not in part["features"]
    monkeypatch.setenv("PATH", str(_exe(bare_env / "bin" / "ib_write_bw").parent))
    assert "perftest" in _system(name)["partitions"][0]["features"]


def test_vcluster_jobs_need_no_path_of_their_own(bare_env, monkeypatch):
    """The tests run full paths: the jobs' PATH is left alone; osc/pt2pt where OSU runs."""
    env = dict(_system("vcluster")["partitions"][0]["env_vars"])
    assert "PATH" not in env and "OMPI_MCA_osc" not in env
    monkeypatch.setenv("OSU_HOME", str(_osu_prefix(bare_env / "osu")))
    monkeypatch.setenv("IMB_HOME", str(_exe(bare_env / "imb" / "IMB-MPI1").parent))
    env = dict(_system("vcluster")["partitions"][0]["env_vars"])
    assert "PATH" not in env
    assert env["OMPI_MCA_osc"] == "pt2pt"


def test_loading_local_changes_nothing_in_the_process(bare_env, monkeypatch):
    monkeypatch.setenv("OSU_HOME", str(_osu_prefix(bare_env / "osu")))
    before = dict(os.environ)
    _system("local")
    assert dict(os.environ) == before


@pytest.mark.parametrize(
    "name, provides",
    [("seren", {"osu", "imb", "perftest"}), ("orfeo", {"osu", "imb", "perftest"}),
     ("slingshot", {"osu", "imb", "perftest"}), ("crusher", {"osu", "imb"}),
     ("cori", {"osu", "imb"}), ("cuda-node", {"osu", "imb"})],
)
def test_spack_systems_declare_what_their_environment_provides(bare_env, name, provides):
    """The fabrictest bundle has +osu +imb by default and perftest with +rdma (the spec in
    config/spack/<system>/spack.yaml); the features say so whatever this host holds."""
    features = set(_system(name)["partitions"][0]["features"])
    assert "spack" in features
    assert features & {"osu", "imb", "perftest"} == provides
    env = (ROOT / "config" / "spack" / name / "spack.yaml").read_text()
    (spec,) = re.findall(r"^  - (fabrictest\S*)", env, re.MULTILINE)
    assert "~osu" not in spec and "~imb" not in spec, spec
    assert ("~rdma" not in spec) == ("perftest" in provides), spec


# -- the fixture gives the tests the path found -----------------------------------------------------
@pytest.fixture(scope="module")
def fake_osu_dry_run(tmp_path_factory):
    """`reframe --dry-run --system local` with an OSU_HOME holding all but osu_latency."""
    tmp = tmp_path_factory.mktemp("fake-osu")
    home = _osu_prefix(tmp / "osu", [n for n in OSU_BENCHMARKS if n != "osu_latency"])
    env = {"OSU_HOME": str(home), "IMB_HOME": str(_exe(tmp / "imb" / "IMB-MPI1").parent)}
    listing = run_reframe(["--system", "local", "-l"], tmp / "list", timeout=180, env=env)
    dry = run_reframe(["--system", "local", "--dry-run", "-n", "Osu", "-n", "Imb"], tmp / "dry",
                      timeout=300, env=env)
    return home, tmp, listing, dry


@pytest.mark.slow
def test_local_lists_osu_and_imb_with_a_build(fake_osu_dry_run):
    _home, _tmp, listing, _dry = fake_osu_dry_run
    assert listing.returncode == 0, listing.output[-3000:]
    for name in ("OsuPt2PtTest %benchmark=osu_bw", "OsuPt2PtTest %benchmark=osu_get_bw",
                 "OsuMbwMrTest %scope=switch %ranks_per_node=1",
                 "ImbTest %benchmark=PingPong %transport=tcp"):
        assert f"- {name} " in listing.output, (name, listing.output[-3000:])


@pytest.mark.slow
def test_local_job_scripts_run_the_path_found(fake_osu_dry_run):
    home, tmp, _listing, dry = fake_osu_dry_run
    pt2pt = home / "libexec/osu-micro-benchmarks/mpi/pt2pt"
    bw = dry.job_script("OsuPt2PtTest %benchmark=osu_bw")
    assert re.search(rf"^mpirun .* {re.escape(str(pt2pt / 'osu_bw'))}( |$)", bw, re.MULTILINE), bw
    get = dry.job_script("OsuPt2PtTest %benchmark=osu_get_bw")
    one_sided = home / "libexec/osu-micro-benchmarks/mpi/one-sided/osu_get_bw"
    assert f" {one_sided}" in get, get
    mbw = dry.job_script("OsuMbwMrTest %scope=switch %ranks_per_node=1")
    assert f" {pt2pt / 'osu_mbw_mr'}" in mbw, mbw
    imb = dry.job_script("ImbTest %benchmark=PingPong %transport=tcp")
    assert f" {tmp / 'imb' / 'IMB-MPI1'} pingpong" in imb, imb


@pytest.mark.slow
def test_a_program_the_search_cannot_find_fails_saying_so(fake_osu_dry_run):
    """A partial build: the partition has +osu, osu_latency is not there: that test fails
    naming what was searched (it used to skip), the others are scripted."""
    _home, _tmp, _listing, dry = fake_osu_dry_run
    assert dry.returncode != 0
    case = dry.case("OsuPt2PtTest %benchmark=osu_latency")
    assert case["result"] == "fail", case
    reason = case.get("fail_reason") or ""
    assert "osu_latency not found for local:default (no +spack): OSU_HOME holds no OSU build" \
        in reason, reason
    assert dry.case("OsuPt2PtTest %benchmark=osu_bw")["result"] == "pass"


@pytest.mark.slow
def test_spack_partitions_run_the_name_whatever_this_host_holds(tmp_path):
    """On +spack partitions the fixture gives the name (the activated environment's view is on
    PATH), never a path found on the host that writes the job script."""
    home = _osu_prefix(tmp_path / "osu")
    env = {"OSU_HOME": str(home), "IMB_HOME": str(_exe(tmp_path / "imb" / "IMB-MPI1").parent),
           "PATH": f"{_exe(tmp_path / 'bin' / 'ib_write_bw').parent}{os.pathsep}"
                   f"{os.environ.get('PATH', '')}"}
    run = run_reframe(["--system", "orfeo", "--dry-run", "-n", "OsuPt2PtTest%benchmark=osu_bw",
                       "-n", "ImbTest%benchmark=PingPong", "-n", "PerftestWriteBwTest"],
                      tmp_path / "dry", timeout=300, env=env)
    assert run.returncode == 0, run.output[-3000:]
    osu = run.job_script("OsuPt2PtTest %benchmark=osu_bw")
    assert re.search(r"^mpirun .* osu_bw( |$)", osu, re.MULTILINE), osu
    imb = run.job_script("ImbTest %benchmark=PingPong %transport=tcp")
    assert re.search(r"^mpirun .* IMB-MPI1 pingpong ", imb, re.MULTILINE), imb
    perf = run.job_script("PerftestWriteBwTest")
    assert '"$SERVER_HOST" ib_write_bw -c UC' in perf, perf
    for script in (osu, imb, perf):
        assert str(tmp_path) not in script, script
        assert 'spack env activate --sh -d' in script, script


@pytest.mark.slow
def test_vcluster_osu_mbw_mr_starts_where_its_token_buckets_stop_counting(tmp_path):
    """vcluster's extras.osu_mbw_min_size: osu_mbw_mr from 64 KiB (smaller windows fit tbf's
    bucket and read above the links); a largest size below it is refused at setup, saying so,
    before any job; -S OsuMbwMrTest.min_size= wins."""
    home = _osu_prefix(tmp_path / "osu", OSU_BENCHMARKS)
    (tmp_path / "no-vcluster").mkdir()
    env = {"OSU_HOME": str(home), "IMB_HOME": "",
           "VCLUSTER_STATE_DIR": str(tmp_path / "no-vcluster")}
    case = "OsuMbwMrTest %scope=switch %ranks_per_node=1"
    quick = run_reframe(["--system", "vcluster", "--dry-run", "-n", "OsuMbwMrTest",
                         "-S", "size_profile=quick"], tmp_path / "quick", timeout=300, env=env)
    assert quick.returncode == 0, quick.output[-3000:]
    assert re.search(r"/osu_mbw_mr -m 65536:65536$", quick.job_script(case), re.MULTILINE)
    asked = run_reframe(["--system", "vcluster", "--dry-run", "-n", "OsuMbwMrTest",
                         "-S", "OsuMbwMrTest.min_size=1024", "-S", "max_size=8192"],
                        tmp_path / "asked", timeout=300, env=env)
    assert asked.returncode == 0, asked.output[-3000:]
    assert re.search(r"/osu_mbw_mr -m 1024:8192$", asked.job_script(case), re.MULTILINE)
    below = run_reframe(["--system", "vcluster", "--dry-run", "-n", "OsuMbwMrTest",
                         "-S", "max_size=4096"], tmp_path / "below", timeout=300, env=env)
    assert below.returncode != 0
    reason = below.case(case).get("fail_reason") or ""
    assert "smallest size 65536 B is above the largest, 4096 B" in reason, reason

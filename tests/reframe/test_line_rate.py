"""Every partition declares its line rate (extras.line_rate_gbps), from what the users' notes
and the systems say, and the families judge a bandwidth by it (reframe_tests/fabric_line_rate.py):
the shared-memory ceiling where the ranks share a host, a transport's own where declared."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from types import SimpleNamespace

import pytest
from _rfm import ROOT, SETTINGS, TESTS_DIR

from fabrictest.gpus import SHARED_MEMORY_GBPS

sys.path.insert(0, str(TESTS_DIR))
from fabric_line_rate import LINE, SHARED, link_rate  # noqa: E402

#: system -> (line rate, per transport): the SEREN tx/rx notes' 100 GbE, the ORFEO IMB notes'
#: InfiniBand 100 Gb/s and 25 GbE bond, two 100 Gb/s HSN NICs per Slingshot node, four 200 Gb/s
#: Slingshot 11 NICs per Crusher node, Cori's Aries (PCIe 3.0 x16), local's shared memory, the
#: vcluster's tbf rate (200 Mbit/s by default), cuda-node's four 400 Gb/s NICs (an example)
EXPECTED = {"seren": (100, {}), "orfeo": (100, {"tcp": 25}), "slingshot": (200, {}),
            "crusher": (800, {}), "cori": (126, {}), "local": (SHARED_MEMORY_GBPS, {}),
            "vcluster": (0.2, {}), "cuda-node": (1600, {})}


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_partition_declares_its_line_rate(monkeypatch, tmp_path):
    monkeypatch.setenv("VCLUSTER_STATE_DIR", str(tmp_path / "no-cluster"))  # the default plan
    settings = _load(SETTINGS, "fabrictest_settings_line_rate")
    seen = {}
    for system in settings.site_configuration["systems"]:
        for part in system["partitions"]:
            rate = part["extras"].get("line_rate_gbps")
            assert isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0, (
                system["name"], part["name"], rate)
            seen[system["name"]] = (rate, part["extras"].get("transport_line_rate_gbps", {}))
    assert seen == EXPECTED


@pytest.mark.parametrize(("rate", "gbps"), [("50mbit", 0.05), ("1gbit", 1.0), (None, None)])
def test_the_vcluster_line_rate_is_its_shaped_rate(monkeypatch, tmp_path, rate, gbps):
    (tmp_path / "cluster.json").write_text(json.dumps({"nodes": 4, "default_rate": rate}))
    monkeypatch.setenv("VCLUSTER_STATE_DIR", str(tmp_path))
    mod = _load(ROOT / "config" / "reframe" / "systems" / "vcluster.py", "vcluster_line_rate")
    extras = mod.system["partitions"][0]["extras"]
    # unshaped veth links (`vcluster up --rate none`) run at the host's memory speed
    assert extras["line_rate_gbps"] == (gbps if gbps is not None else SHARED_MEMORY_GBPS)


def _part(**extras):
    return SimpleNamespace(extras=extras, fullname="sys:part")


def test_link_rate_reads_the_partition_and_the_host():
    assert link_rate(_part(line_rate_gbps=100), one_host=False) == (100.0, LINE)
    assert link_rate(_part(line_rate_gbps=100), one_host=True) == (SHARED_MEMORY_GBPS, SHARED)
    orfeo = _part(line_rate_gbps=100, transport_line_rate_gbps={"tcp": 25})
    assert link_rate(orfeo, False, "tcp") == (25.0, LINE)
    assert link_rate(orfeo, False, "rdma") == (100.0, LINE)


@pytest.mark.parametrize(("extras", "said"), [
    ({}, "extras.line_rate_gbps declares none"),
    ({"line_rate_gbps": 0}, "extras.line_rate_gbps is 0, not a positive number"),
    ({"line_rate_gbps": float("nan")}, "is nan, not a positive number"),
    ({"line_rate_gbps": "100"}, "is '100', not a positive number"),
    ({"line_rate_gbps": 100, "transport_line_rate_gbps": {"tcp": -1}},
     "extras.transport_line_rate_gbps['tcp'] is -1, not a positive number"),
])
def test_a_partition_without_a_line_rate_judges_no_bandwidth(extras, said):
    rate, why = link_rate(_part(**extras), one_host=False, transport="tcp")
    assert rate is None and said in why and "no bandwidth can be judged possible" in why

"""Stage 1's record, as the performance stage reads it (reframe_tests/fabric_stage1.py): a
record it must not trust (missing, foreign, too old, from the future) is not used, and says
why; the health family's options come from the partition's extras. The run itself (a failed
node left out, a case that needs it refused) is tests/vcluster/test_preflight_e2e.py's."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
from fabric_stage1 import FORMAT, MAX_AGE_H, read_record


def _write(path, **fields):
    doc = {"format": FORMAT, "time": time.time(), "nodes": {"node01": "pass"}, **fields}
    path.write_text(json.dumps(doc))
    return path


def test_a_fresh_record_is_used(tmp_path):
    doc, why = read_record(_write(tmp_path / "stage1.json"))
    assert why == "" and doc["nodes"] == {"node01": "pass"}


@pytest.mark.parametrize("fields,why", [
    ({"time": time.time() - (MAX_AGE_H + 1) * 3600}, "h old (used up to 12 h)"),
    ({"time": time.time() + 7200}, "h old"),  # written by a clock ahead: not this run's
    ({"time": float("nan")}, "h old"),
    ({"format": "something-else/1"}, "is not a fabrictest-stage1/1 record"),
    ({"nodes": ["node01"]}, "is not a fabrictest-stage1/1 record"),
    ({"time": "yesterday"}, "is not a fabrictest-stage1/1 record"),
])
def test_a_record_not_to_trust_is_not_used(tmp_path, fields, why):
    doc, said = read_record(_write(tmp_path / "stage1.json", **fields))
    assert doc is None and why in said


def test_no_record_and_an_unreadable_one(tmp_path):
    assert read_record(tmp_path / "none.json") == (
        None, "stage 1 has not run on this partition (no record)")
    (tmp_path / "bad.json").write_text("{ not json")
    doc, why = read_record(tmp_path / "bad.json")
    assert doc is None and "is unreadable" in why


def test_health_family_options_from_extras():
    from health import NicHealthTest

    extras = {"fabric_nics": ["hsn0", "hsn1"], "inventory": "config/inventory.txt",
              "mac_rule": "slingshot-ama", "mgmt_targets": ["ncn-m001:6817", "ncn-m002"],
              "loopback_fraction": 0.9, "no_arp": True, "fabric_subnet": ""}
    stand_in = SimpleNamespace(extra=extras.get, has_feature=lambda name: name == "rdma",
                               topology_file=lambda t: t)
    opts = NicHealthTest.fabric_options(stand_in)
    assert opts[:6] == ["--no-arp", "--nic", "hsn0", "--nic", "hsn1", "--inventory"]
    assert opts[6].endswith("/config/inventory.txt")
    assert opts[7:] == ["--mac-rule", "slingshot-ama", "--mgmt", "ncn-m001:6817,ncn-m002",
                        "--loopback", "0.9"]
    no_rdma = SimpleNamespace(extra={"fabric_nics": ["eth0"], "topology": "t.txt"}.get,
                              has_feature=lambda name: False, topology_file=lambda t: t)
    assert NicHealthTest.fabric_options(no_rdma) == ["--no-rdma", "--nic", "eth0",
                                                     "--topology", "t.txt"]
    none = SimpleNamespace(extra={}.get, has_feature=lambda name: True)
    assert NicHealthTest.fabric_options(none) == []


def _job(nodelist, nodes=None):
    extras = {"nodes": nodes} if nodes is not None else {}
    return SimpleNamespace(job=SimpleNamespace(nodelist=nodelist),
                           current_partition=SimpleNamespace(extras=extras))


@pytest.mark.parametrize("nodelist,nodes,expected", [
    (["node01", "node02"], ["node01", "node02", "node03"], ["node01", "node02"]),
    # ReFrame's squeue scheduler never saw the job run: `scontrol show hostname None`
    (["None"], ["node01", "node02"], []),
    (["None"], None, []),
    (["nid001", "nid002"], None, ["nid001", "nid002"]),
    (None, None, []),
])
def test_the_jobs_nodes_are_only_real_node_names(nodelist, nodes, expected):
    """A CI run's stage-1 record held a node "None" (reported nothing): the health job had
    ended before the squeue scheduler's first poll, and every later case needed one node
    more than had passed."""
    from fabric_placement import job_nodes

    assert job_nodes(_job(nodelist, nodes)) == expected
